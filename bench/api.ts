/**
 * API overhead benchmark: `npm run bench:api` (or `node --import tsx bench/api.ts`).
 *
 * Starts the service as `npm start` runs it (src/main.ts: API and workers in one process, its own
 * process) on a fresh PostgreSQL database and an in-memory Temporal dev server, and:
 *
 * 1. prints the service process's resident memory once it has started and sat idle for
 *    BENCH_IDLE seconds (target: <= 250 MiB);
 * 2. measures an authenticated `GET /api/v1/rest/agents/:id` through it and through a bare
 *    Koa 3 + @koa/router route reading the same row with postgres.js from the same database
 *    (bench/bare-agent-app.ts, also a process of its own). The ratios are what the service's
 *    request path (request id, logging, error mapping, auth, rate limit, validation, response
 *    mapping) costs over the floor of any server answering this request.
 *    Targets: service rps / bare rps >= 0.6 and service p99 / bare p99 <= 1.5.
 *
 * Autocannon runs in this process against both, one after the other, so the load generator is
 * the same for each. Run it on a quiet machine: other programs' load moves both figures.
 *
 * Environment: BENCH_DURATION (seconds measured per target, default 10), BENCH_WARMUP (seconds,
 * default 3), BENCH_CONNECTIONS (default 50), BENCH_IDLE (seconds idle before the memory reading,
 * default 10), BENCH_CPU_PROF (a folder: the service process writes a V8 CPU profile there, see
 * bench/README.md), TEST_PG_URL (PostgreSQL server to use, default
 * postgres://postgres@127.0.0.1:5432/postgres; an embedded one is started when it does not answer).
 */
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { cleanUp, cpuSecondsOf, freshDatabase, memoryOf, onCleanup, positiveInt, say, spawnServer, startServiceProcess, startTemporal } from './harness.ts';
import { createSql } from '../src/db/index.ts';
import { getFreePort } from '../src/infra/ports.ts';
import { createOrganization } from '../src/auth/keys.ts';

/** The part of autocannon's result this script reads (the package ships no types). */
interface Histogram { average: number; mean: number; p50: number; p90: number; p99: number; max: number }
interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  resets: number;
  mismatches: number;
  statusCodeStats: Record<string, { count: number }>;
  latency: Histogram;
  requests: Histogram & { total: number; sent: number };
}
interface AutocannonOptions {
  url: string;
  connections: number;
  duration: number;
  headers?: Record<string, string>;
}
/** A running load test: awaitable, and stoppable early (it then resolves with what it measured). */
type AutocannonRun = PromiseLike<AutocannonResult> & { stop(): void };
type Autocannon = (opts: AutocannonOptions) => AutocannonRun;

// autocannon is CommonJS without type declarations: load it through require and type what we use.
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const DURATION = positiveInt('BENCH_DURATION', 10);
const WARMUP = positiveInt('BENCH_WARMUP', 3);
const CONNECTIONS = positiveInt('BENCH_CONNECTIONS', 50);
const IDLE = positiveInt('BENCH_IDLE', 10);
const TARGET_RPS_RATIO = 0.6;
const TARGET_P99_RATIO = 1.5;
const TARGET_IDLE_RSS_MB = 250;

