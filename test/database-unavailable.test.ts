import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createSql } from '../src/db/index.ts';
import { listenDurably } from '../src/db/listen.ts';
import { client, eventually, freshDatabase, startTestService, type TestService } from './helpers.ts';
import { expectProblem } from './support/problems.ts';

/**
 * Found by the production rehearsal (bench/rehearsal.ts): while the service's PostgreSQL sessions
 * were terminated, or the server had no connection slot left, requests answered 500. A database
 * that cannot be reached is a 503 with Retry-After, as an unreachable Temporal is, and the
 * service answers again once the database does.
 */
let db: { url: string; drop(): Promise<void> };
let svc: TestService;
const admin = createSql(inject('pgServerUrl'), { max: 1 });

beforeAll(async () => {
  db = await freshDatabase();
  svc = await startTestService({ RATE_LIMIT_PER_MINUTE: 100_000 }, { worker: false, databaseUrl: db.url });
});
afterAll(async () => {
  await svc?.stop();
  await db?.drop();
  await admin.end({ timeout: 5 });
});

describe('the database unreachable', () => {
  it('answers 503 service_unavailable with Retry-After, not 500, and recovers', async () => {
    const org = await svc.newOrg();
    const api = client(svc.url, org.token);
    expect((await api.post('/api/v1/rest/agents', { name: 'Before' })).status).toBe(201);
    const name = new URL(db.url).pathname.slice(1);
    await admin.unsafe(`alter database ${name} with allow_connections false`);
    try {
      await admin`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${name}`;
      const refused = await api.post('/api/v1/rest/agents', { name: 'During' });
      expectProblem(refused, 503, 'service_unavailable');
      expect(refused.headers.get('retry-after')).toBe('1');
    } finally {
      await admin.unsafe(`alter database ${name} with allow_connections true`);
    }
    await eventually(async () => (await api.post('/api/v1/rest/agents', { name: 'After' })).status === 201, 30_000, 200);
    const names = (await api.get('/api/v1/rest/agents?limit=10')).body.data.map((a: { name: string }) => a.name).sort();
    expect(names).toEqual(['After', 'Before']);
  });
});

describe('listenDurably', () => {
  it('subscribes again when the driver stopped delivering a channel, as postgres.js does when its re-LISTEN fails', async () => {
    const sql = createSql(db.url, { max: 2 });
    try {
      let listens = 0;
      // The first subscription is the dropped one: LISTEN ran, but nothing reaches the caller.
      const dropsFirst = new Proxy(sql, {
        get(target, prop, receiver) {
          if (prop !== 'listen') return Reflect.get(target, prop, receiver) as unknown;
          return (channel: string, fn: (p: string) => void, onListen?: () => void) =>
            target.listen(channel, ++listens === 1 ? () => undefined : fn, onListen);
        },
      });
      const got: string[] = [];
      let onListenCalls = 0;
      const subscription = await listenDurably(dropsFirst, 'ams_test_durable', (p) => got.push(p), () => { onListenCalls += 1; }, { checkMs: 100 });
      await eventually(async () => {
        await sql.notify('ams_test_durable', 'hello');
        return got.includes('hello');
      }, 30_000, 200);
      expect(listens).toBeGreaterThanOrEqual(2);
      expect(onListenCalls).toBeGreaterThanOrEqual(2);
      expect(got.every((p) => p === 'hello')).toBe(true); // its pings never reach the caller
      await subscription.unlisten();
    } finally {
      await sql.end({ timeout: 5 });
    }
  });
});
