/**
 * `npm run bench` (also `npm run bench:all`): every figure of issue 48's table, each against its target, in one run.
 *
 * Runs each benchmark with its own script, one after the other (each in a process of its own, its output shown
 * as it goes), with BENCH_FIGURES naming a file where each appends its figures (`figure()` in harness.ts), then
 * prints them all as one table. A bench that fails is named in the table with no figure; the run goes on.
 *
 * Environment: BENCH_ONLY (comma-separated names of the list below, default all of them). Each bench's own
 * settings (BENCH_ROUNDS, BENCH_EVENTS, ...) are passed through; the webhooks bench runs open loop at its target
 * pace (BENCH_RATE=400) unless BENCH_RATE is set. Run it on a quiet machine: the ratios are taken within one run
 * (service and floor side by side), but other programs' load still moves latencies.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeFigure, figureMet, say, type Figure } from './harness.ts';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

/** The benches behind the table's rows, in its order, with the settings `npm run bench` gives each. */
const BENCHES: { name: string; rows: string; env?: NodeJS.ProcessEnv }[] = [
  { name: 'api', rows: 'GET /agents/:id against a bare route; idle RSS of npm start' },
  { name: 'webhooks', rows: 'webhooks, open loop', env: { BENCH_RATE: process.env.BENCH_RATE ?? '400', BENCH_CASES: process.env.BENCH_CASES ?? '' } },
  { name: 'campaigns', rows: 'campaign calls/s against bare Temporal workflows/s' },
  { name: 'crawl', rows: 'crawl end to end against the Crawlee engine' },
  { name: 'reports', rows: 'report over 1M conversations' },
  { name: 'eval-answers', rows: 'answer per question, offline' },
];

const only = process.env.BENCH_ONLY?.split(',').map((n) => n.trim()).filter(Boolean);
for (const name of only ?? []) if (!BENCHES.some((b) => b.name === name)) throw new Error(`BENCH_ONLY: unknown bench ${name} (${BENCHES.map((b) => b.name).join(', ')})`);

/** Runs one bench script as `npm run bench:NAME` would, its output inherited; resolves with its exit code. */
function runBench(name: string, env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', `${name}.ts`)], { cwd: ROOT, env, stdio: 'inherit' });
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    child.on('close', (code, signal) => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      resolve(code ?? (signal ? 128 : 1));
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), 'ams-bench-all-'));
const outcomes: { name: string; rows: string; code: number; figures: Figure[]; minutes: number }[] = [];
try {
  for (const bench of BENCHES.filter((b) => !only || only.includes(b.name))) {
    const file = join(dir, `${bench.name}.jsonl`);
    say(`\n===== bench:${bench.name} (${bench.rows}) =====`);
    const started = performance.now();
    const code = await runBench(bench.name, { ...process.env, ...bench.env, BENCH_FIGURES: file });
    let figures: Figure[] = [];
    try {
      figures = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Figure);
    } catch { /* it wrote none */ }
    outcomes.push({ name: bench.name, rows: bench.rows, code, figures, minutes: (performance.now() - started) / 60_000 });
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

say('\n===== issue 48: every figure against its target =====');
for (const o of outcomes) {
  say(`bench:${o.name} (${o.minutes.toFixed(1)} min${o.code === 0 ? '' : `, FAILED with exit code ${o.code}`})`);
  if (!o.figures.length) say('  no figure (see its output above)');
  for (const f of o.figures) say(`  ${describeFigure(f)}`);
}
const all = outcomes.flatMap((o) => o.figures);
const missed = all.filter((f) => !figureMet(f)).length;
say(`\n${all.length - missed} of ${all.length} figures meet their targets; ${outcomes.filter((o) => o.code !== 0).length} bench(es) failed.`);
say('A missed target is a report, not a failure: the exit code is non-zero only when a bench failed.');
process.exit(outcomes.some((o) => o.code !== 0) ? 1 : 0);
