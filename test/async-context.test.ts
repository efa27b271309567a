import type { AsyncLocalStorage } from 'node:async_hooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { client, eventually, startTestService, type TestService } from './helpers.ts';
import { activityContextStorage, asyncContextGate, callContextStorageOf } from '../src/temporal/async-context.ts';

let svc: TestService;
beforeAll(async () => { svc = await startTestService(); });
afterAll(async () => { await svc?.stop(); });

/**
 * Node 20 keeps `enabled` on each AsyncLocalStorage (not documented, but what `disable()` and
 * `run()` flip); while any is true, every promise of the process pays a hook.
 */
const enabled = (storage: AsyncLocalStorage<unknown> | undefined) => (storage as unknown as { enabled?: boolean } | undefined)?.enabled;

const idle = (...storages: (AsyncLocalStorage<unknown> | undefined)[]) =>
  eventually(async () => (asyncContextGate.inFlight === 0 && storages.every((st) => enabled(st) === false) ? true : null), 10_000, 20);

it('switches the SDK\'s AsyncLocalStorages off once nothing runs in them, and activities still read their context after', async () => {
  const clientStorage = callContextStorageOf(svc.temporal.connection);
  expect(clientStorage, 'the connection exposes its call context storage').toBeDefined();
  const { token } = await svc.newOrg();
  const api = client(svc.url, token);
  const created = await api.post('/api/v1/rest/agents', { name: 'Gate' });
  expect(created.status, created.text).toBe(201);
  const agent = created.body;
  for (let round = 0; round < 2; round += 1) {
    // A conversation: its workflow starts through the API's client (a run in its call context), and
    // its evaluation activity reads Context.current() for its heartbeats.
    const started = await fetch(`${svc.url}/api/v1/public/widgets/${agent.public_key}/conversations`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ page_url: 'https://example.com/' }),
    });
    expect(started.status, await started.clone().text()).toBe(201);
    const { conversation_id: id, visitor_token: visitorToken } = await started.json() as { conversation_id: string; visitor_token: string };
    const ended = await fetch(`${svc.url}/api/v1/public/widgets/${agent.public_key}/conversations/${id}/end`, {
      method: 'POST', headers: { 'x-visitor-token': visitorToken },
    });
    expect(ended.status).toBe(200);
    await eventually(async () => {
      const [row] = await svc.sql<{ evaluation_status: string }[]>`select evaluation_status from conversations where id = ${id}`;
      return row?.evaluation_status === 'completed' ? true : null;
    }, 30_000);
    expect(activityContextStorage(), 'the activity context storage exists once an activity ran').toBeDefined();
    await idle(activityContextStorage(), clientStorage);
  }
  // A readiness check sets a deadline on the API's connection: its storage is off again after it.
  expect((await fetch(`${svc.url}/readyz`)).status).toBe(200);
  await idle(activityContextStorage(), clientStorage);
});

it('switches the API connection\'s storage off after start, in a process without workers and before any request', async () => {
  // `npm run api`: nothing but connect ran in the connection's call context, and no run of the gate follows it
  // until a readiness check; before, the hook stayed on for every promise of every request.
  const api = await startTestService({}, { worker: false });
  try {
    const storage = callContextStorageOf(api.temporal.connection);
    expect(storage, 'the connection exposes its call context storage').toBeDefined();
    await idle(storage);
    const { token } = await api.newOrg();
    const created = await client(api.url, token).post('/api/v1/rest/agents', { name: 'Gate, API only' });
    expect(created.status, created.text).toBe(201);
    // A workflow start through the client (the agent's crawl is none without a site): still off once it settled.
    await idle(storage);
  } finally {
    await api.stop();
  }
});
