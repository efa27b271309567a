/**
 * Not a benchmark: renders the README's sample report with the service's own renderers,
 * `node scripts/run.mjs bench report-samples [out dir, default docs/reports]` (here because
 * scripts/ may import only src/infra). Writes `sample-report.pdf`,
 * `sample-report.pptx` and `sample-report.json` from fixed, made-up figures (a month of two
 * agents), then, when poppler's `pdftoppm` is installed (`apt-get install poppler-utils`), one PNG
 * per page: `cover.png` and `<category>.png`.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { renderArtifact } from '../src/reports/render.ts';
import { sectionsOf } from '../src/reports/figures.ts';
import { DATA_CATEGORIES, type ReportData } from '../src/schemas/reports.ts';

const out = resolve(process.argv[2] ?? 'docs/reports');
const front = '0193c2a0-0000-7000-8000-000000000001';
const night = '0193c2a0-0000-7000-8000-000000000002';

/** A made-up November: a weekly rhythm, more web than phone, a few SMS and emails. */
function sampleData(): ReportData {
  const days = Array.from({ length: 30 }, (_, i) => `2026-11-${String(i + 1).padStart(2, '0')}`);
  const rows: NonNullable<ReportData['volume']>['by_day_surface_agent'] = [];
  days.forEach((day, i) => {
    const weekday = (i + 6) % 7; // 2026-11-01 is a Sunday
    const busy = weekday < 5 ? 1 : 0.45;
    rows.push({ day, surface: 'web', agent_id: front, count: Math.round((38 + (i % 5) * 4) * busy) });
    rows.push({ day, surface: 'phone', agent_id: night, count: Math.round((14 + (i % 3) * 3) * busy) });
    if (i % 2 === 0) rows.push({ day, surface: 'sms', agent_id: night, count: 4 + (i % 4) });
    if (i % 3 === 0) rows.push({ day, surface: 'email', agent_id: front, count: 3 });
  });
  const total = rows.reduce((n, r) => n + r.count, 0);
  const sum = (f: (r: (typeof rows)[number]) => boolean) => rows.filter(f).reduce((n, r) => n + r.count, 0);
  const criteria = [
    { criterion: 'Collected an email', pass: 612, fail: 188, not_applicable: 240 },
    { criterion: 'Booked a visit', pass: 301, fail: 143, not_applicable: 596 },
    { criterion: 'Answered from the site', pass: 955, fail: 61, not_applicable: 24 },
    { criterion: 'Stayed polite', pass: 1031, fail: 4, not_applicable: 5 },
  ].map((c) => ({ ...c, pass_rate: Math.round((c.pass / (c.pass + c.fail)) * 10_000) / 10_000 }));
  const pass = criteria.reduce((n, c) => n + c.pass, 0);
  const fail = criteria.reduce((n, c) => n + c.fail, 0);
  return {
    report: { id: '0193c2a0-0000-7000-8000-0000000000aa', name: 'Monthly review', widget_ids: [], data_categories: [...DATA_CATEGORIES] },
    period: { start: '2026-11-01T00:00:00.000Z', end: '2026-12-01T00:00:00.000Z', timezone: 'UTC' },
    generated_at: '2026-12-01T06:00:04.512Z',
    agents: [{ id: front, name: 'Front desk' }, { id: night, name: 'Night line' }],
    headline: { conversations: total, pass_rate: Math.round((pass / (pass + fail)) * 10_000) / 10_000, contacts: 498 },
    volume: {
      total,
      by_day: days.map((day) => ({ day, count: sum((r) => r.day === day) })),
      by_surface: ['web', 'phone', 'sms', 'email'].map((surface) => ({ surface, count: sum((r) => r.surface === surface) })),
      by_agent: [front, night].map((agent_id) => ({ agent_id, count: sum((r) => r.agent_id === agent_id) })),
      by_day_surface_agent: rows,
    },
    goals: { criteria },
    outcomes: { items: [{ outcome: 'resolved', count: 702 }, { outcome: 'handoff_requested', count: 181 }, { outcome: 'unresolved', count: 97 }, { outcome: 'abandoned', count: 60 }] },
    intents: {
      top: [['opening hours', 211], ['pricing', 174], ['book a visit', 133], ['parking', 88], ['refund', 61], ['delivery times', 54],
        ['gift cards', 40], ['job openings', 23], ['accessibility', 19], ['wifi', 12]].map(([intent, count]) => ({ intent: intent as string, count: count as number })),
    },
    contacts: { new: 341, returning: 157 },
    calls: {
      total: 402, talk_seconds: 58_540, average_talk_seconds: 145.6,
      by_outcome: [{ outcome: 'resolved', count: 261, talk_seconds: 35_930 }, { outcome: 'transferred', count: 88, talk_seconds: 16_890 }, { outcome: 'abandoned', count: 53, talk_seconds: 5_720 }],
      latency: {
        turns: 1_184, p50_ms: 612, p95_ms: 788,
        by_agent: [{ agent_id: front, turns: 903, p50_ms: 598, p95_ms: 771 }, { agent_id: night, turns: 281, p50_ms: 655, p95_ms: 812 }],
      },
    },
    usage: { conversation_minutes: 1_733.5, credits_spent_cents: 1_325, by_surface: [{ surface: 'phone', minutes: 975.67 }, { surface: 'web', minutes: 612.3 }, { surface: 'sms', minutes: 98.2 }, { surface: 'email', minutes: 47.33 }] },
    annotations: { tags: [{ tag: 'vip', count: 31 }, { tag: 'follow-up', count: 18 }], labels: [{ label: 'sales', count: 64 }], ratings: [{ rating: 4, count: 22 }, { rating: 5, count: 40 }], average_rating: 4.65, notes: 27 },
  };
}

await mkdir(out, { recursive: true });
const data = sampleData();
for (const format of ['document', 'presentation', 'raw'] as const) {
  const artifact = await renderArtifact(format, data);
  const ext = artifact.fileName.split('.').pop()!;
  await writeFile(join(out, `sample-report.${ext}`), artifact.bytes);
}
try {
  execFileSync('pdftoppm', ['-png', '-r', '70', join(out, 'sample-report.pdf'), join(out, 'page')]);
  const names = ['cover', ...sectionsOf(data).map((s) => s.category)];
  for (const [i, name] of names.entries()) await rename(join(out, `page-${i + 1}.png`), join(out, `${name}.png`));
  process.stdout.write(`wrote ${names.length} PNG pages and the sample report to ${out}\n`);
} catch (err) {
  process.stdout.write(`wrote the sample report to ${out}; no PNGs (${(err as Error).message.split('\n')[0]})\n`);
}
