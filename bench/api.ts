/**
 * API overhead benchmark: `npm run bench:api` (or `node --import tsx bench/api.ts`).
 *
 * Measures an authenticated `GET /api/v1/rest/agents/:id` against the real service (API only,
 * on a fresh PostgreSQL database and an in-memory Temporal dev server) and compares it with a
 * bare Koa 3 + @koa/router app that returns the same JSON body from memory. The ratio is what
 * the service's own request path (request id, error mapping, auth, rate limit, validation, one
 * database read) costs over the framework floor.
 *
 * Targets: service rps / bare rps >= 0.5 and service p99 / bare p99 <= 2.
 *
 * Both servers and autocannon run in THIS process, on one event loop, as the issue asks ("same
 * process, same load tool"): the load generator's own CPU is charged equally to both sides, so
 * the ratios are fair even though the absolute figures are lower than with an external client.
 * Autocannon's `workers` option is deliberately not used, to keep it that way.
 *
 * Environment: BENCH_DURATION (seconds measured per target, default 10), BENCH_WARMUP (seconds,
 * default 3), BENCH_CONNECTIONS (default 50), TEST_PG_URL (PostgreSQL server to use, default
 * postgres://postgres@127.0.0.1:5432/postgres; an embedded one is started when it does not answer).
 */
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import Router from '@koa/router';
import { loadConfig } from '../src/config.ts';
import { cleanUp, freshDatabase, onCleanup, positiveInt, say, startTemporal } from './harness.ts';
import { createLogger } from '../src/logger.ts';
import { startService, type Service } from '../src/service.ts';
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
const TARGET_RPS_RATIO = 0.5;
const TARGET_P99_RATIO = 2;

/** The framework floor: Koa 3 + @koa/router, one route answering a fixed object. */
async function startBareApp(body: unknown): Promise<string> {
  const app = new Koa();
  const router = new Router();
  router.get('/api/v1/rest/agents/:id', (ctx) => {
    ctx.body = body;
  });
  app.use(router.routes());
  app.use(router.allowedMethods());
  const server: Server = createServer(app.callback());
  server.keepAliveTimeout = 65_000; // as the service's server
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  onCleanup('bare Koa app', () => new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  }));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

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

/** Warm-up run (discarded), then the measured one. */
async function measure(label: string, url: string, headers: Record<string, string>): Promise<AutocannonResult> {
  if (interrupted) throw new Error('interrupted');
  say(`${label}: warming up ${WARMUP} s, then measuring ${DURATION} s at ${CONNECTIONS} connections`);
  checkClean(`${label} (warm-up)`, await load(url, WARMUP, headers));
  const result = await load(url, DURATION, headers);
  checkClean(label, result);
  return result;
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

function report(service: AutocannonResult, bare: AutocannonResult): void {
  const rpsRatio = service.requests.average / bare.requests.average;
  const p99Ratio = service.latency.p99 / bare.latency.p99;
  const rows = [
    ['', 'requests/s', 'p50 ms', 'p99 ms', 'requests', 'non-2xx', 'errors'],
    ...([['service', service], ['bare Koa', bare]] as const).map(([name, r]) => [
      name, r.requests.average.toFixed(0), String(r.latency.p50), String(r.latency.p99),
      String(r.requests.total), String(r.non2xx), String(r.errors + r.timeouts),
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const line = (row: string[]) => row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  say();
  say(`GET /api/v1/rest/agents/:id, ${CONNECTIONS} connections, ${DURATION} s each, autocannon in-process`);
  say(line(rows[0]!));
  say(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows.slice(1)) say(line(row));
  say();
  const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
  say(`rps ratio (service / bare): ${rpsRatio.toFixed(3)}  target >= ${TARGET_RPS_RATIO}: ${verdict(rpsRatio >= TARGET_RPS_RATIO)}`);
  say(bare.latency.p99 > 0
    ? `p99 ratio (service / bare): ${p99Ratio.toFixed(3)}  target <= ${TARGET_P99_RATIO}: ${verdict(p99Ratio <= TARGET_P99_RATIO)}`
    : 'p99 ratio (service / bare): n/a, the bare p99 is below autocannon\'s 1 ms resolution');
}

async function main(): Promise<void> {
  say('Starting PostgreSQL database and Temporal dev server...');
  const [databaseUrl, temporalAddress] = await Promise.all([freshDatabase(), startTemporal()]);
  // The environment still applies (e.g. DATABASE_POOL_SIZE, to try another pool size); these win.
  const config = loadConfig(process.env, {
    PORT: 0, HOST: '127.0.0.1', LOG_LEVEL: 'silent',
    // Far above what the run can send, so the limiter counts but never refuses.
    RATE_LIMIT_PER_MINUTE: 1_000_000_000,
  });
  const service: Service = await startService({
    config, databaseUrl, temporalAddress, log: createLogger(config.LOG_LEVEL), api: true, worker: false,
  });
  onCleanup('service', () => service.stop());
  const base = service.url!;

  const org = await service.sql.begin((tx) => createOrganization(tx, `bench-${randomBytes(3).toString('hex')}`));
  const headers = { authorization: `Bearer ${org.token}` };
  const created = await expectJson(await fetch(`${base}/api/v1/rest/agents`, {
    method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Bench agent' }),
  }), 201, 'POST /agents');
  const path = `/api/v1/rest/agents/${created.id as string}`;
  const body = await expectJson(await fetch(base + path, { headers }), 200, `GET ${path}`);

  const bareBase = await startBareApp(body);
  const bareText = await (await fetch(bareBase + path, { headers })).text();
  if (bareText !== JSON.stringify(body)) throw new Error('the bare app does not answer the same body as the service');

  const serviceResult = await measure('service', base + path, headers);
  const bareResult = await measure('bare Koa', bareBase + path, headers);
  report(serviceResult, bareResult);
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
