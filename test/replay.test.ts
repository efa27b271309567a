import { readdir, readFile } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { client, eventually, freshDatabase, startTestService, type TestService } from './helpers.ts';
import { FIXTURES, recordFixture, replayAll } from './support/replay.ts';
import { newId } from '../src/ids.ts';
import { startReceiver } from './webhook-receiver.ts';
import { startFixtureSite } from '../fixtures/fixture-site.ts';

/**
 * Recorded histories of earlier versions' runs must replay on today's workflow code: a change
 * that would break running workflows (non-determinism) fails here, before it reaches production.
 * `RECORD_HISTORIES=1` refreshes the fixtures from a fresh run (do it only for intended changes
 * whose old runs have drained, or that no release has run, and say so in the commit; workflows/README.md,
 * "Versioning").
 */
let svc: TestService;
beforeAll(async () => { svc = await startTestService({ PURGE_BATCH_SIZE: 2 }); });
afterAll(async () => { await svc?.stop(); });

it('replays every recorded history on the current workflow code', async () => {
  const files = (await readdir(FIXTURES)).filter((f) => f.endsWith('.json'));
  expect(files.length).toBeGreaterThan(0);
  await replayAll(await Promise.all(files.map(async (f) => ({ workflowId: f, history: JSON.parse(await readFile(FIXTURES + f, 'utf8')) as unknown }))));
});

it('replays a purge it has just run (batches and all)', async () => {
  const { token, orgId } = await svc.newOrg();
  const api = client(svc.url, token);
  const { body: agent } = await api.post('/api/v1/rest/agents', { name: 'Replayed' });
  for (let i = 0; i < 5; i++) await svc.sql`insert into conversations (id, org_id, agent_id, surface) values (${newId()}, ${orgId}, ${agent.id}, 'web')`;
  await api.delete(`/api/v1/rest/agents/${agent.id}`);
  const handle = svc.temporal.workflow.getHandle(`agent-purge:${agent.id}`);
  expect((await handle.result()).deleted.conversations).toBe(5);
  const history = await handle.fetchHistory();
  await replayAll([{ workflowId: handle.workflowId, history }]);
  await recordFixture(handle.workflowId, 'purge-agent.json');
});

it('replays a webhook delivery it has just run (a failed attempt, a durable timer, a success)', async () => {
  // A database of its own: the webhook dispatchers of other services on the shared one would take its first attempt.
  const own = await freshDatabase();
  const hooks = await startTestService({ ALLOW_PRIVATE_NETWORK_TARGETS: true, WEBHOOK_RETRY_DELAYS: '1' }, { databaseUrl: own.url });
  const receiver = await startReceiver();
  try {
    const api = client(hooks.url, (await hooks.newOrg()).token);
    const { body: endpoint } = await api.post('/api/v1/rest/webhooks', { url: receiver.url({ failFirst: 1 }), events: ['widget.paused'] });
    const { body: agent } = await api.post('/api/v1/rest/agents', { name: 'Replayed hook' });
    await api.patch(`/api/v1/rest/agents/${agent.id}`, { status: 'paused' });
    // Dispatch follows the commit without holding up the response: wait for it.
    const event = await eventually(async () => (await hooks.sql<{ id: string }[]>`select id from events where agent_id = ${agent.id} and dispatched_at is not null`)[0]);
    const handle = hooks.temporal.workflow.getHandle(`webhook-delivery:${event.id}:${endpoint.id}`);
    // The first attempt is the dispatcher's; its failure starts the workflow, a moment later.
    await eventually(() => handle.describe().then(() => true, () => false));
    expect(await handle.result()).toEqual({ status: 'succeeded', attempts: 2 });
    await replayAll([{ workflowId: handle.workflowId, history: await handle.fetchHistory() }]);
    await recordFixture(handle.workflowId, 'deliver-webhook.json');
  } finally {
    await receiver.close();
    await hooks.stop();
    await own.drop();
  }
});

it('replays a crawl and a conversation it has just run (with the conversation\'s evaluation)', async () => {
  const svc2 = await startTestService({ ALLOW_PRIVATE_NETWORK_TARGETS: true, CRAWL_DELAY_MS: 0 });
  const web = await startFixtureSite({ pages: 3 });
  try {
    const api = client(svc2.url, (await svc2.newOrg()).token);
    const { body: agent } = await api.post('/api/v1/rest/agents', { name: 'Replayed crawl', site_url: web.url });
    const site = (await api.get(`/api/v1/rest/sites?widget_id=${agent.id}`)).body.data[0];
    const crawl = svc2.temporal.workflow.getHandle(`crawl:${site.id}`);
    expect(await crawl.result()).toMatchObject({ pages: 3 });
    await replayAll([{ workflowId: crawl.workflowId, history: await crawl.fetchHistory() }]);
    await recordFixture(crawl.workflowId, 'crawl-site.json');

    const base = `${svc2.url}/api/v1/public/widgets/${agent.public_key}/conversations`;
    const post = (url: string, body: unknown, token?: string) => fetch(url, {
      method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { 'x-visitor-token': token } : {}) }, body: JSON.stringify(body),
    }).then((r) => r.json() as Promise<any>);
    const started = await post(base, { page_url: 'https://example.com/' });
    await post(`${base}/${started.conversation_id}/messages`, { text: 'Tell me about article 2' }, started.visitor_token);
    await post(`${base}/${started.conversation_id}/end`, {}, started.visitor_token);
    const lifecycle = svc2.temporal.workflow.getHandle(`conversation:${started.conversation_id}`);
    await lifecycle.result();
    const evaluation = svc2.temporal.workflow.getHandle(`conversation-evaluation:${started.conversation_id}`);
    expect(await evaluation.result()).toBe(true);
    await replayAll([
      { workflowId: lifecycle.workflowId, history: await lifecycle.fetchHistory() },
      { workflowId: evaluation.workflowId, history: await evaluation.fetchHistory() },
    ]);
    await recordFixture(lifecycle.workflowId, 'conversation-lifecycle.json');
    await recordFixture(evaluation.workflowId, 'evaluate-conversation.json');
  } finally {
    await web.close();
    await svc2.stop();
  }
}, 60_000);

