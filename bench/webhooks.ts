/**
 * Webhook delivery benchmark: `npm run bench:webhooks` (or `node --import tsx bench/webhooks.ts`).
 *
 * The real service (API and workers in this process, a fresh PostgreSQL database, an in-memory
 * Temporal dev server) and a local node:http receiver. BENCH_EVENTS agents (default 1000) are
 * each paused through `PATCH /agents/:id` by BENCH_CONCURRENCY clients (default 32): every PATCH
 * commits one `widget.paused` event, which the service dispatches, runs as a delivery workflow
 * and POSTs, signed, to the receiver.
 *
 * Latency is commit to receipt per event: from the event's `created_at` (taken inside the
 * committing transaction, so slightly before the commit: the figure errs high) to the moment
 * the receiver has the request. Throughput is events / (last receipt - first created_at).
 * Targets on the 2-core reference machine: p95 <= 250 ms and >= 200 events/s.
 *
 * By default the clients go as fast as they can (saturation: the throughput figure, with the
 * latency of a queue that grows). BENCH_RATE=N instead sends N PATCHes a second whatever the
 * answers (open loop): the latency figure at a load the pipeline sustains.
 *
 * Environment: BENCH_EVENTS, BENCH_CONCURRENCY, BENCH_RATE, BENCH_WARMUP_EVENTS (default 100),
 * TEST_PG_URL (PostgreSQL server, default postgres://postgres@127.0.0.1:5432/postgres; an
 * embedded one is started when it does not answer). Other service settings (for example
 * DATABASE_POOL_SIZE) are read from the environment as usual.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig } from '../src/config.ts';
import { cpuSnapshot, describeCpu, freshDatabase, onCleanup, positiveInt, say, startTemporal, type CpuSnapshot, runBenchmark } from './harness.ts';
import { createLogger } from '../src/logger.ts';
import { startService, type Service } from '../src/service.ts';
import { createOrganization } from '../src/auth/keys.ts';
import { insertAgent } from '../src/db/agents.ts';

const EVENTS = positiveInt('BENCH_EVENTS', 1000);
const CONCURRENCY = positiveInt('BENCH_CONCURRENCY', 32);
const WARMUP_EVENTS = positiveInt('BENCH_WARMUP_EVENTS', 100);
/** Open-loop mode: PATCHes at this fixed rate (per second) instead of as fast as CONCURRENCY clients go. */
const RATE = process.env.BENCH_RATE ? positiveInt('BENCH_RATE', 1) : null;
const TARGET_P95_MS = 250;
const TARGET_RATE = 200;
const DELIVERY_TIMEOUT_MS = 180_000;

/** Receipt times by event id; the first receipt of each event counts, repeats are counted apart. */
interface Receipts { first: Map<string, { receivedAt: number; createdAt: number }>; repeats: number; notifyEach?: () => void }

async function startReceiver(receipts: Receipts): Promise<string> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const receivedAt = Date.now();
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string; created_at: string };
      if (receipts.first.has(event.id)) receipts.repeats++;
      else receipts.first.set(event.id, { receivedAt, createdAt: Date.parse(event.created_at) });
      res.writeHead(204).end();
      receipts.notifyEach?.();
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  onCleanup('receiver', () => new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  }));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
}

async function expectStatus(res: Response, status: number, what: string): Promise<unknown> {
  const text = await res.text();
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status}: ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** Runs `work` over `items` with at most `concurrency` in flight. */
async function pool<T>(items: T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) await work(items[next++]!);
  }));
}

/** Resolves once `count` distinct events have arrived, or fails after the timeout. */
function waitForReceipts(receipts: Receipts, count: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`only ${receipts.first.size} of ${count} events arrived within ${DELIVERY_TIMEOUT_MS / 1000} s`)), DELIVERY_TIMEOUT_MS);
    const check = () => {
      if (receipts.first.size < count) return;
      clearTimeout(timer);
      receipts.notifyEach = undefined;
      resolve();
    };
    receipts.notifyEach = check;
    check();
  });
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

/** Starts `work` for each item at `rate` a second, not waiting for earlier ones; resolves when all are done. */
async function paced<T>(items: T[], rate: number, work: (item: T) => Promise<void>): Promise<void> {
  const start = Date.now();
  const running: Promise<void>[] = [];
  for (let i = 0; i < items.length; i++) {
    const due = start + (i * 1000) / rate;
    if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
    running.push(work(items[i]!));
  }
  await Promise.all(running);
}

