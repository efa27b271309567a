import type { DataCategory, ReportData } from '../schemas/reports.ts';

/**
 * One section per category as both renderers draw it: a chart (categories on one axis, one or
 * more series of numbers) and a table. Every number shown comes from the run's raw figures, so
 * the PDF, the PPTX and the JSON agree.
 */
export interface Section {
  category: DataCategory;
  title: string;
  subtitle: string;
  chart: { kind: 'bar' | 'line'; labels: string[]; series: { name: string; values: number[] }[]; unit?: string };
  table: { columns: string[]; rows: (string | number)[][] };
}

const pct = (rate: number | null) => (rate === null ? 'n/a' : `${(rate * 100).toFixed(1)}%`);

/** The title of each category, as the document and the presentation show it. */
export const CATEGORY_TITLES: Record<DataCategory, string> = {
  volume: 'Conversation volume', goals: 'Goals', outcomes: 'Outcomes', intents: 'Top intents',
  contacts: 'Contacts', calls: 'Calls', usage: 'Usage',
};

/** The sections of a report's figures, in the order of its `data_categories`. */
export function sectionsOf(data: ReportData): Section[] {
  const agentName = new Map(data.agents.map((a) => [a.id, a.name]));
  const nameOf = (id: string) => agentName.get(id) ?? id.slice(0, 8);
  const sections: Section[] = [];
  for (const category of data.report.data_categories as DataCategory[]) {
    const title = CATEGORY_TITLES[category];
    if (category === 'volume' && data.volume) {
      const v = data.volume;
      const surfaces = v.by_surface.map((s) => s.surface);
      const byKey = new Map(v.by_day_surface_agent.map((r) => [`${r.day}|${r.surface}`, 0]));
      for (const r of v.by_day_surface_agent) byKey.set(`${r.day}|${r.surface}`, (byKey.get(`${r.day}|${r.surface}`) ?? 0) + r.count);
      sections.push({
        category, title, subtitle: `${v.total} conversations, per day and surface`,
        chart: {
          kind: 'bar', labels: v.by_day.map((d) => d.day.slice(5)),
          series: surfaces.length ? surfaces.map((s) => ({ name: s, values: v.by_day.map((d) => byKey.get(`${d.day}|${s}`) ?? 0) }))
            : [{ name: 'conversations', values: v.by_day.map((d) => d.count) }],
        },
        table: {
          columns: ['Agent', 'Conversations'],
          rows: [...v.by_agent.map((a) => [nameOf(a.agent_id), a.count]), ...v.by_surface.map((s) => [`surface: ${s.surface}`, s.count])],
        },
      });
    } else if (category === 'goals' && data.goals) {
      const g = data.goals.criteria;
      sections.push({
        category, title, subtitle: `Pass rate per criterion (not applicable left out); overall ${pct(data.headline.pass_rate)}`,
        chart: { kind: 'bar', labels: g.map((c) => c.criterion), series: [{ name: 'pass rate %', values: g.map((c) => (c.pass_rate === null ? 0 : Math.round(c.pass_rate * 1000) / 10)) }], unit: '%' },
        table: { columns: ['Criterion', 'Pass', 'Fail', 'N/A', 'Pass rate'], rows: g.map((c) => [c.criterion, c.pass, c.fail, c.not_applicable, pct(c.pass_rate)]) },
      });
    } else if (category === 'outcomes' && data.outcomes) {
      const o = data.outcomes.items;
      sections.push({
        category, title, subtitle: 'Conversations by outcome',
        chart: { kind: 'bar', labels: o.map((x) => x.outcome), series: [{ name: 'conversations', values: o.map((x) => x.count) }] },
        table: { columns: ['Outcome', 'Conversations'], rows: o.map((x) => [x.outcome, x.count]) },
      });
    } else if (category === 'intents' && data.intents) {
      const t = data.intents.top;
      sections.push({
        category, title, subtitle: 'The ten most frequent intents',
        chart: { kind: 'bar', labels: t.map((x) => x.intent), series: [{ name: 'conversations', values: t.map((x) => x.count) }] },
        table: { columns: ['Intent', 'Conversations'], rows: t.map((x) => [x.intent, x.count]) },
      });
    } else if (category === 'contacts' && data.contacts) {
      const c = data.contacts;
      sections.push({
        category, title, subtitle: 'People met in the period: first seen in it, or seen before',
        chart: { kind: 'bar', labels: ['new', 'returning'], series: [{ name: 'contacts', values: [c.new, c.returning] }] },
        table: { columns: ['Contacts', 'Count'], rows: [['new', c.new], ['returning', c.returning]] },
      });
    } else if (category === 'calls' && data.calls) {
      const c = data.calls;
      sections.push({
        category, title, subtitle: `${c.total} calls, ${c.talk_seconds} s of talk time`,
        chart: { kind: 'bar', labels: c.by_outcome.map((x) => x.outcome), series: [{ name: 'calls', values: c.by_outcome.map((x) => x.count) }] },
        table: { columns: ['Outcome', 'Calls', 'Talk seconds'], rows: c.by_outcome.map((x) => [x.outcome, x.count, x.talk_seconds]) },
      });
    } else if (category === 'usage' && data.usage) {
      const u = data.usage;
      sections.push({
        category, title, subtitle: `${u.conversation_minutes} conversation minutes, ${u.credits_spent_cents} credits spent`,
        chart: { kind: 'bar', labels: u.by_surface.map((x) => x.surface), series: [{ name: 'minutes', values: u.by_surface.map((x) => x.minutes) }] },
        table: {
          columns: ['Usage', 'Value'],
          rows: [...u.by_surface.map((x) => [`minutes: ${x.surface}`, x.minutes]), ['conversation minutes', u.conversation_minutes], ['credits spent', u.credits_spent_cents]],
        },
      });
    }
  }
  return sections;
}

/** The few lines a mail and a cover page lead with. */
export function headlineLines(data: ReportData): string[] {
  return [
    `Conversations: ${data.headline.conversations}`,
    `Goal pass rate: ${pct(data.headline.pass_rate)}`,
    `Contacts: ${data.headline.contacts}`,
  ];
}
