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
  /**
   * `unit: '%'` is a rate on a 0 to 100 axis; `whole` marks counts (axes step by whole numbers);
   * `empty` when there is nothing to draw (no category, or every value 0): the renderers say so
   * instead of drawing a lone 0 tick.
   */
  chart: { kind: 'bar' | 'line'; labels: string[]; series: { name: string; values: number[] }[]; unit?: string; whole?: boolean; empty?: boolean };
  table: { columns: string[]; rows: (string | number)[][] };
}

/** What an empty chart says, in the PDF and the PPTX. */
export const NO_DATA = 'No data yet';

const pct = (rate: number | null) => (rate === null ? 'n/a' : `${(rate * 100).toFixed(1)}%`);

/** Words that stay as written when a code is turned into words. */
const WORDS: Record<string, string> = { sms: 'SMS', faq: 'FAQ', url: 'URL', api: 'API', n_a: 'N/A', no_answer: 'No answer' };

/**
 * A code as a business owner reads it: `handoff_requested` is "Handoff requested", `book_demo`
 * "Book demo", `unknown` "Unknown", `sms` "SMS". Text that is not a code (a criterion, an intent
 * written as words) is left as it is. The raw artifact keeps the codes.
 */
export function wordsOf(code: string): string {
  if (WORDS[code]) return WORDS[code]!;
  if (!/^[a-z][a-z0-9]*(?:[_-][a-z0-9]+)*$/.test(code)) return code;
  const words = code.split(/[_-]/).map((w) => WORDS[w] ?? w).join(' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Marks a chart with nothing to draw, and whole-number charts (counts). */
function finish(chart: Section['chart']): Section['chart'] {
  const values = chart.series.flatMap((s) => s.values);
  return { ...chart, empty: chart.labels.length === 0 || values.every((v) => v === 0), whole: chart.unit !== '%' && values.every((v) => Number.isInteger(v)) };
}

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
          series: surfaces.length ? surfaces.map((s) => ({ name: wordsOf(s), values: v.by_day.map((d) => byKey.get(`${d.day}|${s}`) ?? 0) }))
            : [{ name: 'conversations', values: v.by_day.map((d) => d.count) }],
        },
        table: {
          columns: ['Agent', 'Conversations'],
          rows: [...v.by_agent.map((a) => [nameOf(a.agent_id), a.count]), ...v.by_surface.map((s) => [`Surface: ${wordsOf(s.surface)}`, s.count])],
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
        chart: { kind: 'bar', labels: o.map((x) => wordsOf(x.outcome)), series: [{ name: 'conversations', values: o.map((x) => x.count) }] },
        table: { columns: ['Outcome', 'Conversations'], rows: o.map((x) => [wordsOf(x.outcome), x.count]) },
      });
    } else if (category === 'intents' && data.intents) {
      const t = data.intents.top;
      sections.push({
        category, title, subtitle: 'The ten most frequent intents',
        chart: { kind: 'bar', labels: t.map((x) => wordsOf(x.intent)), series: [{ name: 'conversations', values: t.map((x) => x.count) }] },
        table: { columns: ['Intent', 'Conversations'], rows: t.map((x) => [wordsOf(x.intent), x.count]) },
      });
    } else if (category === 'contacts' && data.contacts) {
      const c = data.contacts;
      sections.push({
        category, title, subtitle: 'People met in the period: first seen in it, or seen before',
        chart: { kind: 'bar', labels: ['New', 'Returning'], series: [{ name: 'contacts', values: [c.new, c.returning] }] },
        table: { columns: ['Contacts', 'Count'], rows: [['New', c.new], ['Returning', c.returning]] },
      });
    } else if (category === 'calls' && data.calls) {
      const c = data.calls;
      const l = c.latency;
      const ms = (v: number | null) => (v === null ? 'n/a' : `${v} ms`);
      const latency = l.turns ? `; voice latency p50 ${ms(l.p50_ms)}, p95 ${ms(l.p95_ms)}` : '';
      sections.push({
        category, title, subtitle: `${c.total} ${c.total === 1 ? 'call' : 'calls'}, ${c.talk_seconds} s of talk time${latency}`,
        chart: { kind: 'bar', labels: c.by_outcome.map((x) => wordsOf(x.outcome)), series: [{ name: 'calls', values: c.by_outcome.map((x) => x.count) }] },
        table: {
          columns: ['Outcome', 'Calls', 'Talk seconds'],
          rows: [...c.by_outcome.map((x) => [wordsOf(x.outcome), x.count, x.talk_seconds]),
            // Voice latency per agent (streamed calls): end of the caller's speech to the first audio byte.
            ...l.by_agent.map((a) => [`Voice latency: ${nameOf(a.agent_id)}`, `p50 ${ms(a.p50_ms)}`, `p95 ${ms(a.p95_ms)}`])],
        },
      });
    } else if (category === 'usage' && data.usage) {
      const u = data.usage;
      sections.push({
        category, title, subtitle: `${u.conversation_minutes} conversation minutes, ${u.credits_spent_cents} credits spent`,
        chart: { kind: 'bar', labels: u.by_surface.map((x) => wordsOf(x.surface)), series: [{ name: 'minutes', values: u.by_surface.map((x) => x.minutes) }] },
        table: {
          columns: ['Usage', 'Value'],
          rows: [...u.by_surface.map((x) => [`Minutes: ${wordsOf(x.surface)}`, x.minutes]), ['Conversation minutes', u.conversation_minutes], ['Credits spent', u.credits_spent_cents],
            ['LLM tokens in', u.input_tokens ?? 0], ['LLM tokens out', u.output_tokens ?? 0]],
        },
      });
    }
  }
  return sections.map((section) => ({ ...section, chart: finish(section.chart) }));
}

/** The few lines a mail and a cover page lead with. */
export function headlineLines(data: Pick<ReportData, 'headline'>): string[] {
  return [
    `Conversations: ${data.headline.conversations}`,
    `Goal pass rate: ${pct(data.headline.pass_rate)}`,
    `Contacts: ${data.headline.contacts}`,
  ];
}
