import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { eventually, freshDatabase, startTestService, workflowBundle, type TestService } from './helpers.ts';
import { keyWith, orgWithAgent, type Api } from './support/orgs.ts';
import { startReceiver, type Receiver, type Received } from './webhook-receiver.ts';
import { createLogger } from '../src/logger.ts';
import { startWorkers } from '../src/temporal/worker.ts';
import { WorkflowNotFoundError } from '@temporalio/client';
import { emitEvent } from '../src/events/emit.ts';
import { startDeliveryWorkflow } from '../src/events/dispatch.ts';
import { startDispatcher } from '../src/events/dispatcher.ts';
import { createSecretBox } from '../src/crypto/secret-box.ts';
import { insertEndpoint, sealPlaintextWebhookSecrets } from '../src/db/webhooks.ts';
import { colocatedClient } from '../src/temporal/eager.ts';
import { taskQueues } from '../src/temporal/index.ts';
import { SEARCH_ATTRIBUTES } from '../src/temporal/index.ts';
import { workflowIds } from '../src/temporal/ids.ts';
import { tsToMs } from '@temporalio/common';

// A database of its own: every service started with a worker runs a recovery sweep over its
// whole database, and another test file's sweep (with its own settings) must not take our events.
let db: Awaited<ReturnType<typeof freshDatabase>>;
let svc: TestService;
let strict: TestService;
let receiver: Receiver;

const FAST = { WEBHOOK_RETRY_DELAYS: '1,1', ALLOW_PRIVATE_NETWORK_TARGETS: true, WEBHOOK_SWEEP_SECONDS: 2, WEBHOOK_CLAIM_TIMEOUT_SECONDS: 2 } as const;
// One deployment, one secrets key: any worker on the database opens any endpoint's sealed secret.
const KEY = { SECRETS_KEY: Buffer.alloc(32, 42).toString('base64') };

beforeAll(async () => {
  db = await freshDatabase();
  receiver = await startReceiver();
  svc = await startTestService(FAST, { databaseUrl: db.url, env: KEY });
  strict = await startTestService({ ALLOW_PRIVATE_NETWORK_TARGETS: false }, { worker: false, databaseUrl: db.url, env: KEY });
});
afterAll(async () => {
  await strict?.stop();
  await svc?.stop();
  await receiver?.close();
  await db?.drop();
});

const W = '/api/v1/rest/webhooks';

/**
 * The positive signal after which a test may assert that nothing more arrives, instead of sleeping: the
 * organizations' events are all fanned out and their deliveries all settled (no path attempts a settled
 * delivery: the dispatcher claims pending ones, a workflow ends by settling it), then a whole recovery sweep,
 * the last path that could hand a delivery on, ran after that and found it settled.
 */
async function settled(s: TestService, orgIds: string[]): Promise<void> {
  await eventually(async () => {
    const [row] = await s.sql<{ waiting: number }[]>`select
      (select count(*)::int from events where org_id = any(${orgIds}::uuid[]) and dispatched_at is null)
      + (select count(*)::int from webhook_deliveries where org_id = any(${orgIds}::uuid[]) and status = 'pending') as waiting`;
    return row!.waiting === 0;
  });
  await sweepFinishedSince(s, Date.now());
}

/** Waits until a sweep of `s`'s recovery sweeper that was scheduled after `since` (ms) has completed. */
async function sweepFinishedSince(s: TestService, since: number): Promise<void> {
  const handle = s.temporal.workflow.getHandle(workflowIds.webhookRecoverySweeper(s.config));
  await eventually(async () => {
    // The latest run: a sweep after `since` is in it, even when the sweeper has continued as new meanwhile.
    const events = (await handle.fetchHistory()).events ?? [];
    const scheduledAt = new Map(events.filter((e) => e.activityTaskScheduledEventAttributes)
      .map((e) => [Number(e.eventId), tsToMs(e.eventTime)]));
    return events.some((e) => {
      const done = e.activityTaskCompletedEventAttributes;
      return done && (scheduledAt.get(Number(done.scheduledEventId)) ?? 0) > since;
    });
  }, 30_000, 250);
}

/** An organization with one agent and a client for it. */
async function createEndpoint(api: Api, url: string, events: string[] = ['*']) {
  const res = await api.post(W, { url, events });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; secret: string };
}

const headersOf = (r: Received) => ({
  'webhook-id': String(r.headers['webhook-id']),
  'webhook-timestamp': String(r.headers['webhook-timestamp']),
  'webhook-signature': String(r.headers['webhook-signature']),
});

const arrived = (url: string, n = 1, timeoutMs = 20_000) => eventually(async () => receiver.received(url).length >= n && receiver.received(url), timeoutMs);

