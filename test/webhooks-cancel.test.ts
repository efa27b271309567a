import { afterAll, beforeAll, expect, it } from 'vitest';
import { WorkflowFailedError } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import { eventually, freshDatabase, startTestService, type TestService } from './helpers.ts';
import { orgWithAgent, type Api } from './support/orgs.ts';
import { startReceiver, type Receiver } from './webhook-receiver.ts';
import { workflowIds } from '../src/temporal/ids.ts';

/**
 * Issue 43: deleting or disabling an endpoint stops its retries at once. The retry delays here are an hour, so a
 * retry workflow that ended by itself would take that long: one that ends now was canceled.
 * A database of its own: another file's recovery sweep must not take these deliveries with its own delays.
 */
let db: Awaited<ReturnType<typeof freshDatabase>>;
let svc: TestService;
let receiver: Receiver;
beforeAll(async () => {
  db = await freshDatabase();
  receiver = await startReceiver();
  svc = await startTestService({ WEBHOOK_RETRY_DELAYS: '3600,3600', ALLOW_PRIVATE_NETWORK_TARGETS: true }, { databaseUrl: db.url });
});
afterAll(async () => {
  await svc?.stop();
  await receiver?.close();
  await db?.drop();
});

const W = '/api/v1/rest/webhooks';

async function failingEndpoint(api: Api) {
  const url = receiver.url({ failFirst: 1000 });
  const res = await api.post(W, { url, events: ['widget.paused'] });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.id as string, url };
}

/** The retry workflow of the endpoint's one delivery, once it is asleep on its first retry delay. */
async function sleepingRetry(api: Api, endpointId: string) {
  const delivery = await eventually(async () => (await api.get(`${W}/${endpointId}/deliveries`)).body.data[0]);
  const handle = svc.temporal.workflow.getHandle(workflowIds.webhookDelivery(delivery.event_id, endpointId));
  await eventually(async () => {
    const history = await handle.fetchHistory().catch(() => null);
    return history?.events?.some((e) => e.timerStartedEventAttributes) ?? false;
  }, 30_000);
  return { handle, deliveryId: delivery.id as string };
}

async function expectCanceled(handle: ReturnType<TestService['temporal']['workflow']['getHandle']>) {
  const error = await handle.result().then(() => null, (err: unknown) => err);
  expect(error).toBeInstanceOf(WorkflowFailedError);
  expect((error as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
  expect((await handle.describe()).status.name).toBe('CANCELLED');
}

it('deleting an endpoint cancels its sleeping retry workflow at once; disabling one cancels it and fails the delivery', async () => {
  const { api, agent } = await orgWithAgent(svc);
  const deleted = await failingEndpoint(api);
  const disabled = await failingEndpoint(api);
  expect((await api.patch(`/api/v1/rest/agents/${agent.id}`, { status: 'paused' })).status).toBe(200);
  const [first, second] = await Promise.all([sleepingRetry(api, deleted.id), sleepingRetry(api, disabled.id)]);

  // The run ends now (its next timer would fire in an hour, past this test's timeout), as canceled.
  expect((await api.delete(`${W}/${deleted.id}`)).status).toBe(204);
  await expectCanceled(first.handle);

  const patched = await api.patch(`${W}/${disabled.id}`, { enabled: false });
  expect(patched.status, patched.text).toBe(200);
  await expectCanceled(second.handle);
  const delivery = (await api.get(`${W}/${disabled.id}/deliveries`)).body.data[0];
  expect(delivery).toMatchObject({ id: second.deliveryId, status: 'failed' });
  expect(delivery.attempts).toHaveLength(1);
  // Only the dispatcher's first attempt reached each receiver.
  expect(receiver.received(deleted.url)).toHaveLength(1);
  expect(receiver.received(disabled.url)).toHaveLength(1);
}, 60_000);
