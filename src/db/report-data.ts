import type { Db } from './index.ts';

/**
 * The aggregates behind a report, each one grouped query over the period's conversations (real
 * ones: simulations are left out) of the report's agents, or of every live agent of the
 * organization. The period is `[start, end)`; days are counted in the report's time zone.
 * A report reads its conversation figures from the rollups (report-rollups.ts); these direct
 * queries are what the rollups are checked against (test/reports.test.ts, the benchmark).
 */

export interface Scope { orgId: string; agentIds: string[]; start: Date; end: Date; timezone: string }

/** The conversations in scope, as a SQL condition on alias `c`. */
export function inScope(db: Db, s: Scope) {
  const agents = s.agentIds.length
    ? db`and c.agent_id = any(${s.agentIds}::uuid[])`
    : db`and c.agent_id in (select id from agents where org_id = ${s.orgId} and deleted_at is null)`;
  return db`c.org_id = ${s.orgId} and c.started_at >= ${s.start} and c.started_at < ${s.end} and not c.is_simulated ${agents}`;
}

export interface ConversationFacts {
  volume: { day: string; surface: string; agent_id: string; count: number }[];
  outcomes: { outcome: string; count: number }[];
  intents: { intent: string; count: number }[];
  /** Per surface and outcome, with talk time in whole seconds (calls are the `phone` and `campaign` rows). */
  surfaceOutcomes: { surface: string; outcome: string; count: number; talk_seconds: number }[];
  ratings: { rating: number; count: number }[];
}

/**
 * Volume, outcomes, intents, call outcomes and ratings in one pass over the period's conversations:
 * one grouping set each (the rows of a set are told apart by `grouping()`'s bit mask).
 */
export async function conversationFacts(db: Db, s: Scope): Promise<ConversationFacts> {
  const rows = await db<{ g: number; day: string; surface: string; agent_id: string; outcome: string; intent: string | null; rating: number | null; count: number; talk_seconds: string }[]>`
    select grouping(day, surface, agent_id, outcome, intent, rating) as g, day, surface, agent_id, outcome, intent, rating,
      count(*)::int as count, coalesce(sum(talk), 0)::bigint as talk_seconds
    from (
      select to_char(c.started_at at time zone ${s.timezone}, 'YYYY-MM-DD') as day, c.surface, c.agent_id,
        coalesce(c.outcome, 'unknown') as outcome, nullif(c.intent, '') as intent, c.summary_rating::int as rating,
        extract(epoch from (c.ended_at - c.started_at)) as talk
      from conversations c where ${inScope(db, s)}
    ) x
    group by grouping sets ((day, surface, agent_id), (outcome), (intent), (surface, outcome), (rating))`;
  // grouping() sets a bit, from the left (32) to the right (1), for each column NOT in the row's set.
  const facts: ConversationFacts = { volume: [], outcomes: [], intents: [], surfaceOutcomes: [], ratings: [] };
  for (const r of rows) {
    if (r.g === 0b000111) facts.volume.push({ day: r.day, surface: r.surface, agent_id: r.agent_id, count: r.count });
    else if (r.g === 0b111011) facts.outcomes.push({ outcome: r.outcome, count: r.count });
    else if (r.g === 0b111101 && r.intent !== null) facts.intents.push({ intent: r.intent, count: r.count });
    else if (r.g === 0b101011) facts.surfaceOutcomes.push({ surface: r.surface, outcome: r.outcome, count: r.count, talk_seconds: Math.round(Number(r.talk_seconds)) });
    else if (r.g === 0b111110 && r.rating !== null) facts.ratings.push({ rating: r.rating, count: r.count });
  }
  sortFacts(facts);
  return facts;
}