describe('webhook endpoints API', () => {
  it('creates with a whsec_ secret shown once, lists, gets, patches, rotates and deletes', async () => {
    const { api } = await orgWithAgent(svc);
    const created = await api.post(W, { url: 'https://hooks.example.com/a', events: ['widget.paused', 'widget.activated'], description: 'CRM' });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`${W}/${created.body.id}`);
    expect(created.body).toMatchObject({ url: 'https://hooks.example.com/a', events: ['widget.paused', 'widget.activated'], description: 'CRM', enabled: true, disabled_reason: null });
    const secret: string = created.body.secret;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
    const keyBytes = Buffer.from(secret.slice(6), 'base64').length;
    expect(keyBytes).toBeGreaterThanOrEqual(24);
    expect(keyBytes).toBeLessThanOrEqual(32);

    const one = await api.get(`${W}/${created.body.id}`);
    expect(one.status).toBe(200);
    expect(one.body.secret).toBeUndefined();
    expect(one.text).not.toContain(secret.slice(6));
    const list = await api.get(W);
    expect(list.body).toMatchObject({ total: 1, limit: 50, offset: 0 });
    expect(list.text).not.toContain(secret.slice(6));
    expect(list.body.data[0].secret).toBeUndefined();

    const patched = await api.patch(`${W}/${created.body.id}`, { events: ['*'], enabled: false, description: null });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ events: ['*'], enabled: false, description: null, url: 'https://hooks.example.com/a' });
    expect(patched.body.secret).toBeUndefined();
    expect((await api.patch(`${W}/${created.body.id}`, {})).body).toMatchObject({ enabled: false });

    const rotated = await api.post(`${W}/${created.body.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(secret);
    expect((await api.get(W)).text).not.toContain(rotated.body.secret.slice(6));

    expect((await api.delete(`${W}/${created.body.id}`)).status).toBe(204);
    expect((await api.get(`${W}/${created.body.id}`)).status).toBe(404);
    expect((await api.delete(`${W}/${created.body.id}`)).status).toBe(404);
  });

  it('hides one organization\'s endpoints from another (404, as missing)', async () => {
    const a = await orgWithAgent(svc);
    const b = await orgWithAgent(svc);
    const { id } = await createEndpoint(a.api, 'https://hooks.example.com/x');
    for (const res of [
      await b.api.get(`${W}/${id}`), await b.api.patch(`${W}/${id}`, { enabled: false }), await b.api.delete(`${W}/${id}`),
      await b.api.post(`${W}/${id}/rotate-secret`), await b.api.get(`${W}/${id}/deliveries`),
    ]) expect(res.status).toBe(404);
    expect((await b.api.get(W)).body.total).toBe(0);
    expect((await a.api.get(`${W}/${id}`)).body.enabled).toBe(true);
  });

  it('checks permissions: org.read to read, org.write to change', async () => {
    const { api } = await orgWithAgent(svc);
    const { id } = await createEndpoint(api, 'https://hooks.example.com/p');
    const reader = (await keyWith(svc, api, ['org.read'])).api;
    const outsider = (await keyWith(svc, api, ['agents.read'])).api;
    expect((await reader.get(W)).status).toBe(200);
    expect((await reader.get(`${W}/${id}/deliveries`)).status).toBe(200);
    for (const res of [
      await reader.post(W, { url: 'https://hooks.example.com/q', events: ['*'] }), await reader.patch(`${W}/${id}`, { enabled: false }),
      await reader.delete(`${W}/${id}`), await reader.post(`${W}/${id}/rotate-secret`),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'missing_permission', required_permission: 'org.write' });
    }
    for (const res of [await outsider.get(W), await outsider.get(`${W}/${id}`)]) {
      expect(res.status).toBe(403);
      expect(res.body.required_permission).toBe('org.read');
    }
    // 403 before 400: a malformed body from a reader is still refused for the permission.
    expect((await reader.post(W, { url: 1 })).status).toBe(403);
  });

  it('validates events and URLs', async () => {
    const { api } = await orgWithAgent(svc);
    const bad = async (body: unknown) => {
      const res = await api.post(W, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('validation_error');
      return res.body.errors[0] as { field: string; code: string };
    };
    expect(await bad({ url: 'https://hooks.example.com', events: ['widget.paused', 'widget.exploded'] })).toMatchObject({ field: 'events[1]', code: 'invalid_value' });
    expect(await bad({ url: 'https://hooks.example.com', events: [] })).toMatchObject({ field: 'events' });
    expect(await bad({ url: 'https://hooks.example.com', events: ['*', '*'] })).toMatchObject({ field: 'events' });
    expect(await bad({ url: 'not a url', events: ['*'] })).toMatchObject({ field: 'url' });
    expect(await bad({ url: 'ftp://hooks.example.com', events: ['*'] })).toMatchObject({ field: 'url' });
    expect(await bad({ events: ['*'] })).toMatchObject({ field: 'url', code: 'required' });
    expect(await bad({ url: 'https://hooks.example.com', events: ['*'], secret: 'whsec_x' })).toMatchObject({ field: 'secret', code: 'unknown_field' });
  });

  it('refuses http and private targets unless ALLOW_PRIVATE_NETWORK_TARGETS', async () => {
    const { api } = await orgWithAgent(strict);
    const http = await api.post(W, { url: 'http://hooks.example.com/in', events: ['*'] });
    expect(http.status).toBe(400);
    expect(http.body).toMatchObject({ code: 'validation_error', errors: [{ field: 'url', code: 'https_required' }] });
    for (const url of [
      'https://127.0.0.1/in', 'https://localhost:8443/in', 'https://10.1.2.3/', 'https://172.16.0.1/', 'https://192.168.1.1/',
      'https://169.254.169.254/latest/meta-data', 'https://100.64.0.1/', 'https://0.0.0.0/', 'https://[::1]/', 'https://[fd00::1]/',
      'https://[fe80::1]/', 'https://[::ffff:127.0.0.1]/', 'https://[::]/',
    ]) {
      const res = await api.post(W, { url, events: ['*'] });
      expect(res.status, url).toBe(400);
      expect(res.body.code, url).toBe('private_network_target');
    }
    const { id } = await createEndpoint(api, 'https://93.184.215.14/in');
    const patch = await api.patch(`${W}/${id}`, { url: 'https://192.168.0.10/in' });
    expect(patch.status).toBe(400);
    expect(patch.body.code).toBe('private_network_target');
    // The same private URL is fine where private targets are allowed (local development).
    expect((await (await orgWithAgent(svc)).api.post(W, { url: 'http://127.0.0.1:9/in', events: ['*'] })).status).toBe(201);
  });
});

describe('deliveries', () => {
  it('delivers a signed Standard Webhook that an independent verifier accepts', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const url = receiver.url();
    const endpoint = await createEndpoint(api, url, ['widget.paused']);
    const patched = await api.patch(`/api/v1/rest/agents/${agent.id}`, { status: 'paused' });
    expect(patched.status).toBe(200);

    const [got] = await arrived(url);
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['user-agent']).toMatch(/AgentManagementService/);
    const payload = new Webhook(endpoint.secret).verify(got!.body, headersOf(got!)) as Record<string, any>;
    expect(payload).toEqual({
      id: got!.headers['webhook-id'], type: 'widget.paused', created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      data: {
        agent: patched.body,
        // The widget as GET /api/v1/widgets/:id answers it.
        widget: (await api.get(`/api/v1/widgets/${agent.public_key}`)).body,
      },
    });
    expect(payload.id).toMatch(/^evt_[A-Za-z0-9_-]{20,}$/);
    expect(Math.abs(Number(got!.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
    // Another secret does not verify.
    expect(() => new Webhook('whsec_' + Buffer.alloc(32, 7).toString('base64')).verify(got!.body, headersOf(got!))).toThrow();

    const deliveries = await eventually(async () => {
      const res = await api.get(`${W}/${endpoint.id}/deliveries`);
      return res.body.data[0]?.status === 'succeeded' && res.body;
    });
    expect(deliveries).toMatchObject({ total: 1, limit: 50, offset: 0 });
    expect(deliveries.data[0]).toEqual({
      id: expect.any(String), event_id: payload.id, event_type: 'widget.paused', status: 'succeeded',
      attempts: [{ at: expect.any(String), status_code: 200, error: null }],
    });

    // A first attempt that succeeds is the dispatcher's alone: no workflow ran for it.
    await expect(svc.temporal.workflow.getHandle(`webhook-delivery:${payload.id}:${endpoint.id}`).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    expect((await api.get(`${W}/${endpoint.id}`)).body).toMatchObject({ success_rate_24h: 1, last_failure_at: null });
  });

  it('sends the agent of a status change exactly as the PATCH answered it, whatever its configuration holds', async () => {
    // The PATCH and its event are written by one statement, the event's agent planned in memory (issue 48): its JSON must be
    // the answer's, key order included (jsonb orders an object's keys), and its updated_at the written one.
    const { api, agent } = await orgWithAgent(svc);
    const url = receiver.url();
    await createEndpoint(api, url, ['widget.paused']);
    const path = `/api/v1/rest/agents/${agent.id}`;
    const settings = { zz: 1, b: { y: [1, { z: 2, aa: 'é' }], x: 1.5 }, '10': 'ten', '2': 'two', é: true, aaa: null, 'ü-key': 1e21 };
    expect((await api.patch(path, { phone_settings: settings, localized_copy: { fr: { intro_title: 'Bonjour' } } })).status).toBe(200);
    expect((await api.put(`${path}/draft`, { persona: 'Staged', phone_settings: { zz: 2, c: 3 } })).status).toBe(200);
    const patched = await api.patch(path, { status: 'paused', phone_settings: { new_key: [3, 2, 1], zz: null }, localized_copy: { en: { intro_title: 'Hi' } } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.has_pending_draft).toBe(true);

    const [got] = await arrived(url);
    const payload = JSON.parse(got!.body) as { data: { agent: unknown; widget: unknown } };
    expect(JSON.stringify(payload.data.agent)).toBe(JSON.stringify(patched.body));
    expect(JSON.stringify(payload.data.agent)).toBe(JSON.stringify((await api.get(path)).body));
    expect(JSON.stringify(payload.data.widget)).toBe(JSON.stringify((await api.get(`/api/v1/widgets/${agent.public_key}`)).body));
  });

  it('retries failed attempts with the same webhook-id and logs each attempt', async () => {
    const { api, agent, orgId } = await orgWithAgent(svc);
    const url = receiver.url({ failFirst: 2, failStatus: 503 });
    const endpoint = await createEndpoint(api, url);
    await api.patch(`/api/v1/rest/agents/${agent.id}`, { status: 'paused' });

    const got = await arrived(url, 3);
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(1);
    for (const r of got) new Webhook(endpoint.secret).verify(r.body, headersOf(r));
    // The delays of WEBHOOK_RETRY_DELAYS (1 s each) separate the attempts.
    expect(got[1]!.at - got[0]!.at).toBeGreaterThanOrEqual(900);
    expect(got[2]!.at - got[1]!.at).toBeGreaterThanOrEqual(900);

    const delivery = await eventually(async () => {
      const d = (await api.get(`${W}/${endpoint.id}/deliveries`)).body.data[0];
      return d?.status === 'succeeded' && d;
    });
    expect(delivery.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([503, 503, 200]);
    expect(delivery.attempts.map((a: { error: string | null }) => a.error)).toEqual(['HTTP 503', 'HTTP 503', null]);

    // The first attempt failed, so the retries ran as the delivery's workflow, with today's id and attributes.
    const handle = svc.temporal.workflow.getHandle(`webhook-delivery:${delivery.event_id}:${endpoint.id}`);
    expect(await handle.result()).toEqual({ status: 'succeeded', attempts: 3 });
    await settled(svc, [orgId]);
    expect(receiver.received(url)).toHaveLength(3);
    const description = await handle.describe();
    expect(description.taskQueue).toBe(`${svc.config.TASK_QUEUE_PREFIX}-webhooks`);
    expect(description.typedSearchAttributes.get(SEARCH_ATTRIBUTES.OrganizationId)).toBe(orgId);
    expect(description.typedSearchAttributes.get(SEARCH_ATTRIBUTES.AgentId)).toBe(agent.id);
    const health = (await api.get(`${W}/${endpoint.id}`)).body;
    expect(health.success_rate_24h).toBeCloseTo(1 / 3, 3);
    expect(Date.parse(health.last_failure_at)).toBe(Date.parse(delivery.attempts[1].at));
  });

  it('ends failed after the last retry; a manual retry sends it again', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const url = receiver.url({ failFirst: 1000 });
    const endpoint = await createEndpoint(api, url);
    await api.patch(`/api/v1/rest/agents/${agent.id}`, { status: 'paused' });

    const failed = await eventually(async () => {
      const d = (await api.get(`${W}/${endpoint.id}/deliveries`)).body.data[0];
      return d?.status === 'failed' && d;
    });
    expect(failed.attempts).toHaveLength(3);
    expect(failed.attempts.every((a: { status_code: number }) => a.status_code === 500)).toBe(true);
    expect(receiver.received(url)).toHaveLength(3);

    receiver.setBehaviour(url, { status: 204 });
    const retry = await api.post(`${W}/${endpoint.id}/deliveries/${failed.id}/retry`);
    expect(retry.status).toBe(202);
    expect(retry.body).toMatchObject({ id: failed.id, status: 'pending', event_id: failed.event_id });
    const got = await arrived(url, 4);
    expect(got[3]!.headers['webhook-id']).toBe(failed.event_id);
    new Webhook(endpoint.secret).verify(got[3]!.body, headersOf(got[3]!));
    const done = await eventually(async () => {
      const d = (await api.get(`${W}/${endpoint.id}/deliveries`)).body.data[0];
      return d?.status === 'succeeded' && d;
    });
    expect(done.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([500, 500, 500, 204]);
    // A second retry of a succeeded delivery sends it once more, under a new workflow id.
    expect((await api.post(`${W}/${endpoint.id}/deliveries/${failed.id}/retry`)).status).toBe(202);
    await arrived(url, 5);

    expect((await api.post(`${W}/${endpoint.id}/deliveries/0190a5c4-0000-7000-8000-000000000000/retry`)).status).toBe(404);
  });

  it('treats a redirect as a failed attempt and does not follow it', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const target = receiver.url();
    const url = receiver.url({ status: 302, headers: { location: target } });
    const endpoint = await createEndpoint(api, url);
    await api.patch(`/api/v1/rest/agents/${agent.id}`, { status: 'paused' });
    const delivery = await eventually(async () => {
      const d = (await api.get(`${W}/${endpoint.id}/deliveries`)).body.data[0];
      return d?.status === 'failed' && d;
    });
    expect(delivery.attempts[0]).toMatchObject({ status_code: 302, error: expect.stringMatching(/redirect/) });
    expect(receiver.received(target)).toHaveLength(0);
  });

  it('signs with the new and the old secret for 24 hours after a rotation', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const url = receiver.url();
    const endpoint = await createEndpoint(api, url);
    const { body: rotated } = await api.post(`${W}/${endpoint.id}/rotate-secret`);
    await api.patch(`/api/v1/rest/agents/${agent.id}`, { status: 'paused' });
    const [got] = await arrived(url);
    expect(String(got!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const secret of [rotated.secret, endpoint.secret]) new Webhook(secret).verify(got!.body, headersOf(got!));

    // Once the grace period is over, only the new secret signs.
    await svc.sql`update webhook_endpoints set previous_secret_expires_at = now() - interval '1 second' where id = ${endpoint.id}`;
    await api.patch(`/api/v1/rest/agents/${agent.id}`, { status: 'active' });
    const later = (await arrived(url, 2))[1]!;
    expect(String(later.headers['webhook-signature']).split(' ')).toHaveLength(1);
    new Webhook(rotated.secret).verify(later.body, headersOf(later));
    expect(() => new Webhook(endpoint.secret).verify(later.body, headersOf(later))).toThrow();
  });

  it('sends only subscribed types to enabled endpoints of the event\'s organization', async () => {
    const { api, agent, orgId } = await orgWithAgent(svc);
    const other = await orgWithAgent(svc);
    const all = receiver.url();
    const activatedOnly = receiver.url();
    const disabled = receiver.url();
    const foreign = receiver.url();
    await createEndpoint(api, all, ['*']);
    await createEndpoint(api, activatedOnly, ['widget.activated']);
    const off = await createEndpoint(api, disabled, ['*']);
    await api.patch(`${W}/${off.id}`, { enabled: false });
    await createEndpoint(other.api, foreign, ['*']);

    await api.patch(`/api/v1/rest/agents/${agent.id}`, { status: 'paused' });
    await api.patch(`/api/v1/rest/agents/${agent.id}`, { name: 'Renamed' }); // no status change: no event
    await api.patch(`/api/v1/rest/agents/${agent.id}`, { status: 'active' });
    const got = await arrived(all, 2);
    await arrived(activatedOnly, 1);
    await settled(svc, [orgId, other.orgId]);
    expect(receiver.received(all).map((r) => JSON.parse(r.body).type)).toEqual(expect.arrayContaining(['widget.paused', 'widget.activated']));
    expect(receiver.received(all)).toHaveLength(2);
    expect(receiver.received(activatedOnly).map((r) => JSON.parse(r.body).type)).toEqual(['widget.activated']);
    expect(receiver.received(disabled)).toHaveLength(0);
    expect(receiver.received(foreign)).toHaveLength(0);
    expect(JSON.parse(got.find((r) => JSON.parse(r.body).type === 'widget.activated')!.body).data.agent).toMatchObject({ name: 'Renamed', status: 'active' });
  });

  it('disables an endpoint whose deliveries have failed for 5 days, and PATCH enabled=true resumes it', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const url = receiver.url({ failFirst: 1000 });
    const endpoint = await createEndpoint(api, url);
    await svc.sql`update webhook_endpoints set failing_since = now() - interval '5 days 1 hour' where id = ${endpoint.id}`;
    await api.patch(`/api/v1/rest/agents/${agent.id}`, { status: 'paused' });
    const off = await eventually(async () => {
      const res = await api.get(`${W}/${endpoint.id}`);
      return res.body.enabled === false && res.body;
    });
    expect(off.disabled_reason).toMatch(/5 days/);
    // The disabled endpoint's pending delivery stops at once instead of using its retries.
    const delivery = await eventually(async () => {
      const d = (await api.get(`${W}/${endpoint.id}/deliveries`)).body.data[0];
      return d?.status === 'failed' && d;
    });
    expect(delivery.attempts).toHaveLength(1);
    expect((await api.post(`${W}/${endpoint.id}/deliveries/${delivery.id}/retry`)).body.code).toBe('invalid_state');

    const resumed = await api.patch(`${W}/${endpoint.id}`, { enabled: true });
    expect(resumed.body).toMatchObject({ enabled: true, disabled_reason: null });
    const [row] = await svc.sql`select failing_since from webhook_endpoints where id = ${endpoint.id}`;
    expect(row!.failing_since).toBeNull();
  });

  // Issue 48: an agent's PATCH fans its event out in its own statement. An endpoint deleted while that statement makes
  // its delivery fails it whole (the delivery's foreign key); the PATCH is then made under the row lock, and its event is
  // written for the dispatcher, which fans it out to the endpoints left.
  it('answers a PATCH whose fan-out meets an endpoint deleted meanwhile, and delivers its event to the endpoints left', async () => {
    const { api, agent, orgId } = await orgWithAgent(svc);
    const kept = receiver.url();
    const gone = receiver.url();
    await createEndpoint(api, kept, ['widget.paused']);
    const doomed = await createEndpoint(api, gone, ['widget.paused']);
    let patched: Promise<{ status: number }> | undefined;
    await svc.sql.begin(async (tx) => {
      await tx`delete from webhook_endpoints where id = ${doomed.id}`;
      // Committed once the PATCH's statement waits on the deleted row (its delivery's foreign key check).
      patched = api.patch(`/api/v1/rest/agents/${agent.id}`, { status: 'paused' });
      await eventually(async () => (await svc.sql<{ n: number }[]>`select count(*)::int as n from pg_stat_activity
        where wait_event_type = 'Lock' and query like '%fanned as%'`)[0]!.n > 0);
    });
    expect((await patched!).status).toBe(200);
    await arrived(kept, 1);
    await settled(svc, [orgId]);
    expect(receiver.received(kept).map((r) => JSON.parse(r.body).type)).toEqual(['widget.paused']);
    expect(receiver.received(gone)).toHaveLength(0);
    expect(await svc.sql`select 1 from events where org_id = ${orgId} and type = 'widget.paused'`).toHaveLength(1);
    expect((await api.get(`/api/v1/rest/agents/${agent.id}`)).body.status).toBe('paused');
  });

  it('delivers a change committed while no worker ran, once the workers start', async () => {
    // A database of its own: the worker of `svc` would otherwise deliver it at once.
    const own = await freshDatabase();
    const apiOnly = await startTestService(FAST, { worker: false, databaseUrl: own.url, env: KEY });
    try {
      const { api, agent, orgId } = await orgWithAgent(apiOnly);
      const url = receiver.url({ failFirst: 1 });
      const endpoint = await createEndpoint(api, url);
      expect((await api.patch(`/api/v1/rest/agents/${agent.id}`, { status: 'paused' })).status).toBe(200);
      // Committed to the outbox with its delivery (an agent's PATCH fans its event out in its own statement, issue 48),
      // and left there: no dispatcher claimed or attempted it.
      expect(await apiOnly.sql`select 1 from events where org_id = ${orgId} and type = 'widget.paused'`).toHaveLength(1);
      expect(await apiOnly.sql`select 1 from webhook_deliveries where org_id = ${orgId} and status = 'pending' and claimed_at is null
        and workflow_started_at is null and not exists (select 1 from webhook_delivery_attempts a where a.delivery_id = webhook_deliveries.id)`).toHaveLength(1);

      const workersStartedAt = Date.now();
      const workers = await startWorkers({
        sql: apiOnly.sql, config: apiOnly.config, address: inject('temporalAddress'), namespace: apiOnly.config.TEMPORAL_NAMESPACE,
        log: createLogger('silent'), workflowBundle: await workflowBundle(),
      });
      try {
        const got = await arrived(url, 2);
        expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(1);
        for (const r of got) new Webhook(endpoint.secret).verify(r.body, headersOf(r));
        // Nothing arrived while no worker ran: every attempt came after the workers started, and the
        // delivery's log (every attempt, whoever made it) holds these two only.
        for (const r of got) expect(r.at).toBeGreaterThanOrEqual(workersStartedAt);
        const delivery = await eventually(async () => {
          const d = (await api.get(`${W}/${endpoint.id}/deliveries`)).body.data[0];
          return d?.status === 'succeeded' && d;
        });
        expect(delivery.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([500, 200]);
        expect(receiver.received(url)).toHaveLength(2);
      } finally {
        await workers.shutdown();
      }
    } finally {
      await apiOnly.stop();
      await own.drop();
    }
  });

  it('attempts each delivery once however many dispatchers race for the outbox (FOR UPDATE SKIP LOCKED)', async () => {
    expect(colocatedClient(svc.config.TEMPORAL_NAMESPACE, taskQueues(svc.config).webhooks)).toBeDefined();
    const { api, agent, orgId } = await orgWithAgent(svc);
    const url = receiver.url();
    await createEndpoint(api, url, ['widget.activated']);
    const widget = (await api.get(`/api/v1/widgets/${agent.public_key}`)).body;
    const deps = { sql: svc.sql, temporal: svc.temporal, config: svc.config, log: createLogger('silent') };
    // Two more dispatchers besides the one of svc's worker, as two more replicas would run.
    const others = await Promise.all([1, 2].map(() => startDispatcher({ ...deps, secrets: createSecretBox(Buffer.from(KEY.SECRETS_KEY, 'base64')) })));
    try {
      const eventIds = await svc.sql.begin(async (tx) => {
        const ids: string[] = [];
        for (let i = 0; i < 20; i++) ids.push(await emitEvent(tx, { orgId, type: 'widget.activated', data: { agent, widget } }));
        return ids;
      });
      const got = await arrived(url, 20);
      await settled(svc, [orgId]);
      expect(receiver.received(url)).toHaveLength(20);
      expect(new Set(got.map((r) => r.headers['webhook-id']))).toEqual(new Set(eventIds));
      // A workflow start of a delivery already made is one more attempt, once, however often it is asked for.
      const [delivery] = await svc.sql<{ id: string; endpoint_id: string }[]>`select id, endpoint_id from webhook_deliveries where event_id = ${eventIds[0]!}`;
      const pending = { deliveryId: delivery!.id, eventId: eventIds[0]!, endpointId: delivery!.endpoint_id, orgId, agentId: agent.id };
      await Promise.all([startDeliveryWorkflow(deps, pending), startDeliveryWorkflow(deps, pending)]);
      await arrived(url, 21);
      const handle = svc.temporal.workflow.getHandle(`webhook-delivery:${eventIds[0]!}:${delivery!.endpoint_id}`);
      expect(await handle.result()).toEqual({ status: 'succeeded', attempts: 1 });
      const { runId } = await handle.describe();
      await startDeliveryWorkflow(deps, pending);
      // No second run (the only thing that would attempt again), and nothing else pending.
      expect(await handle.describe()).toMatchObject({ runId, status: { name: 'COMPLETED' } });
      await settled(svc, [orgId]);
      expect(receiver.received(url)).toHaveLength(21);
    } finally {
      await Promise.all(others.map((d) => d.stop()));
    }
  });

  it('delivers a burst above the per-endpoint limit by the fast path alone: no workflow, nothing left to the recovery sweep', async () => {
    const { api, agent, orgId } = await orgWithAgent(svc);
    // One endpoint answering at once, one a little slowly, so its 4 slots stay full and the rest waits.
    const urls = [receiver.url(), receiver.url({ delayMs: 50 })];
    const endpoints = await Promise.all(urls.map((url) => createEndpoint(api, url, ['widget.activated'])));
    const widget = (await api.get(`/api/v1/widgets/${agent.public_key}`)).body;
    const burst = 60;
    // Each event its own transaction, committed concurrently: many notifications while attempts run.
    const eventIds = await Promise.all(Array.from({ length: burst }, () =>
      svc.sql.begin((tx) => emitEvent(tx, { orgId, type: 'widget.activated', data: { agent, widget } }))));
    for (const url of urls) await arrived(url, burst, 30_000);
    // Successes are recorded in batches: wait until every delivery is settled.
    const deliveries = await eventually(async () => {
      const rows = await svc.sql<{ id: string; event_id: string; endpoint_id: string; status: string; workflow_started_at: Date | null; attempts: number }[]>`
        select d.id, d.event_id, d.endpoint_id, d.status, d.workflow_started_at,
          (select count(*)::int from webhook_delivery_attempts a where a.delivery_id = d.id) as attempts
        from webhook_deliveries d where d.org_id = ${orgId}`;
      return rows.length === 2 * burst && rows.every((r) => r.status !== 'pending') && rows;
    });
    // The recovery sweep (every 2 s here, for claims older than 2 s) would have started a workflow for any it took.
    expect(deliveries.filter((d) => d.status !== 'succeeded' || d.workflow_started_at !== null || d.attempts !== 1)).toEqual([]);
    for (const d of deliveries) {
      await expect(svc.temporal.workflow.getHandle(`webhook-delivery:${d.event_id}:${d.endpoint_id}`).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    }
    await settled(svc, [orgId]);
    for (const [i, url] of urls.entries()) {
      const got = receiver.received(url);
      expect(got).toHaveLength(burst);
      expect(new Set(got.map((r) => r.headers['webhook-id']))).toEqual(new Set(eventIds));
      new Webhook(endpoints[i]!.secret).verify(got[0]!.body, headersOf(got[0]!));
    }
  });

  it('attempts an event whose notification was lost by the dispatcher, woken by the recovery sweep (no workflow)', async () => {
    const { api, agent, orgId } = await orgWithAgent(svc);
    const url = receiver.url();
    await createEndpoint(api, url, ['widget.activated']);
    const widget = (await api.get(`/api/v1/widgets/${agent.public_key}`)).body;
    // Committed with triggers off: no NOTIFY reaches the dispatchers, as when one is lost.
    const eventId = await svc.sql.begin(async (tx) => {
      await tx`set local session_replication_role = replica`;
      return emitEvent(tx, { orgId, type: 'widget.activated', data: { agent, widget } });
    });
    const [got] = await arrived(url, 1, 30_000);
    expect(got!.headers['webhook-id']).toBe(eventId);
    const delivery = await eventually(async () => {
      const [row] = await svc.sql<{ status: string; workflow_started_at: Date | null }[]>`
        select status, workflow_started_at from webhook_deliveries where event_id = ${eventId}`;
      return row?.status === 'succeeded' && row;
    });
    // The sweep fanned the event out and woke the dispatchers, one of which attempted it; had it not
    // woken them, the next sweep (2 s later, claims older than 2 s) would have handed it to a workflow.
    expect(delivery.workflow_started_at).toBeNull();
  });

  it('writes an event no endpoint receives dispatched; one written beside an endpoint is received once the endpoint commits first', async () => {
    const { api, agent, orgId } = await orgWithAgent(svc);
    const widget = (await api.get(`/api/v1/widgets/${agent.public_key}`)).body;
    const emit = (db: Parameters<typeof emitEvent>[0]) => emitEvent(db, { orgId, type: 'widget.activated', data: { agent, widget } });
    const dispatchedAt = async (id: string) => (await svc.sql<{ at: Date | null }[]>`select dispatched_at as at from events where id = ${id}`)[0]!.at;
    // No endpoint: nothing for a dispatcher to fan out.
    const unheard = await svc.sql.begin(emit);
    expect(await dispatchedAt(unheard)).not.toBeNull();

    // An endpoint being created while the event is written, committed before it: the event is left to the dispatcher,
    // whose fan-out, after the event's commit, sees the endpoint.
    const url = receiver.url();
    const box = createSecretBox(Buffer.from(KEY.SECRETS_KEY, 'base64'));
    let commitEndpoint!: () => void;
    let endpointWritten!: () => void;
    const written = new Promise<void>((resolve) => { endpointWritten = resolve; });
    const endpoint = svc.sql.begin(async (tx) => {
      await insertEndpoint(tx, box, orgId, { url, events: ['*'], secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}` });
      endpointWritten();
      await new Promise<void>((resolve) => { commitEndpoint = resolve; });
    });
    await written;
    const heard = await svc.sql.begin(async (tx) => {
      const id = await emit(tx);
      commitEndpoint();
      await endpoint;
      return id;
    });
    const [got] = await arrived(url);
    expect(got!.headers['webhook-id']).toBe(heard);

    // The other order, in an organization with no endpoint: an event written first holds the endpoints' lock until it
    // commits, so an endpoint created meanwhile commits after it, and does not receive it.
    const other = await orgWithAgent(svc);
    const otherWidget = (await other.api.get(`/api/v1/widgets/${other.agent.public_key}`)).body;
    const later = receiver.url();
    let commitEvent!: () => void;
    let eventWritten!: () => void;
    const writtenFirst = new Promise<void>((resolve) => { eventWritten = resolve; });
    const first = svc.sql.begin(async (tx) => {
      const id = await emitEvent(tx, { orgId: other.orgId, type: 'widget.activated', data: { agent: other.agent, widget: otherWidget } });
      eventWritten();
      await new Promise<void>((resolve) => { commitEvent = resolve; });
      return id;
    });
    await writtenFirst;
    const created = other.api.post(W, { url: later, events: ['*'] });
    await eventually(async () => (await svc.sql`select 1 from pg_stat_activity
      where wait_event_type = 'Lock' and wait_event = 'advisory' and query like '%webhook_endpoints%'`).length > 0);
    commitEvent();
    expect(await dispatchedAt(await first)).not.toBeNull();
    expect((await created).status).toBe(201);
    await settled(svc, [orgId, other.orgId]);
    expect(receiver.received(later)).toHaveLength(0);
    expect(receiver.received(url).map((r) => r.headers['webhook-id'])).toEqual([heard]);
  });

  it('hands a delivery whose dispatcher died mid-attempt to a workflow, through the recovery sweep', async () => {
    const { api, agent, orgId } = await orgWithAgent(svc);
    const url = receiver.url();
    const endpoint = await createEndpoint(api, url, ['widget.activated']);
    // As if a dispatcher claimed the delivery and was killed: fanned out, claimed long ago, never finished.
    const widget = (await api.get(`/api/v1/widgets/${agent.public_key}`)).body;
    const eventId = await svc.sql.begin(async (tx) => {
      const id = await emitEvent(tx, { orgId, type: 'widget.activated', data: { agent, widget } });
      await tx`update events set dispatched_at = now() where id = ${id}`;
      await tx`insert into webhook_deliveries (id, org_id, endpoint_id, event_id, claimed_at)
        values (gen_random_uuid(), ${orgId}, ${endpoint.id}, ${id}, now() - interval '1 hour')`;
      return id;
    });
    const [got] = await arrived(url, 1, 30_000);
    expect(got!.headers['webhook-id']).toBe(eventId);
    new Webhook(endpoint.secret).verify(got!.body, headersOf(got!));
    const handle = svc.temporal.workflow.getHandle(`webhook-delivery:${eventId}:${endpoint.id}`);
    expect(await handle.result()).toEqual({ status: 'succeeded', attempts: 1 });
    await settled(svc, [orgId]);
    expect(receiver.received(url)).toHaveLength(1);
  });
});

