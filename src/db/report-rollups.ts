import type { Db, Sql } from './index.ts';
import type { CallRow, ConversationFacts, Scope } from './report-data.ts';
import { campaignCallFacts, inScope, sortFacts, toCallRows } from './report-data.ts';

/**
 * Report rollups (migration 025): per organization, report time zone, local day and agent, the
 * counts a report draws. A report reads the rollups of the whole local days of its period, and
 * the conversations of the period's partial days (a manual period that does not start or end at
 * midnight) directly, with the same grouping. Triggers mark the UTC hours whose conversations
 * changed; `refreshRollups` turns those marks into stale days and computes the days a report lacks,
 * so the figures are the ones a direct aggregate gives at that moment.
 */

/** Rollup rows (day, agent_id, kind, k1, k2, n, talk) of an organization's real conversations in `[from, to)`. */
function rollupRowsOf(db: Db, orgId: string, tz: string, from: Date, to: Date) {
  return db`
    with c as materialized (
      select c.id, (c.started_at at time zone ${tz})::date as day, c.agent_id, c.surface, coalesce(c.outcome, 'unknown') as outcome,
        nullif(c.intent, '') as intent, c.summary_rating, extract(epoch from (c.ended_at - c.started_at)) as talk,
        c.contact_id, c.criteria_results, c.tags, c.labels
      from conversations c where c.org_id = ${orgId} and c.started_at >= ${from} and c.started_at < ${to} and not c.is_simulated
    )
    select day, agent_id, 'so' as kind, surface as k1, outcome as k2, count(*)::int as n, sum(talk) as talk from c group by 1, 2, 4, 5
    union all select day, agent_id, 'intent', intent, null, count(*)::int, null from c where intent is not null group by 1, 2, 4
    union all select day, agent_id, 'rating', summary_rating::text, null, count(*)::int, null from c where summary_rating is not null group by 1, 2, 4
    union all select day, agent_id, 'criterion', r->>'criterion', r->>'verdict', count(*)::int, null
      from c cross join lateral jsonb_array_elements(case when jsonb_typeof(c.criteria_results) = 'array' then c.criteria_results else '[]' end) r
      where r ? 'criterion' group by 1, 2, 4, 5
    union all select day, agent_id, 'tag', t, null, count(*)::int, null from c cross join lateral unnest(c.tags) t group by 1, 2, 4
    union all select day, agent_id, 'label', l, null, count(*)::int, null from c cross join lateral unnest(c.labels) l group by 1, 2, 4
    union all select c.day, c.agent_id, 'notes', null, null, count(*)::int, null from c join conversation_notes n on n.conversation_id = c.id group by 1, 2
    union all select day, agent_id, 'contact', contact_id::text, null, count(*)::int, null from c where contact_id is not null group by 1, 2, 4`;
}

/** The whole local days of `[start, end)` in `tz` (`YYYY-MM-DD`), and the partial stretches at its ends. */
async function splitPeriod(db: Db, s: Pick<Scope, 'start' | 'end' | 'timezone'>): Promise<{ days: string[]; fringes: [Date, Date][] }> {
  const rows = await db<{ day: string; from: Date; to: Date }[]>`
    with b as (select (${s.start}::timestamptz at time zone ${s.timezone})::date as a,
      ((${s.end}::timestamptz - interval '1 microsecond') at time zone ${s.timezone})::date as z)
    select to_char(d, 'YYYY-MM-DD') as day, d::timestamp at time zone ${s.timezone} as from, (d + 1)::timestamp at time zone ${s.timezone} as to
    from b cross join lateral (select b.a + i as d from generate_series(0, b.z - b.a) i) g
    where d::timestamp at time zone ${s.timezone} >= ${s.start} and (d + 1)::timestamp at time zone ${s.timezone} <= ${s.end}
    order by d`;
  if (rows.length === 0) return { days: [], fringes: [[s.start, s.end]] };
  const fringes: [Date, Date][] = [];
  if (rows[0]!.from > s.start) fringes.push([s.start, rows[0]!.from]);
  if (rows[rows.length - 1]!.to < s.end) fringes.push([rows[rows.length - 1]!.to, s.end]);
  return { days: rows.map((r) => r.day), fringes };
}

/**
 * Brings the rollups of `days` (local days in `tz`) up to date: the changed hours marked since
 * the last refresh make their days stale in every time zone kept, then each stale or missing day
 * of `days` is computed from the conversations. One organization refreshes one at a time.
 */