/** The order of each list of facts: volume by day, surface and agent, surface outcomes by name; the others by count, then name. */
export function sortFacts(facts: ConversationFacts): void {
  const byCount = <T extends { count: number }>(key: (x: T) => string) => (a: T, b: T) => b.count - a.count || (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
  const tuple = (x: { day: string; surface: string; agent_id: string }) => [x.day, x.surface, x.agent_id];
  facts.volume.sort((a, b) => {
    const [x, y] = [tuple(a), tuple(b)];
    for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! < y[i]! ? -1 : 1;
    return 0;
  });
  facts.outcomes.sort(byCount((x) => x.outcome));
  facts.intents.sort(byCount((x) => x.intent));
  facts.ratings.sort((a, b) => a.rating - b.rating);
  const pair = (x: { surface: string; outcome: string }) => `${x.surface}\u0000${x.outcome}`;
  facts.surfaceOutcomes.sort((a, b) => (pair(a) < pair(b) ? -1 : pair(a) > pair(b) ? 1 : 0));
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

/** Contacts met in the period: new (first seen in it) and returning (seen before it). */
export async function contactCounts(db: Db, s: Scope): Promise<{ new: number; returning: number }> {
  const [row] = await db<{ new: number; returning: number }[]>`
    select count(distinct ct.id) filter (where coalesce(ct.first_seen_at, ct.created_at) >= ${s.start})::int as new,
      count(distinct ct.id) filter (where coalesce(ct.first_seen_at, ct.created_at) < ${s.start})::int as returning
    from conversations c join contacts ct on ct.id = c.contact_id where ${inScope(db, s)}`;
  return { new: row?.new ?? 0, returning: row?.returning ?? 0 };
}

/** A call figure: the calls of one outcome and their talk time in whole seconds. */
export interface CallRow { outcome: string; count: number; talk_seconds: number }

/**
 * The campaign calls dialed in the period, one `(outcome, talk)` row each (see `callRows`): answered
 * or not, talk time `answered_at` to the end (still going: to now), the conversation's outcome or the
 * call's status when nobody answered.
 */
export function campaignCallFacts(db: Db, s: Scope) {
  const agents = s.agentIds.length
    ? db`and k.agent_id = any(${s.agentIds}::uuid[])`
    : db`and k.agent_id in (select id from agents where org_id = ${s.orgId} and deleted_at is null)`;
  return db`
    select case when cc.answered_at is null then cc.status else coalesce(c.outcome, 'unknown') end as outcome,
      case when cc.answered_at is null then 0
        else coalesce(cc.duration_seconds, greatest(0, extract(epoch from (coalesce(cc.ended_at, now()) - cc.answered_at)))) end as talk
    from campaign_calls cc join campaigns k on k.id = cc.campaign_id left join conversations c on c.id = cc.conversation_id
    where cc.org_id = ${s.orgId} and cc.started_at >= ${s.start} and cc.started_at < ${s.end} ${agents}
      and (c.id is null or not c.is_simulated)`;
}

/** `(outcome, count, talk)` rows as call figures: talk rounded to whole seconds, most calls first. */
export function toCallRows(rows: { outcome: string; count: number; talk: string }[]): CallRow[] {
  return rows.map((r) => ({ outcome: r.outcome, count: r.count, talk_seconds: Math.round(Number(r.talk)) }))
    .sort((a, b) => b.count - a.count || (a.outcome < b.outcome ? -1 : 1));
}

/**
 * The period's calls by outcome, from the calls' own records (issue 42, D5). A campaign call is
 * counted when it was dialed in the period, answered or not: its talk time is the carrier's,
 * `answered_at` to its end (still going: to now), and its outcome is its conversation's, or its
 * status when nobody answered (`busy`, `no_answer`, `failed`, `canceled`). An inbound call is its
 * phone conversation (the service answers when the call arrives), from its start to its end.
 * A report reads the inbound calls from the rollups (`rollupFigures`); this is what they must equal.
 */
export async function callRows(db: Db, s: Scope): Promise<CallRow[]> {
  return toCallRows(await db<{ outcome: string; count: number; talk: string }[]>`
    select outcome, count(*)::int as count, coalesce(sum(talk), 0) as talk from (
      select coalesce(c.outcome, 'unknown') as outcome, extract(epoch from (c.ended_at - c.started_at)) as talk
      from conversations c
      where ${inScope(db, s)} and c.surface = 'phone' and not exists (select 1 from campaign_calls cc where cc.conversation_id = c.id)
      union all
      select outcome, talk from (${campaignCallFacts(db, s)}) k
    ) x group by 1`);
}

export interface LatencyFigures { turns: number; p50_ms: number | null; p95_ms: number | null }

/**
 * Voice latency (issue 44): end of the caller's speech → first audio byte of the agent's answer,
 * p50 and p95 over the streamed turns with audio of the period's conversations, for the whole scope
 * and per agent (one pass, two grouping sets). Percentiles do not add up, so the rollups cannot hold them.
 */
export async function turnLatencyRows(db: Db, s: Scope): Promise<{ all: LatencyFigures; by_agent: (LatencyFigures & { agent_id: string })[] }> {
  const rows = await db<{ g: number; agent_id: string | null; turns: number; p50: number | null; p95: number | null }[]>`
    select grouping(t.agent_id) as g, t.agent_id, count(*)::int as turns,
      percentile_cont(0.5) within group (order by extract(epoch from t.first_audio_at - t.speech_ended_at) * 1000) as p50,
      percentile_cont(0.95) within group (order by extract(epoch from t.first_audio_at - t.speech_ended_at) * 1000) as p95
    from voice_turn_timings t join conversations c on c.id = t.conversation_id
    where ${inScope(db, s)} and t.first_audio_at is not null
    group by grouping sets ((), (t.agent_id))`;
  const figures = (r: { turns: number; p50: number | null; p95: number | null } | undefined): LatencyFigures => ({
    turns: r?.turns ?? 0, p50_ms: r?.p50 == null ? null : Math.round(r.p50), p95_ms: r?.p95 == null ? null : Math.round(r.p95),
  });
  return {
    all: figures(rows.find((r) => r.g === 1)),
    by_agent: rows.filter((r) => r.g === 0).map((r) => ({ agent_id: r.agent_id!, ...figures(r) }))
      .sort((a, b) => (a.agent_id < b.agent_id ? -1 : 1)),
  };
}

/** Recorded usage (kept after deletes) in seconds by surface. */
export async function usageRows(db: Db, s: Scope): Promise<{ surface: string; seconds: number; input_tokens: number; output_tokens: number }[]> {
  const agents = s.agentIds.length ? db`and agent_id = any(${s.agentIds}::uuid[])` : db``;
  const rows = await db<{ surface: string; seconds: string; input_tokens: string; output_tokens: string }[]>`
    select surface, coalesce(sum(duration_seconds), 0)::bigint as seconds,
      coalesce(sum(input_tokens), 0)::bigint as input_tokens, coalesce(sum(output_tokens), 0)::bigint as output_tokens from usage_records
    where org_id = ${s.orgId} and created_at >= ${s.start} and created_at < ${s.end} ${agents}
    group by 1 order by 1`;
  return rows.map((r) => ({ surface: r.surface, seconds: Number(r.seconds), input_tokens: Number(r.input_tokens), output_tokens: Number(r.output_tokens) }));
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

/** Live inbox tags and labels of the period's conversations (one pass), and the number of notes. */
export async function annotationRows(db: Db, s: Scope) {
  const [marks, [notes]] = await Promise.all([
    db<{ kind: 'tag' | 'label'; value: string; count: number }[]>`select u.kind, u.value, count(*)::int as count
      from conversations c cross join lateral (select 'tag' as kind, t as value from unnest(c.tags) t union all select 'label', l from unnest(c.labels) l) u
      where ${inScope(db, s)} and (cardinality(c.tags) > 0 or cardinality(c.labels) > 0)
      group by 1, 2 order by 3 desc, 2`,
    db<{ n: number }[]>`select count(*)::int as n from conversation_notes n join conversations c on c.id = n.conversation_id where ${inScope(db, s)}`,
  ]);
  return {
    tags: marks.filter((m) => m.kind === 'tag').slice(0, 50).map((m) => ({ tag: m.value, count: m.count })),
    labels: marks.filter((m) => m.kind === 'label').slice(0, 50).map((m) => ({ label: m.value, count: m.count })),
    notes: notes?.n ?? 0,
  };
}

/** The names of agents (deleted ones too, as their figures may remain). */
export async function agentNames(db: Db, orgId: string, ids: string[]): Promise<{ id: string; name: string }[]> {
  if (ids.length === 0) return [];
  return db<{ id: string; name: string }[]>`select id, name from agents where org_id = ${orgId} and id = any(${ids}::uuid[]) order by name, id`;
}