describe('the recovery sweeper (issue 42)', () => {
  it('is one long-lived run that sweeps every WEBHOOK_SWEEP_SECONDS, not a Schedule starting a run per tick', async () => {
    const { scheduleIds } = await import('../src/temporal/ids.ts');
    // No Schedule: its runs filled the Web UI's list (9 of 15 rows after five minutes).
    await expect(svc.temporal.schedule.getHandle(scheduleIds.webhookRecoverySweep(svc.config)).describe()).rejects.toThrow();
    const handle = svc.temporal.workflow.getHandle(workflowIds.webhookRecoverySweeper(svc.config));
    const first = await handle.describe();
    expect(first.status.name).toBe('RUNNING');
    expect(first.type).toBe('webhookRecoverySweeper');
    expect(first.taskQueue).toBe(`${svc.config.TASK_QUEUE_PREFIX}-webhooks`);
    // Three sweeps (2 s apart) in the same run.
    const sweeps = async () => ((await handle.fetchHistory()).events ?? []).filter((e) => e.activityTaskCompletedEventAttributes).length;
    const before = await sweeps();
    await eventually(async () => (await sweeps()) >= before + 3, 60_000, 250);
    const later = await handle.describe();
    expect(later.runId).toBe(first.runId);
    expect(later.status.name).toBe('RUNNING');
    // A second worker start signals the same run instead of starting another.
    const { ensureSchedules } = await import('../src/temporal/schedules.ts');
    await ensureSchedules(svc.temporal, svc.config);
    expect((await handle.describe()).runId).toBe(first.runId);
    // Its history so far (sweeps, timers, the signal) replays on the current workflow code.
    const { replayAll } = await import('./support/replay.ts');
    await replayAll([{ workflowId: handle.workflowId, history: await handle.fetchHistory() }]);
  });
});

