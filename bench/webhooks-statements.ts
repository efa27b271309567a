/**
 * Statements per webhook event (issue 16): `node --import tsx bench/webhooks-statements.ts`. The service in
 * this process with a statement counter; BENCH_EVENTS agents (default 300) paused through the API at
 * BENCH_RATE a second (default 100), one endpoint; prints each statement's count per event, and the writes
 * to PostgreSQL's sockets per event (a statement waiting on the one before it is a write of its own).
 */
import { createServer } from 'node:http';
import { Socket, type AddressInfo } from 'node:net';
import { freshDatabase, onCleanup, positiveInt, runBenchmark, say, startTemporal } from './harness.ts';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { startService } from '../src/service.ts';
import { createOrganization } from '../src/auth/keys.ts';
import { insertAgent } from '../src/db/agents.ts';

const EVENTS = positiveInt('BENCH_EVENTS', 300);
const RATE = positiveInt('BENCH_RATE', 100);

async function main(): Promise<void> {
  const counts = new Map<string, number>();
  let counting = false;
  const count = (statement: string) => {
    if (!counting) return;
    const key = statement.replace(/\s+/g, ' ').trim().slice(0, 110);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  };
  // Every write on a socket to PostgreSQL's port, while counting.
  let pgWrites = 0;
  const pgPort = Number(new URL(process.env.TEST_PG_URL ?? 'postgres://127.0.0.1:5432').port || 5432);
  const write = Socket.prototype.write;
  Socket.prototype.write = function (this: Socket, ...args: Parameters<Socket['write']>) {
    if (counting && this.remotePort === pgPort) pgWrites++;
    return write.apply(this, args);
  } as Socket['write'];
  let received = 0;
  let allIn: () => void = () => {};
  const receiver = createServer((req, res) => { req.resume(); req.on('end', () => { res.writeHead(204).end(); if (++received === EVENTS) allIn(); }); });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  onCleanup('receiver', () => new Promise<void>((r) => { receiver.close(() => r()); receiver.closeAllConnections(); }));
  const [databaseUrl, temporalAddress] = await Promise.all([freshDatabase(), startTemporal()]);
  const config = loadConfig(process.env, { PORT: 0, HOST: '127.0.0.1', LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: 1_000_000_000, ALLOW_PRIVATE_NETWORK_TARGETS: true, SMTP_LISTEN_PORT: 0 });
  const service = await startService({ config, databaseUrl, temporalAddress, log: createLogger(config.LOG_LEVEL), api: true, worker: true, statements: { onQuery: count } });
  onCleanup('service', () => service.stop());
  const base = `${service.url!}/api/v1/rest`;
  const org = await service.sql.begin((tx) => createOrganization(tx, 'bench'));
  const headers = { authorization: `Bearer ${org.token}`, 'content-type': 'application/json' };
  await fetch(`${base}/webhooks`, { method: 'POST', headers, body: JSON.stringify({ url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/h`, events: ['*'] }) });
  const agents: string[] = [];
  for (let i = 0; i < EVENTS; i++) agents.push((await insertAgent(service.sql, org.org_id, { name: `A ${i}` })).id);
  const done = new Promise<void>((r) => { allIn = r; });
  counting = true;
  const start = Date.now();
  await Promise.all(agents.map(async (id, i) => {
    await new Promise((r) => setTimeout(r, start + (i * 1000) / RATE - Date.now()));
    await fetch(`${base}/agents/${id}`, { method: 'PATCH', headers, body: JSON.stringify({ status: 'paused' }) }).then((r) => r.text());
  }));
  await done;
  await new Promise((r) => setTimeout(r, 500));
  counting = false;
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  say(`${EVENTS} events at ${RATE}/s: ${(total / EVENTS).toFixed(2)} statements per event, ${(pgWrites / EVENTS).toFixed(2)} writes to PostgreSQL per event`);
  for (const [k, n] of [...counts].sort((a, b) => b[1] - a[1])) say(`${(n / EVENTS).toFixed(2).padStart(6)}  ${k}`);
}

await runBenchmark(main);
