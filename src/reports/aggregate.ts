import type { Sql } from '../db/index.ts';
import {
  agentNames, annotationRows, callRows, type CallRow, contactCounts, conversationFacts, creditsSpent, criteriaRows, turnLatencyRows, usageRows, type Scope,
} from '../db/report-data.ts';
import { rollupFigures, type RollupFigures } from '../db/report-rollups.ts';
import { localDay } from '../domain/report-periods.ts';
import type { DataCategory, ReportData } from '../schemas/reports.ts';
import type { ReportRecord } from '../db/reports.ts';

const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;
const rate = (pass: number, fail: number) => (pass + fail === 0 ? null : round(pass / (pass + fail), 4));

/** Every local day of the period, `YYYY-MM-DD` (noon steps never skip or repeat a day across DST changes). */
function daysOf(start: Date, end: Date, tz: string): string[] {
  const days: string[] = [];
  for (let t = start.getTime() + 12 * 3_600_000; t < end.getTime(); t += 24 * 3_600_000) {
    const day = localDay(new Date(t), tz);
    if (days[days.length - 1] !== day) days.push(day);
  }
  return days;
}

function sumBy<T>(rows: T[], key: (r: T) => string, value: (r: T) => number): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of rows) out.set(key(r), (out.get(key(r)) ?? 0) + value(r));
  return out;
}

/** The conversation figures straight from the period's conversations: what the rollups must equal. */
async function directFigures(db: Sql, scope: Scope, withCalls: boolean): Promise<RollupFigures & { calls?: CallRow[] }> {
  const [facts, criteria, contacts, annotations, calls] = await Promise.all([
    conversationFacts(db, scope), criteriaRows(db, scope), contactCounts(db, scope), annotationRows(db, scope),
    withCalls ? callRows(db, scope) : null,
  ]);
  return { facts, criteria, contacts, annotations, ...(calls ? { calls } : {}) };
}

/**
 * The figures of a report over a period: the `raw` artifact, and what the document and the
 * presentation draw. Conversation figures come from the daily rollups (refreshed first), or with
 * `direct` from grouped queries over the conversations; usage and credits from their own tables.
 * The headline and the live inbox annotations are always included.
 */
export async function aggregateReport(
  db: Sql, report: ReportRecord, period: { start: Date; end: Date }, now = new Date(), opts: { direct?: boolean } = {},
): Promise<ReportData> {
  const scope: Scope = { orgId: report.orgId, agentIds: report.widget_ids, start: period.start, end: period.end, timezone: report.timezone };
  const wants = (c: DataCategory) => report.data_categories.includes(c);
  const [{ facts, criteria, contacts, annotations, calls }, usage, spent, latency] = await Promise.all([
    opts.direct ? directFigures(db, scope, wants('calls')) : rollupFigures(db, scope, { calls: wants('calls') }),
    wants('usage') ? usageRows(db, scope) : null,
    wants('usage') ? creditsSpent(db, scope) : null,
    wants('calls') ? turnLatencyRows(db, scope) : null,
  ]);
  const volume = facts.volume;
  const agentIds = [...new Set([...report.widget_ids, ...volume.map((r) => r.agent_id), ...(latency?.by_agent ?? []).map((r) => r.agent_id)])];
  const goalCriteria = criteria.map((c) => ({ ...c, pass_rate: rate(c.pass, c.fail) }));
  const totalPass = criteria.reduce((n, c) => n + c.pass, 0);
  const totalFail = criteria.reduce((n, c) => n + c.fail, 0);
  const ratings = facts.ratings;
  const ratingCount = ratings.reduce((n, r) => n + r.count, 0);
  const data: ReportData = {
    report: { id: report.id, name: report.name, widget_ids: report.widget_ids, data_categories: report.data_categories },
    period: { start: period.start.toISOString(), end: period.end.toISOString(), timezone: report.timezone },
    generated_at: now.toISOString(),
    agents: await agentNames(db, report.orgId, agentIds),
    headline: {
      conversations: volume.reduce((n, r) => n + r.count, 0),
      pass_rate: rate(totalPass, totalFail),
      contacts: contacts.new + contacts.returning,
    },
    annotations: {
      tags: annotations.tags, labels: annotations.labels, ratings,
      average_rating: ratingCount ? round(ratings.reduce((n, r) => n + r.rating * r.count, 0) / ratingCount, 2) : null,
      notes: annotations.notes,
    },
  };
  if (wants('volume')) {
    const byDay = sumBy(volume, (r) => r.day, (r) => r.count);
    data.volume = {
      total: data.headline.conversations,
      by_day: daysOf(period.start, period.end, report.timezone).map((day) => ({ day, count: byDay.get(day) ?? 0 })),
      by_surface: [...sumBy(volume, (r) => r.surface, (r) => r.count)].map(([surface, n]) => ({ surface, count: n })),
      by_agent: [...sumBy(volume, (r) => r.agent_id, (r) => r.count)].map(([agent_id, n]) => ({ agent_id, count: n })),
      by_day_surface_agent: volume,
    };
  }
  if (wants('goals')) data.goals = { criteria: goalCriteria };
  if (wants('outcomes')) data.outcomes = { items: facts.outcomes };
  if (wants('intents')) data.intents = { top: facts.intents.slice(0, 10) };
  if (wants('contacts')) data.contacts = contacts;
  if (calls) {
    const rows = calls;
    const total = rows.reduce((n, r) => n + r.count, 0);
    const talk = rows.reduce((n, r) => n + r.talk_seconds, 0);
    data.calls = {
      total, talk_seconds: talk, average_talk_seconds: total ? round(talk / total, 1) : null, by_outcome: rows,
      latency: { ...latency!.all, by_agent: latency!.by_agent },
    };
  }
  if (usage) {
    const byMinutes = usage.map((u) => ({ surface: u.surface, minutes: round(u.seconds / 60, 2) }));
    data.usage = {
      conversation_minutes: round(usage.reduce((n, u) => n + u.seconds, 0) / 60, 2), credits_spent_cents: spent ?? 0,
      input_tokens: usage.reduce((n, u) => n + u.input_tokens, 0), output_tokens: usage.reduce((n, u) => n + u.output_tokens, 0),
      by_surface: byMinutes,
    };
  }
  return data;
}