describe('signing secrets at rest', () => {
  it('stores no plaintext webhook secret anywhere in the database', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const url = receiver.url();
    const created = await createEndpoint(api, url);
    const rotated = (await api.post(`${W}/${created.id}/rotate-secret`)).body as { secret: string };
    await api.patch(`/api/v1/rest/agents/${agent.id}`, { status: 'paused' });
    const [got] = await arrived(url);
    // Both secrets sign (the old one for 24 hours), so the worker opened both.
    new Webhook(rotated.secret).verify(got!.body, headersOf(got!));
    new Webhook(created.secret).verify(got!.body, headersOf(got!));

    const keys = [created.secret, rotated.secret].flatMap((s) => [s, s.slice('whsec_'.length), Buffer.from(s.slice('whsec_'.length), 'base64').toString('hex')]);
    const tables = await svc.sql<{ name: string }[]>`select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`;
    expect(tables.length).toBeGreaterThan(10);
    for (const { name } of tables) {
      const rows = await svc.sql.unsafe<{ row: string }[]>(`select t::text as row from "${name}" t`);
      for (const { row } of rows) for (const key of keys) expect(row.includes(key), `${name} holds a webhook secret`).toBe(false);
    }
  });

  it('seals secrets stored in plaintext before the migration, and deliveries still verify', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const url = receiver.url();
    const endpoint = await createEndpoint(api, url);
    // A row as an earlier version stored it.
    const plaintext = 'whsec_' + Buffer.alloc(32, 9).toString('base64');
    await svc.sql`update webhook_endpoints set secret_sealed = ${plaintext} where id = ${endpoint.id}`;
    expect(await svc.sql.begin((tx) => sealPlaintextWebhookSecrets(tx, createSecretBox(Buffer.from(KEY.SECRETS_KEY, 'base64'))))).toBe(1);
    const [row] = await svc.sql<{ secret_sealed: string }[]>`select secret_sealed from webhook_endpoints where id = ${endpoint.id}`;
    expect(row!.secret_sealed).toMatch(/^v1:/);
    await api.patch(`/api/v1/rest/agents/${agent.id}`, { status: 'paused' });
    const [got] = await arrived(url);
    new Webhook(plaintext).verify(got!.body, headersOf(got!));
  });
});
