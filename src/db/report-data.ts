import type { Db } from './index.ts';

/**
 * The aggregates behind a report, each one grouped query over the period's conversations (real
 * ones: simulations are left out) of the report's agents, or of every live agent of the
 * organization. The period is `[start, end)`; days are counted in the report's time zone.
 */

export interface Scope { orgId: string; agentIds: string[]; start: Date; end: Date; timezone: string }

/** The conversations in scope, as a SQL condition on alias `c`. */
function inScope(db: Db, s: Scope) {
  const agents = s.agentIds.length
    ? db`and c.agent_id = any(${s.agentIds}::uuid[])`
    : db`and c.agent_id in (select id from agents where org_id = ${s.orgId} and deleted_at is null)`;
  return db`c.org_id = ${s.orgId} and c.started_at >= ${s.start} and c.started_at < ${s.end} and not c.is_simulated ${agents}`;
}

export async function volumeRows(db: Db, s: Scope): Promise<{ day: string; surface: string; agent_id: string; count: number }[]> {
  return db<{ day: string; surface: string; agent_id: string; count: number }[]>`
    select to_char(c.started_at at time zone ${s.timezone}, 'YYYY-MM-DD') as day, c.surface, c.agent_id, count(*)::int as count
    from conversations c where ${inScope(db, s)}
    group by 1, 2, 3 order by 1, 2, 3`;
}

export async function criteriaRows(db: Db, s: Scope): Promise<{ criterion: string; pass: number; fail: number; not_applicable: number }[]> {
  return db<{ criterion: string; pass: number; fail: number; not_applicable: number }[]>`
    select r->>'criterion' as criterion,
      count(*) filter (where r->>'verdict' = 'pass')::int as pass,
      count(*) filter (where r->>'verdict' = 'fail')::int as fail,
      count(*) filter (where r->>'verdict' = 'not_applicable')::int as not_applicable
    from conversations c cross join lateral jsonb_array_elements(c.criteria_results) r
    where ${inScope(db, s)} and jsonb_typeof(c.criteria_results) = 'array' and r ? 'criterion'
    group by 1 order by 1`;
}

export async function outcomeRows(db: Db, s: Scope): Promise<{ outcome: string; count: number }[]> {
  return db<{ outcome: string; count: number }[]>`
    select coalesce(c.outcome, 'unknown') as outcome, count(*)::int as count
    from conversations c where ${inScope(db, s)} group by 1 order by 2 desc, 1`;
}

export async function topIntentRows(db: Db, s: Scope, limit = 10): Promise<{ intent: string; count: number }[]> {
  return db<{ intent: string; count: number }[]>`
    select c.intent, count(*)::int as count
    from conversations c where ${inScope(db, s)} and c.intent is not null and c.intent <> ''
    group by 1 order by 2 desc, 1 limit ${limit}`;
}

/** Contacts met in the period: new (first seen in it) and returning (seen before it). */
export async function contactCounts(db: Db, s: Scope): Promise<{ new: number; returning: number }> {
  const [row] = await db<{ new: number; returning: number }[]>`
    select count(distinct ct.id) filter (where coalesce(ct.first_seen_at, ct.created_at) >= ${s.start})::int as new,
      count(distinct ct.id) filter (where coalesce(ct.first_seen_at, ct.created_at) < ${s.start})::int as returning
    from conversations c join contacts ct on ct.id = c.contact_id where ${inScope(db, s)}`;
  return { new: row?.new ?? 0, returning: row?.returning ?? 0 };
}

/** Voice calls (inbound phone and campaign surfaces) by outcome, with talk time in whole seconds. */
export async function callRows(db: Db, s: Scope): Promise<{ outcome: string; count: number; talk_seconds: number }[]> {
  const rows = await db<{ outcome: string; count: number; talk_seconds: string }[]>`
    select coalesce(c.outcome, 'unknown') as outcome, count(*)::int as count,
      coalesce(sum(extract(epoch from (c.ended_at - c.started_at))) filter (where c.ended_at is not null), 0)::bigint as talk_seconds
    from conversations c where ${inScope(db, s)} and c.surface in ('phone', 'campaign')
    group by 1 order by 2 desc, 1`;
  return rows.map((r) => ({ outcome: r.outcome, count: r.count, talk_seconds: Number(r.talk_seconds) }));
}

/** Recorded usage (kept after deletes) in seconds by surface. */
export async function usageRows(db: Db, s: Scope): Promise<{ surface: string; seconds: number }[]> {
  const agents = s.agentIds.length ? db`and agent_id = any(${s.agentIds}::uuid[])` : db``;
  const rows = await db<{ surface: string; seconds: string }[]>`
    select surface, coalesce(sum(duration_seconds), 0)::bigint as seconds from usage_records
    where org_id = ${s.orgId} and created_at >= ${s.start} and created_at < ${s.end} ${agents}
    group by 1 order by 1`;
  return rows.map((r) => ({ surface: r.surface, seconds: Number(r.seconds) }));
}

/**
 * Credits the organization spent in the period (the ledger is per organization, not per agent):
 * charges (entries with a reference) less the refunds of failed report runs.
 */
export async function creditsSpent(db: Db, s: Scope): Promise<number> {
  const [row] = await db<{ spent: string }[]>`
    select coalesce(-sum(amount_cents) filter (where amount_cents < 0 and reference is not null), 0)
      - coalesce(sum(amount_cents) filter (where reason = 'report_run_refund'), 0) as spent
    from credit_ledger where org_id = ${s.orgId} and created_at >= ${s.start} and created_at < ${s.end}`;
  return Math.max(0, Number(row?.spent ?? 0));
}

/** Live inbox annotations of the period's conversations: tags, labels, ratings and the number of notes. */
export async function annotationRows(db: Db, s: Scope) {
  const [tags, labels, ratings, [notes]] = await Promise.all([
    db<{ tag: string; count: number }[]>`select t as tag, count(*)::int as count from conversations c cross join unnest(c.tags) t
      where ${inScope(db, s)} group by 1 order by 2 desc, 1 limit 50`,
    db<{ label: string; count: number }[]>`select l as label, count(*)::int as count from conversations c cross join unnest(c.labels) l
      where ${inScope(db, s)} group by 1 order by 2 desc, 1 limit 50`,
    db<{ rating: number; count: number }[]>`select c.summary_rating::int as rating, count(*)::int as count from conversations c
      where ${inScope(db, s)} and c.summary_rating is not null group by 1 order by 1`,
    db<{ n: number }[]>`select count(*)::int as n from conversation_notes n join conversations c on c.id = n.conversation_id where ${inScope(db, s)}`,
  ]);
  return { tags, labels, ratings, notes: notes?.n ?? 0 };
}

/** The names of agents (deleted ones too, as their figures may remain). */
export async function agentNames(db: Db, orgId: string, ids: string[]): Promise<{ id: string; name: string }[]> {
  if (ids.length === 0) return [];
  return db<{ id: string; name: string }[]>`select id, name from agents where org_id = ${orgId} and id = any(${ids}::uuid[]) order by name, id`;
}

/** The number of conversations in scope (the headline, when `volume` is not asked for). */
export async function conversationCount(db: Db, s: Scope): Promise<number> {
  const [row] = await db<{ n: number }[]>`select count(*)::int as n from conversations c where ${inScope(db, s)}`;
  return row?.n ?? 0;
}
