import type { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually, startTestService, type TestService } from './helpers.ts';
import { asyncContextGate, callContextStorageOf } from '../src/temporal/async-context.ts';
import { taskQueues } from '../src/temporal/ids.ts';
import type { sweepWebhookEvents } from '../workflows/sweep-webhook-events.ts';

let svc: TestService;
beforeAll(async () => { svc = await startTestService(); });
afterAll(async () => { await svc?.stop(); });

/**
 * Node 20 keeps `enabled` on each AsyncLocalStorage (not documented, but what `disable()` and
 * `run()` flip); while any is true, every promise of the process pays a hook.
 */
const enabled = (storage: AsyncLocalStorage<unknown> | undefined) => (storage as unknown as { enabled?: boolean } | undefined)?.enabled;
const activityStorage = () => (globalThis as Record<symbol, unknown>)[Symbol.for('__temporal_activity_context_storage__')] as AsyncLocalStorage<unknown> | undefined;

it('switches the SDK\'s AsyncLocalStorages off once no activity or deadline needs them, and activities still read their context after', async () => {
  for (let round = 0; round < 2; round += 1) {
    // The webhook recovery sweep: one activity, which reads Context.current() for its heartbeats.
    await svc.temporal.workflow.execute('sweepWebhookEvents', {
      workflowId: `async-context-test:${randomUUID()}`, taskQueue: taskQueues(svc.config).webhooks,
      args: [{ olderThanSeconds: 3600 }] satisfies Parameters<typeof sweepWebhookEvents>,
    });
    expect(activityStorage(), 'the activity context storage exists once an activity ran').toBeDefined();
    await eventually(async () => (asyncContextGate.inFlight === 0 && enabled(activityStorage()) === false ? true : null), 10_000, 20);
  }
  // A readiness check sets a deadline on the API's connection: its storage is off again after it.
  const ready = await fetch(`${svc.url}/readyz`);
  expect(ready.status).toBe(200);
  const storage = callContextStorageOf(svc.temporal.connection);
  expect(storage, 'the connection exposes its call context storage').toBeDefined();
  await eventually(async () => (enabled(storage) === false && enabled(activityStorage()) === false ? true : null), 10_000, 20);
});
