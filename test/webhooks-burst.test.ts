import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually, freshDatabase, startTestService, type TestService } from './helpers.ts';
import { newAgent, newOrg } from './support/orgs.ts';
import { startReceiver, type Receiver } from './webhook-receiver.ts';

/**
 * Issue 16's fast path under a burst: more deliveries to each endpoint than its concurrency limit
 * lets through at once, so the dispatcher claims again as each attempt ends (and records its
 * successes in batches). All of it is the dispatcher's: no delivery is left for the recovery sweep,
 * and no workflow starts. A claimed delivery that sat until the sweep (a lost wake-up, a batch never
 * stored, a slot never given back) would show here as a delivery handed to a workflow.
 */

// A database of its own, and a claim timeout far above a healthy burst's length: the sweep runs every
// second but only a stalled delivery can reach it.
const SETTINGS = { ALLOW_PRIVATE_NETWORK_TARGETS: true, WEBHOOK_SWEEP_SECONDS: 1, WEBHOOK_CLAIM_TIMEOUT_SECONDS: 20 } as const;
const EVENTS = 80;
const ENDPOINTS = 3;

let db: Awaited<ReturnType<typeof freshDatabase>>;
let svc: TestService;
let receiver: Receiver;

beforeAll(async () => {
  db = await freshDatabase();
  receiver = await startReceiver();
  svc = await startTestService(SETTINGS, { databaseUrl: db.url });
});
afterAll(async () => {
  await svc?.stop();
  await receiver?.close();
  await db?.drop();
});

it('delivers a burst above the per-endpoint limit entirely by the fast path: no workflow, nothing left to the sweep', async () => {
  expect(EVENTS).toBeGreaterThan(svc.config.WEBHOOK_ENDPOINT_CONCURRENCY * 4);
  const org = await newOrg(svc);
  // Answers that take a little while keep each endpoint at its limit while the burst lasts.
  const urls = Array.from({ length: ENDPOINTS }, () => receiver.url({ delayMs: 20 }));
  for (const url of urls) {
    const res = await org.api.post('/api/v1/rest/webhooks', { url, events: ['widget.paused'] });
    expect(res.status, res.text).toBe(201);
  }
  const agents: string[] = [];
  for (let i = 0; i < EVENTS; i++) agents.push((await newAgent(org.api, `Burst ${i}`)).id);

  let next = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next < agents.length) {
      const res = await org.api.patch(`/api/v1/rest/agents/${agents[next++]!}`, { status: 'paused' });
      expect(res.status, res.text).toBe(200);
    }
  }));

  const settled = await eventually(async () => {
    const rows = await svc.sql<{ status: string; workflow_started_at: Date | null; attempts: number; attempt_key: string | null }[]>`
      select d.status, d.workflow_started_at, count(a.id)::int as attempts, min(a.attempt_key) as attempt_key
      from webhook_deliveries d left join webhook_delivery_attempts a on a.delivery_id = d.id
      where d.org_id = ${org.orgId} group by d.id`;
    return rows.length === EVENTS * ENDPOINTS && rows.every((r) => r.status !== 'pending') && rows;
  }, 120_000, 200);
  // Every delivery succeeded at its first attempt, the dispatcher's (`#0`), and no workflow ever owned one.
  expect(settled.filter((r) => r.status !== 'succeeded')).toEqual([]);
  expect(settled.filter((r) => r.workflow_started_at !== null)).toEqual([]);
  expect(settled.filter((r) => r.attempts !== 1 || !r.attempt_key?.endsWith('#0'))).toEqual([]);
  for (const url of urls) expect(new Set(receiver.received(url).map((r) => r.headers['webhook-id'])).size).toBe(EVENTS);
  // Each endpoint saw at most its limit of requests at once (its slot is free once it has answered,
  // before the attempt is recorded), and the burst did fill it.
  for (const url of urls) expect(receiver.peakOpen(url)).toBeLessThanOrEqual(svc.config.WEBHOOK_ENDPOINT_CONCURRENCY);
  expect(Math.max(...urls.map((url) => receiver.peakOpen(url)))).toBeGreaterThan(1);
  // Temporal agrees: no delivery workflow ran for this organization.
  const { count } = await svc.temporal.workflow.count(`WorkflowType = 'deliverWebhook' AND OrganizationId = '${org.orgId}'`);
  expect(count).toBe(0);
}, 180_000);