export async function refreshRollups(sql: Sql, orgId: string, tz: string, days: string[]): Promise<{ computed: number }> {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtext('report-rollups'), hashtext(${orgId}))`;
    await tx`
      with hours as (delete from report_rollup_dirty where org_id = ${orgId} returning hour),
      stale as (
        select distinct z.timezone, x.day from (select distinct hour from hours) h
        cross join (select distinct timezone from report_rollup_days where org_id = ${orgId}) z
        cross join lateral (values ((h.hour at time zone z.timezone)::date),
          (((h.hour + interval '1 hour' - interval '1 microsecond') at time zone z.timezone)::date)) x(day)
      ),
      gone as (delete from report_rollup_days r using stale s where r.org_id = ${orgId} and r.timezone = s.timezone and r.day = s.day returning r.timezone, r.day)
      delete from report_rollups r using gone g where r.org_id = ${orgId} and r.timezone = g.timezone and r.day = g.day`;
    const missing = (await tx<{ day: string }[]>`
      select to_char(d, 'YYYY-MM-DD') as day from unnest(${days}::date[]) d
      where not exists (select 1 from report_rollup_days r where r.org_id = ${orgId} and r.timezone = ${tz} and r.day = d)
      order by d`).map((r) => r.day);
    if (missing.length === 0) return { computed: 0 };
    // Contiguous runs of missing days, each one pass over its conversations.
    const runs: [string, string][] = [];
    for (const day of missing) {
      const last = runs[runs.length - 1];
      if (last && Date.parse(`${day}T00:00:00Z`) - Date.parse(`${last[1]}T00:00:00Z`) === 86_400_000) last[1] = day;
      else runs.push([day, day]);
    }
    await tx`delete from report_rollups where org_id = ${orgId} and timezone = ${tz} and day = any(${missing}::date[])`;
    for (const [first, last] of runs) {
      const [{ from, to }] = await tx<[{ from: Date; to: Date }]>`
        select ${first}::date::timestamp at time zone ${tz} as from, (${last}::date + 1)::timestamp at time zone ${tz} as to`;
      await tx`insert into report_rollups (org_id, timezone, day, agent_id, kind, k1, k2, n, talk)
        select ${orgId}, ${tz}, r.day, r.agent_id, r.kind, r.k1, r.k2, r.n, r.talk from (${rollupRowsOf(tx, orgId, tz, from, to)}) r`;
    }
    await tx`insert into report_rollup_days (org_id, timezone, day) select ${orgId}, ${tz}, d from unnest(${missing}::date[]) d`;
    return { computed: missing.length };
  });
}

/** The figures a report reads, from the rollups of the period's whole days and its partial days' conversations. */
export interface RollupFigures {
  facts: ConversationFacts;
  criteria: { criterion: string; pass: number; fail: number; not_applicable: number }[];
  contacts: { new: number; returning: number };
  annotations: { tags: { tag: string; count: number }[]; labels: { label: string; count: number }[]; notes: number };
}

/**
 * Refreshes the period's days, then reads every rollup-backed figure of the scope; with `calls`, the
 * call figures too (what `callRows` gives): the inbound calls from the rollups' phone rows.
 */
export async function rollupFigures(sql: Sql, s: Scope, opts: { calls?: boolean } = {}): Promise<RollupFigures & { calls?: CallRow[] }> {
  const { days, fringes } = await splitPeriod(sql, s);
  await refreshRollups(sql, s.orgId, s.timezone, days);
  const agents = s.agentIds.length
    ? sql`and u.agent_id = any(${s.agentIds}::uuid[])`
    : sql`and u.agent_id in (select id from agents where org_id = ${s.orgId} and deleted_at is null)`;
  // The rows of one kind in scope: kept days, then partial days computed on the spot.
  const rows = (kind: string) => {
    const parts = [sql`select day, agent_id, k1, k2, n, talk from report_rollups
      where org_id = ${s.orgId} and timezone = ${s.timezone} and kind = ${kind} and day = any(${days}::date[])`];
    for (const [from, to] of fringes) {
      parts.push(sql`select day, agent_id, k1, k2, n, talk from (${rollupRowsOf(sql, s.orgId, s.timezone, from, to)}) f where kind = ${kind}`);
    }
    const union = parts.reduce((a, b) => sql`${a} union all ${b}`);
    return sql`(select * from (${union}) u where true ${agents}) r`;
  };
  const [so, talkRows, intents, ratings, criteria, [contacts], marks, [notes], calls] = await Promise.all([
    sql<{ day: string; agent_id: string; surface: string; outcome: string; count: number }[]>`
      select to_char(day, 'YYYY-MM-DD') as day, agent_id, k1 as surface, k2 as outcome, sum(n)::int as count from ${rows('so')} group by 1, 2, 3, 4`,
    // Talk time is summed exactly (numeric seconds) before it is rounded, as the direct query does.
    sql<{ surface: string; outcome: string; count: number; talk_seconds: string }[]>`
      select k1 as surface, k2 as outcome, sum(n)::int as count, coalesce(sum(talk), 0)::bigint as talk_seconds from ${rows('so')} group by 1, 2`,
    sql<{ intent: string; count: number }[]>`select k1 as intent, sum(n)::int as count from ${rows('intent')} group by 1`,
    sql<{ rating: number; count: number }[]>`select k1::int as rating, sum(n)::int as count from ${rows('rating')} group by 1`,
    sql<{ criterion: string; pass: number; fail: number; not_applicable: number }[]>`
      select k1 as criterion, coalesce(sum(n) filter (where k2 = 'pass'), 0)::int as pass, coalesce(sum(n) filter (where k2 = 'fail'), 0)::int as fail,
        coalesce(sum(n) filter (where k2 = 'not_applicable'), 0)::int as not_applicable
      from ${rows('criterion')} group by 1 order by 1`,
    // Each contact met once: its rows (one per day and agent) are made distinct before contacts is read.
    sql<{ new: number; returning: number }[]>`
      select count(*) filter (where coalesce(ct.first_seen_at, ct.created_at) >= ${s.start})::int as new,
        count(*) filter (where coalesce(ct.first_seen_at, ct.created_at) < ${s.start})::int as returning
      from contacts ct where ct.id in (select r.k1::uuid from ${rows('contact')})`,
    sql<{ kind: 'tag' | 'label'; value: string; count: number }[]>`
      select kind, value, sum(n)::int as count from (select 'tag' as kind, k1 as value, n from ${rows('tag')}
        union all select 'label', k1, n from ${rows('label')}) m group by 1, 2 order by 3 desc, 2`,
    sql<{ n: number }[]>`select coalesce(sum(n), 0)::int as n from ${rows('notes')}`,
    // The phone conversations (as callRows' inbound calls), less those a campaign call made (the
    // campaign_calls of the organization: a call and its conversation are always of the same one),
    // which are counted with their call. An outcome left with no call is no row, as in callRows.
    opts.calls ? sql<{ outcome: string; count: number; talk: string }[]>`
      select outcome, sum(count)::int as count, coalesce(sum(talk), 0) as talk from (
        select r.k2 as outcome, sum(r.n) as count, sum(r.talk) as talk from ${rows('so')} where r.k1 = 'phone' group by 1
        union all
        select coalesce(c.outcome, 'unknown'), -count(*), -sum(extract(epoch from (c.ended_at - c.started_at))) from conversations c
        where ${inScope(sql, s)} and c.surface = 'phone'
          and c.id in (select cc.conversation_id from campaign_calls cc where cc.org_id = ${s.orgId} and cc.conversation_id is not null)
        group by 1
        union all
        select outcome, 1, talk from (${campaignCallFacts(sql, s)}) k
      ) x group by 1 having sum(count) <> 0` : null,
  ]);
  // The direct query's grouping sets, summed from the (day, agent, surface, outcome) rows.
  const facts: ConversationFacts = { volume: [], outcomes: [], intents, surfaceOutcomes: [], ratings };
  const volume = new Map<string, ConversationFacts['volume'][number]>();
  const outcomes = new Map<string, number>();
  for (const r of so) {
    const v = volume.get(`${r.day}|${r.surface}|${r.agent_id}`) ?? { day: r.day, surface: r.surface, agent_id: r.agent_id, count: 0 };
    v.count += r.count;
    volume.set(`${r.day}|${r.surface}|${r.agent_id}`, v);
    outcomes.set(r.outcome, (outcomes.get(r.outcome) ?? 0) + r.count);
  }
  facts.volume = [...volume.values()];
  facts.outcomes = [...outcomes].map(([outcome, count]) => ({ outcome, count }));
  facts.surfaceOutcomes = talkRows.map((r) => ({ surface: r.surface, outcome: r.outcome, count: r.count, talk_seconds: Number(r.talk_seconds) }));
  sortFacts(facts);
  return {
    ...(calls ? { calls: toCallRows(calls) } : {}),
    facts, criteria, contacts: { new: contacts?.new ?? 0, returning: contacts?.returning ?? 0 },
    annotations: {
      tags: marks.filter((m) => m.kind === 'tag').slice(0, 50).map((m) => ({ tag: m.value, count: m.count })),
      labels: marks.filter((m) => m.kind === 'label').slice(0, 50).map((m) => ({ label: m.value, count: m.count })),
      notes: notes?.n ?? 0,
    },
  };
}

/**
 * Deletes up to `batchSize` rollup rows of a deleted agent (a purge step, after its conversations
 * went): what the next refresh of those days would compute anyway, without waiting for a report to read them.
 */
export async function deleteRollupsOfAgentBatch(db: Db, agentId: string, batchSize: number): Promise<number> {
  return (await db`
    delete from report_rollups where ctid in (
      select ctid from report_rollups where agent_id = ${agentId} limit ${batchSize})`).count;
}
