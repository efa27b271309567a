import { afterAll, beforeAll, expect, it } from 'vitest';
import { crashStage } from './support/crash-stage.ts';
import { Webhook } from 'standardwebhooks';
import { eventually } from './helpers.ts';
import { newAgent, newOrg } from './support/orgs.ts';
import { startReceiver, type Receiver } from './webhook-receiver.ts';

/**
 * Issue 16's promise: a worker killed with SIGKILL in the middle of a burst loses no event. Its
 * claimed deliveries are taken over by the recovery sweep once the claim is stale, and its
 * unclaimed ones by the restarted worker's dispatcher.
 */

const SETTINGS = {
  ALLOW_PRIVATE_NETWORK_TARGETS: true, WEBHOOK_RETRY_DELAYS: '1,1,1,1', WEBHOOK_SWEEP_SECONDS: 1, WEBHOOK_CLAIM_TIMEOUT_SECONDS: 3,
} as const;
const SECRETS_KEY = Buffer.alloc(32, 16).toString('base64');
const EVENTS = 60;

const stage = crashStage(SETTINGS, SECRETS_KEY);
const { startWorkerProcess } = stage;
let receiver: Receiver;
beforeAll(async () => { receiver = await startReceiver(); });
afterAll(async () => { await receiver?.close(); });

it('kill -9 of the worker mid-burst: after a restart every event reaches every endpoint, each attempt with its event\'s webhook-id', async () => {
  const org = await newOrg(stage.api);
  // Slow answers keep attempts in flight when the kill lands; the second endpoint also fails its first tries.
  const failFirst = [0, 5];
  const urls = failFirst.map((n) => receiver.url({ delayMs: 150, failFirst: n }));
  const secrets: string[] = [];
  for (const url of urls) {
    const res = await org.api.post('/api/v1/rest/webhooks', { url, events: ['widget.paused'] });
    expect(res.status, res.text).toBe(201);
    secrets.push(res.body.secret);
  }
  const agents: string[] = [];
  for (let i = 0; i < EVENTS; i++) agents.push((await newAgent(org.api, `Burst ${i}`)).id);

  let worker = await startWorkerProcess();
  // The burst, eight PATCHes at a time, while the worker delivers.
  let next = 0;
  const burst = Promise.all(Array.from({ length: 8 }, async () => {
    while (next < agents.length) {
      const res = await org.api.patch(`/api/v1/rest/agents/${agents[next++]!}`, { status: 'paused' });
      expect(res.status, res.text).toBe(200);
    }
  }));
  await eventually(async () => receiver.received(urls[0]!).length >= EVENTS / 4, 60_000, 20);
  worker.kill('SIGKILL');
  await new Promise((resolve) => worker.once('exit', resolve));
  const atKill = receiver.received(urls[0]!).length;
  await burst;
  expect(atKill).toBeLessThan(EVENTS);

  worker = await startWorkerProcess();
  const eventIds = (await stage.api.sql<{ id: string }[]>`select id from events where org_id = ${org.orgId} and type = 'widget.paused'`).map((r) => r.id);
  expect(eventIds).toHaveLength(EVENTS);
  for (const [i, url] of urls.entries()) {
    // The receiver answers its first `failFirst` requests with 500: only the later ones were received.
    await eventually(async () => {
      const delivered = new Set(receiver.received(url).slice(failFirst[i]).map((r) => r.headers['webhook-id']));
      return eventIds.every((id) => delivered.has(id));
    }, 90_000, 200);
    // Every attempt, repeated or not, carries its event's id as webhook-id and verifies with the endpoint's secret.
    for (const r of receiver.received(url)) {
      const payload = new Webhook(secrets[i]!).verify(r.body, {
        'webhook-id': String(r.headers['webhook-id']), 'webhook-timestamp': String(r.headers['webhook-timestamp']),
        'webhook-signature': String(r.headers['webhook-signature']),
      }) as { id: string };
      expect(payload.id).toBe(r.headers['webhook-id']);
      expect(eventIds).toContain(payload.id);
    }
  }
  // And the log says so: every delivery of the burst ends succeeded.
  await eventually(async () => {
    const [row] = await stage.api.sql<{ pending: number; succeeded: number }[]>`
      select count(*) filter (where d.status = 'pending')::int as pending, count(*) filter (where d.status = 'succeeded')::int as succeeded
      from webhook_deliveries d where d.org_id = ${org.orgId}`;
    return row!.pending === 0 && row!.succeeded === EVENTS * urls.length;
  }, 60_000, 200);
  const repeats = urls.map((url, i) => receiver.received(url).length - failFirst[i]! - EVENTS);
  console.info(`kill -9 after ${atKill} of ${EVENTS} receipts at the first endpoint; repeated deliveries after the restart: ${repeats.join(', ')}`);
  worker.kill('SIGTERM');
}, 240_000);
