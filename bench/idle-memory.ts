/**
 * Idle memory of `npm start`, in several fresh processes: `node scripts/run.mjs bench idle-memory`.
 *
 * RSS moves by tens of MiB between processes of the same code on this machine (issue 48), so one reading says
 * little. This starts the service (src/main.ts start, compiled, as bench:api does) BENCH_PROCESSES times (default 4),
 * each on a fresh database, waits BENCH_IDLE seconds (default 15) and reads its resident memory from /proc: RSS, its
 * anonymous and file-backed parts, and the threads. With BENCH_BASELINE=<git ref> that commit is built as bench:api
 * builds it and started in alternation with this checkout, so both meet the same load; BENCH_COMPARE_ENV='NAME=value;...'
 * adds this checkout with each set of settings to the alternation. Prints each process and the
 * medians; the target is issue 48's (<= 150 MiB).
 */
import { readFileSync } from 'node:fs';
import { figure, freshDatabase, median, positiveInt, runBenchmark, say, startServiceProcess, startTemporal } from './harness.ts';
import { buildBaseline } from './baseline.ts';
import { getFreePort } from '../src/infra/ports.ts';

const PROCESSES = positiveInt('BENCH_PROCESSES', 4);
const IDLE = positiveInt('BENCH_IDLE', 15);
const TARGET_IDLE_RSS_MB = 150;

interface Reading { rss: number; anon: number; file: number; threads: number }

function readingOf(pid: number): Reading {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, anon: kb('RssAnon') / 1024, file: kb('RssFile') / 1024, threads: kb('Threads') };
}

async function idleReading(temporalAddress: string, main: string | undefined, env: NodeJS.ProcessEnv): Promise<Reading> {
  const service = await startServiceProcess({ databaseUrl: await freshDatabase(), temporalAddress, main, env });
  try {
    await new Promise((r) => setTimeout(r, IDLE * 1000));
    return readingOf(service.pid);
  } finally {
    await service.stop();
  }
}

async function main(): Promise<void> {
  const temporalAddress = await startTemporal();
  const baselineRef = process.env.BENCH_BASELINE;
  const baselineMain = baselineRef ? buildBaseline(baselineRef) : undefined;
  const runs: { name: string; main: string | undefined; env: NodeJS.ProcessEnv; readings: Reading[] }[] = [
    { name: 'this checkout', main: undefined, env: {}, readings: [] },
    ...(baselineMain ? [{ name: `baseline ${baselineRef}`, main: baselineMain, env: {}, readings: [] }] : []),
    // BENCH_COMPARE_ENV='NAME=value NAME=value;NAME=value': this checkout again with each `;`-separated set of settings
    // (a value runs to the next space: NODE_OPTIONS takes one flag here), in the same alternation.
    ...(process.env.BENCH_COMPARE_ENV ?? '').split(';').map((set) => set.trim()).filter(Boolean).map((set) => ({
      name: `this checkout with ${set}`, main: undefined, readings: [] as Reading[],
      env: Object.fromEntries(set.split(/\s+/).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)])),
    })),
  ];
  for (let i = 0; i < PROCESSES; i++) {
    for (const run of runs) {
      // A free port of its own for the SMTP listener (on, as in npm start): a stopping process may still hold the last one's.
      const r = await idleReading(temporalAddress, run.main, { SMTP_LISTEN_PORT: String(await getFreePort()), ...run.env });
      run.readings.push(r);
      say(`${run.name}, process ${i + 1}: RSS ${r.rss.toFixed(0)} MiB (anonymous ${r.anon.toFixed(0)}, file ${r.file.toFixed(0)}), ${r.threads} threads`);
    }
  }
  say(`load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
  for (const run of runs) {
    const m = (f: (r: Reading) => number) => median(run.readings.map(f)).toFixed(0);
    say(`${run.name}: median RSS ${m((r) => r.rss)} MiB (anonymous ${m((r) => r.anon)}, file ${m((r) => r.file)}); each ${run.readings.map((r) => r.rss.toFixed(0)).join(', ')}`);
  }
  figure({ measure: 'idle RSS of npm start (median of fresh processes)', value: median(runs[0]!.readings.map((r) => r.rss)), unit: 'MiB', op: '<=', target: TARGET_IDLE_RSS_MB,
    detail: `${PROCESSES} processes, each ${IDLE} s after it was ready` });
}

await runBenchmark(main);
