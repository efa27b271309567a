import type { Db } from './index.ts';

/**
 * What an agent's evaluated conversations say, computed on demand by SQL over the evaluation
 * results (never cached): the last EVALUATED_WINDOW evaluated conversations of the agent, real
 * ones only (simulations left out), newest first.
 */

export const EVALUATED_WINDOW = 500;
/** Evidence ids kept per suggestion. */
const EVIDENCE_IDS = 20;

const recent = (db: Db, agentId: string) => db`
  select id, intent, outcome, extracted_data, evaluated_at from conversations
  where agent_id = ${agentId} and evaluation_status = 'completed' and not is_simulated
  order by evaluated_at desc nulls last, id desc
  limit ${EVALUATED_WINDOW}`;

export interface Recurring { kind: 'intent' | 'field'; label: string; count: number; conversationIds: string[] }

/**
 * Intents and extracted fields that recur (at least `minCount` conversations) and that no rule
 * covers: a rule covers a label when its name is the label, or its condition mentions it (any
 * case). Most frequent first.
 */
export async function recurringUncovered(db: Db, agentId: string, rules: { name: string; condition: string }[], minCount: number): Promise<Recurring[]> {
  const names = rules.map((r) => r.name.toLowerCase());
  const conditions = rules.map((r) => r.condition.toLowerCase());
  const rows = await db<{ kind: 'intent' | 'field'; label: string; count: number; ids: string[] }[]>`
    with recent as (${recent(db, agentId)}),
    labels as (
      select 'intent' as kind, intent as label, id, evaluated_at from recent
      where intent is not null and intent <> '' and intent not in ('other', 'general_question', 'unknown', 'none')
      union all
      select 'field', key, id, evaluated_at from recent, jsonb_each(extracted_data) as e(key, value)
      where jsonb_typeof(extracted_data) = 'object' and e.value <> 'null'::jsonb
    ),
    grouped as (
      select kind, label, count(distinct id)::int as count,
        (array_agg(id order by evaluated_at desc nulls last, id desc))[1:${EVIDENCE_IDS}] as ids
      from labels group by kind, label
    )
    select kind, label, count, ids::text[] as ids from grouped g
    where count >= ${minCount}
      and not exists (
        select 1 from unnest(${names}::text[], ${conditions}::text[]) as r(name, condition)
        where r.name = lower(g.label) or r.name = lower(g.kind || '_' || g.label)
          or position(lower(g.label) in r.condition) > 0 or position(replace(lower(g.label), '_', ' ') in r.condition) > 0
      )
    order by count desc, kind, label`;
  return rows.map((r) => ({ kind: r.kind, label: r.label, count: r.count, conversationIds: r.ids }));
}

export interface IntegrationEvidence {
  /** Conversations whose intent is about booking (book, appointment, schedule, reservation, demo). */
  bookingIntents: number;
  /** Conversations where the visitor asked for a person (outcome `handoff_requested`). */
  handoffRequests: number;
  /** Conversations whose extracted data holds an e-mail address or a phone number. */
  contactCaptures: number;
  /** Whether the agent has an enabled transfer rule. */
  hasTransferRule: boolean;
  /** Whether the organization has an enabled webhook subscribed to conversation events. */
  hasConversationWebhook: boolean;
}

/** The counts and configuration the integration rules read, in one round trip. */
export async function integrationEvidence(db: Db, orgId: string, agentId: string): Promise<IntegrationEvidence> {
  const [row] = await db<{ booking: number; handoff: number; contact: number; transfer: boolean; webhook: boolean }[]>`
    with recent as (${recent(db, agentId)})
    select
      (select count(*)::int from recent where intent ~* '(book|appointment|schedul|reserv|demo|meeting)') as booking,
      (select count(*)::int from recent where outcome = 'handoff_requested') as handoff,
      (select count(*)::int from recent where exists (
        select 1 from jsonb_each_text(case when jsonb_typeof(extracted_data) = 'object' then extracted_data else '{}'::jsonb end) as e(key, value)
        where e.value ~* '^[^@\\s]+@[^@\\s]+\\.[a-z]{2,}$' or e.value ~ '^\\+[1-9][0-9]{6,14}$' or e.key ~* '(email|e_mail|phone|mobile|tel)')) as contact,
      exists (select 1 from transfer_rules where agent_id = ${agentId} and enabled) as transfer,
      exists (select 1 from webhook_endpoints where org_id = ${orgId} and enabled
        and events && array['*', 'conversation.ended', 'conversation.evaluated']::text[]) as webhook`;
  return {
    bookingIntents: row!.booking, handoffRequests: row!.handoff, contactCaptures: row!.contact,
    hasTransferRule: row!.transfer, hasConversationWebhook: row!.webhook,
  };
}