async function expectJson(res: Response, status: number, what: string): Promise<any> {
  const text = await res.text();
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status}: ${text}`);
  return JSON.parse(text);
}

let running: AutocannonRun | null = null;
let interrupted = false;

async function load(url: string, duration: number, headers: Record<string, string>): Promise<AutocannonResult> {
  if (interrupted) throw new Error('interrupted');
  running = autocannon({ url, connections: CONNECTIONS, duration, headers });
  try {
    return await running;
  } finally {
    running = null;
  }
}

/** A load result and the CPU the server process spent per request meanwhile (robust to other programs' load). */
type Measured = AutocannonResult & { cpuMsPerRequest: number };

/** Warm-up run (discarded), then the measured one. */
async function measure(label: string, url: string, headers: Record<string, string>, pid: number): Promise<Measured> {
  if (interrupted) throw new Error('interrupted');
  say(`${label}: warming up ${WARMUP} s, then measuring ${DURATION} s at ${CONNECTIONS} connections`);
  checkClean(`${label} (warm-up)`, await load(url, WARMUP, headers));
  const cpuBefore = cpuSecondsOf(String(pid)) ?? 0;
  const result = await load(url, DURATION, headers);
  const cpu = (cpuSecondsOf(String(pid)) ?? 0) - cpuBefore;
  checkClean(label, result);
  return { ...result, cpuMsPerRequest: (cpu * 1000) / Math.max(1, result.requests.total) };
}

const failures: string[] = [];

/** Every response must be a 2xx and every request must complete: anything else voids the figures. */
function checkClean(label: string, r: AutocannonResult): void {
  const problems = [
    r.non2xx && `${r.non2xx} non-2xx responses (${Object.entries(r.statusCodeStats).map(([code, s]) => `${code}: ${s.count}`).join(', ')})`,
    r.errors && `${r.errors} errors`,
    r.timeouts && `${r.timeouts} timeouts`,
    r.resets && `${r.resets} resets`,
  ].filter(Boolean);
  if (problems.length) failures.push(`${label}: ${problems.join('; ')}`);
}

function report(service: Measured, bare: Measured): void {
  const rpsRatio = service.requests.average / bare.requests.average;
  const p99Ratio = service.latency.p99 / bare.latency.p99;
  const rows = [
    ['', 'requests/s', 'p50 ms', 'p99 ms', 'CPU ms/request', 'requests', 'non-2xx', 'errors'],
    ...([['service', service], ['bare Koa + postgres.js', bare]] as const).map(([name, r]) => [
      name, r.requests.average.toFixed(0), String(r.latency.p50), String(r.latency.p99), r.cpuMsPerRequest.toFixed(3),
      String(r.requests.total), String(r.non2xx), String(r.errors + r.timeouts),
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const line = (row: string[]) => row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  say();
  say(`GET /api/v1/rest/agents/:id, ${CONNECTIONS} connections, ${DURATION} s each, each server in its own process`);
  say(line(rows[0]!));
  say(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows.slice(1)) say(line(row));
  say();
  const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
  say(`rps ratio (service / bare): ${rpsRatio.toFixed(3)}  target >= ${TARGET_RPS_RATIO}: ${verdict(rpsRatio >= TARGET_RPS_RATIO)}`);
  say(`CPU per request (service / bare): ${(service.cpuMsPerRequest / bare.cpuMsPerRequest).toFixed(2)} (the server process only; steadier than rps on a busy machine)`);
  say(bare.latency.p99 > 0
    ? `p99 ratio (service / bare): ${p99Ratio.toFixed(3)}  target <= ${TARGET_P99_RATIO}: ${verdict(p99Ratio <= TARGET_P99_RATIO)}`
    : 'p99 ratio (service / bare): n/a, the bare p99 is below autocannon\'s 1 ms resolution');
}

async function main(): Promise<void> {
  say('Starting PostgreSQL database and Temporal dev server...');
  const [databaseUrl, temporalAddress] = await Promise.all([freshDatabase(), startTemporal()]);
  const profileDir = process.env.BENCH_CPU_PROF;
  const service = await startServiceProcess({
    databaseUrl, temporalAddress,
    // Far above what the run can send, so the limiter counts but never refuses.
    env: { RATE_LIMIT_PER_MINUTE: '1000000000' },
    nodeArgs: profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [],
  });
  say(`service process (pid ${service.pid}) ready at ${service.url}; idle ${IDLE} s`);
  await new Promise((r) => setTimeout(r, IDLE * 1000));
  const idle = memoryOf(service.pid);

  const sql = createSql(databaseUrl, { max: 1 });
  onCleanup('bench connection', () => sql.end({ timeout: 5 }));
  const org = await sql.begin((tx) => createOrganization(tx, `bench-${randomBytes(3).toString('hex')}`));
  const headers = { authorization: `Bearer ${org.token}` };
  const created = await expectJson(await fetch(`${service.url}/api/v1/rest/agents`, {
    method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Bench agent' }),
  }), 201, 'POST /agents');
  const path = `/api/v1/rest/agents/${created.id as string}`;
  await expectJson(await fetch(service.url + path, { headers }), 200, `GET ${path}`);

  const bare = await spawnServer('bare Koa app', ['bench/bare-agent-app.ts'], { port: await getFreePort(), readyPath: '/healthz', env: { DATABASE_URL: databaseUrl } });
  const bareRow = await expectJson(await fetch(bare.url + path), 200, `bare GET ${path}`);
  if (bareRow.id !== created.id) throw new Error('the bare app does not read the same row as the service');

  const serviceResult = await measure('service', service.url + path, headers, service.pid);
  const bareResult = await measure('bare Koa', bare.url + path, headers, bare.pid);
  const loaded = memoryOf(service.pid);
  report(serviceResult, bareResult);
  say();
  if (idle && loaded) {
    say(`service process RSS: ${idle.rssMb.toFixed(0)} MiB idle after start-up (target <= ${TARGET_IDLE_RSS_MB}: ${idle.rssMb <= TARGET_IDLE_RSS_MB ? 'met' : 'MISSED'}), `
      + `${loaded.rssMb.toFixed(0)} MiB after the load, peak ${loaded.peakRssMb.toFixed(0)} MiB; bare app peak ${memoryOf(bare.pid)?.peakRssMb.toFixed(0) ?? '?'} MiB`);
  } else {
    say('service process RSS: not readable here (needs Linux /proc)');
  }
  if (profileDir) say(`CPU profile of the service process: written to ${profileDir} when it stops`);
}

// Ctrl-C ends the load at once; the run then stops at its next step and cleans up as usual, so the
// database is dropped. A second Ctrl-C kills the process outright.
process.once('SIGINT', () => {
  process.stderr.write('\ninterrupted: cleaning up\n');
  interrupted = true;
  running?.stop();
});

let exitCode = 0;
try {
  await main();
  if (interrupted) throw new Error('interrupted');
} catch (err) {
  if (!interrupted) process.stderr.write(`benchmark failed: ${(err as Error).stack ?? String(err)}\n`);
  exitCode = interrupted ? 130 : 1;
}
if (failures.length && !interrupted) {
  process.stderr.write(`\nBENCHMARK INVALID: requests failed\n${failures.map((f) => `  ${f}`).join('\n')}\n`);
  exitCode = 1;
}
if (!(await cleanUp())) exitCode = exitCode || 1;
process.exit(exitCode);