/** Pauses each agent through the API (CONCURRENCY at a time, or at RATE a second); returns when every PATCH answered. */
async function pauseAll(base: string, token: string, agentIds: string[], rate: number | null): Promise<void> {
  const pause = async (id: string) => {
    await expectStatus(await fetch(`${base}/api/v1/rest/agents/${id}`, {
      method: 'PATCH', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'paused' }),
    }), 200, `PATCH /agents/${id}`);
  };
  await (rate ? paced(agentIds, rate, pause) : pool(agentIds, CONCURRENCY, pause));
}

/** Prints the figures; a missed target is reported, not an error (as bench:api does). */
function report(receipts: Receipts, patchMs: number, cpu: [CpuSnapshot, CpuSnapshot]): void {
  const rows = [...receipts.first.values()];
  const latencies = rows.map((r) => r.receivedAt - r.createdAt).sort((a, b) => a - b);
  const firstCommit = Math.min(...rows.map((r) => r.createdAt));
  const lastReceipt = Math.max(...rows.map((r) => r.receivedAt));
  const rate = rows.length / ((lastReceipt - firstCommit) / 1000);
  const p95 = percentile(latencies, 95);
  say();
  say(`${rows.length} events, ${RATE ? `PATCHes at ${RATE}/s (open loop)` : `${CONCURRENCY} concurrent PATCH clients`}; PATCHes took ${(patchMs / 1000).toFixed(2)} s (${(rows.length / (patchMs / 1000)).toFixed(0)} commits/s offered)`);
  say(`throughput (first commit to last receipt): ${rate.toFixed(0)} events/s`);
  say(`commit to receipt: p50 ${percentile(latencies, 50)} ms, p95 ${p95} ms, p99 ${percentile(latencies, 99)} ms, max ${latencies[latencies.length - 1]} ms`);
  say(`repeated deliveries: ${receipts.repeats}`);
  say(describeCpu(cpu[0], cpu[1], rows.length, 'event'));
  say();
  const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
  say(`p95 <= ${TARGET_P95_MS} ms: ${verdict(p95 <= TARGET_P95_MS)}`);
  say(`throughput >= ${TARGET_RATE} events/s: ${verdict(rate >= TARGET_RATE)}`);
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  say('Starting PostgreSQL database, Temporal dev server and receiver...');
  const receipts: Receipts = { first: new Map(), repeats: 0 };
  const [databaseUrl, temporalAddress, hookUrl] = await Promise.all([freshDatabase(), startTemporal(), startReceiver(receipts)]);
  const config = loadConfig(process.env, {
    PORT: 0, HOST: '127.0.0.1', LOG_LEVEL: 'silent', ALLOW_PRIVATE_NETWORK_TARGETS: true,
    RATE_LIMIT_PER_MINUTE: 1_000_000_000, // the limiter counts but never refuses
  });
  const service: Service = await startService({ config, databaseUrl, temporalAddress, log: createLogger(config.LOG_LEVEL), api: true, worker: true });
  onCleanup('service', () => service.stop());
  const base = service.url!;

  const org = await service.sql.begin((tx) => createOrganization(tx, `bench-${randomBytes(3).toString('hex')}`));
  await expectStatus(await fetch(`${base}/api/v1/rest/webhooks`, {
    method: 'POST', headers: { authorization: `Bearer ${org.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: hookUrl, events: ['*'] }),
  }), 201, 'POST /webhooks');
  say(`Creating ${WARMUP_EVENTS + EVENTS} agents...`);
  const agents: string[] = [];
  for (let i = 0; i < WARMUP_EVENTS + EVENTS; i++) agents.push((await insertAgent(service.sql, org.org_id, { name: `Bench ${i}` })).id);

  say(`Warming up with ${WARMUP_EVENTS} events...`);
  await pauseAll(base, org.token, agents.slice(0, WARMUP_EVENTS), RATE);
  await waitForReceipts(receipts, WARMUP_EVENTS);
  receipts.first.clear();
  receipts.repeats = 0;

  say(`Measuring ${EVENTS} events...`);
  const dbName = new URL(databaseUrl).pathname.slice(1);
  const cpuBefore = cpuSnapshot(dbName);
  const started = Date.now();
  await pauseAll(base, org.token, agents.slice(WARMUP_EVENTS), RATE);
  const patchMs = Date.now() - started;
  await waitForReceipts(receipts, EVENTS);
  report(receipts, patchMs, [cpuBefore, cpuSnapshot(dbName)]);
}

await runBenchmark(main);
