import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, freshDatabase, startTestService, type TestService } from './helpers.ts';
import { orgWithAgent } from './support/orgs.ts';
import { startReceiver, type Receiver } from './webhook-receiver.ts';
import { isWorkflowPromise } from '../src/temporal/workflow-realm.ts';

// WORKFLOW_THREAD=main (issue 48, idle memory): the workflows of this service run in a V8 context of the main
// thread instead of a worker thread. What a workflow does is the same: a webhook delivery whose first attempt
// fails is retried by its delivery workflow (a durable timer, then the activity), and the recovery sweeper loops.
let db: Awaited<ReturnType<typeof freshDatabase>>;
let svc: TestService;
let receiver: Receiver;

beforeAll(async () => {
  db = await freshDatabase();
  receiver = await startReceiver();
  svc = await startTestService({
    WORKFLOW_THREAD: 'main', WEBHOOK_RETRY_DELAYS: '1,1', ALLOW_PRIVATE_NETWORK_TARGETS: true, WEBHOOK_SWEEP_SECONDS: 2,
  }, { databaseUrl: db.url });
});
afterAll(async () => {
  await svc?.stop();
  await receiver?.close();
  await db?.drop();
});

describe('workflows in the main thread (WORKFLOW_THREAD=main)', () => {
  it('retries a failed delivery through its workflow, and the recovery sweeper keeps sweeping', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const url = receiver.url({ failFirst: 1 });
    expect((await api.post('/api/v1/rest/webhooks', { url, events: ['widget.paused'] })).status).toBe(201);
    expect((await api.patch(`/api/v1/rest/agents/${agent.id}`, { status: 'paused' })).status).toBe(200);
    // The first attempt answered 500; the delivery workflow's retry, a second later, succeeds.
    const got = await eventually(async () => receiver.received(url).length >= 2 && receiver.received(url), 30_000);
    expect(got.map((r) => r.body)).toEqual([got[0]!.body, got[0]!.body]);
    const { workflowIds } = await import('../src/temporal/ids.ts');
    const sweeper = svc.temporal.workflow.getHandle(workflowIds.webhookRecoverySweeper(svc.config));
    const sweeps = async () => ((await sweeper.fetchHistory()).events ?? []).filter((e) => e.activityTaskCompletedEventAttributes).length;
    const before = await sweeps();
    await eventually(async () => (await sweeps()) >= before + 2, 30_000, 250);
    expect((await sweeper.describe()).status.name).toBe('RUNNING');
  });

  it('tells a promise of the process from one of workflow code (the unhandled-rejection listeners are scoped by it)', () => {
    expect(isWorkflowPromise(Promise.resolve())).toBe(false);
    class Subclassed<T> extends Promise<T> {}
    expect(isWorkflowPromise(Subclassed.resolve(1))).toBe(false);
  });
});