it('replays a number billing run it has just run (a monthly charge)', async () => {
  const { token } = await svc.newOrg();
  const api = client(svc.url, token);
  const { body: agent } = await api.post('/api/v1/rest/agents', { name: 'Replayed billing' });
  const { body: number } = await api.post('/api/v1/rest/phone-numbers', { widget_id: agent.id });
  const handle = await svc.temporal.workflow.start('billPhoneNumber', {
    workflowId: `number-billing-replay:${number.id}`, taskQueue: `${svc.config.TASK_QUEUE_PREFIX}-maintenance`,
    args: [{ phoneNumberId: number.id, asOf: new Date(Date.parse(number.created_at) + 35 * 86_400_000).toISOString() }],
  });
  expect(await handle.result()).toMatchObject({ charged: true });
  await replayAll([{ workflowId: handle.workflowId, history: await handle.fetchHistory() }]);
  await recordFixture(handle.workflowId, 'number-billing.json');
});

it('replays a scheduled report run it has just run (the firing and its report-run child)', async () => {
  const { token } = await svc.newOrg();
  const api = client(svc.url, token);
  const { body: report } = await api.post('/api/v1/rest/reports', { name: 'Replayed report', data_categories: ['volume', 'goals'], format: 'document', frequency: 'daily' });
  const schedule = svc.temporal.schedule.getHandle(`report-schedule:${report.id}`);
  await schedule.trigger();
  const action = await eventually(async () => (await schedule.describe()).info.recentActions[0], 30_000);
  const firing = svc.temporal.workflow.getHandle(action.action.workflow.workflowId, action.action.workflow.firstExecutionRunId);
  const result = await firing.result() as { runId: string; status: string };
  expect(result.status).toBe('succeeded');
  const child = svc.temporal.workflow.getHandle(`report-run:${result.runId}`);
  await replayAll([
    { workflowId: firing.workflowId, history: await firing.fetchHistory() },
    { workflowId: child.workflowId, history: await child.fetchHistory() },
  ]);
  await recordFixture(firing.workflowId, 'scheduled-report-run.json');
  await recordFixture(child.workflowId, 'report-run.json');
}, 90_000);
it('replays a campaign and a call of it that it has just run (a busy retry, a max-duration timer firing)', async () => {
  const calls3 = await startTestService({ SANDBOX_RING_SECONDS: 0, SANDBOX_CALL_SECONDS: 30 });
  try {
    const { token } = await calls3.newOrg();
    const api = client(calls3.url, token);
    const { body: agent } = await api.post('/api/v1/rest/agents', { name: 'Replayed caller' });
    expect((await api.post('/api/v1/rest/phone-numbers', { widget_id: agent.id })).status).toBe(201);
    const { body: campaign } = await api.post('/api/v1/rest/campaigns', {
      name: 'Replayed', widget_id: agent.id, to_numbers: ['+15005550002', '+15005550100'], max_duration_seconds: 1,
      retry: { max_attempts: 2, backoff_seconds: 1, on: ['busy'] },
    });
    expect((await api.post(`/api/v1/rest/campaigns/${campaign.id}/start`)).status).toBe(200);
    const parent = calls3.temporal.workflow.getHandle(`campaign:${campaign.id}`);
    await parent.result();
    const { body: page } = await api.get(`/api/v1/rest/campaigns/${campaign.id}/calls`);
    expect(page.total).toBe(3);
    const capped = page.data.find((c: { ended_reason: string }) => c.ended_reason === 'max_duration');
    const child = calls3.temporal.workflow.getHandle(`campaign-call:${capped.id}`);
    await child.result();
    await replayAll([
      { workflowId: parent.workflowId, history: await parent.fetchHistory() },
      { workflowId: child.workflowId, history: await child.fetchHistory() },
    ]);
    await recordFixture(parent.workflowId, 'campaign.json');
    await recordFixture(child.workflowId, 'campaign-call.json');
  } finally {
    await calls3.stop();
  }
}, 120_000);
