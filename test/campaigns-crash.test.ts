import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startWorkerProcess as startWorker } from './support/worker-child.ts';
import { eventually, freshDatabase, startTestService, type TestService } from './helpers.ts';
import { callsOf, campaignReaches, eventsOf, orgWithNumber, peakConcurrency, startedCampaign } from './support/campaigns.ts';

/**
 * Issue 18: a worker killed with SIGKILL in the middle of a campaign, then restarted: every call
 * ends exactly once and the concurrency limit still holds.
 */

const SETTINGS = { SANDBOX_RING_SECONDS: 0, SANDBOX_CALL_SECONDS: 2 } as const;
const SECRETS_KEY = Buffer.alloc(32, 18).toString('base64');
const CALLS = 30;
const CONCURRENCY = 5;

let db: Awaited<ReturnType<typeof freshDatabase>>;
let api: TestService;
const children = new Set<ChildProcess>();

/** A worker in a process of its own, resolved once it polls. */
const startWorkerProcess = () => startWorker({
  settings: SETTINGS, databaseUrl: db.url, taskQueuePrefix: api.config.TASK_QUEUE_PREFIX, secretsKey: SECRETS_KEY,
}, children);

beforeAll(async () => {
  db = await freshDatabase();
  api = await startTestService(SETTINGS, { worker: false, databaseUrl: db.url, env: { SECRETS_KEY } });
});
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await api?.stop();
  await db?.drop();
});

it('kill -9 of the worker mid-campaign: after a restart every call ends exactly once, never more than the concurrency in flight', async () => {
  const worker = await startWorkerProcess();
  const { api: client, agent, orgId } = await orgWithNumber(api);
  const numbers = Array.from({ length: CALLS }, (_, i) => `+1500555${String(700 + i).padStart(4, '0')}`);
  const campaign = await startedCampaign(client, { widget_id: agent.id, to_numbers: numbers, concurrency: CONCURRENCY, max_duration_seconds: 60 });
  await eventually(async () => (await callsOf(client, campaign.id)).filter((c) => c.ended_at).length >= CONCURRENCY, 90_000, 200);
  worker.kill('SIGKILL');
  const atKill = await callsOf(client, campaign.id);
  expect(atKill.filter((c) => c.status === 'queued').length).toBeGreaterThan(0);
  const restarted = await startWorkerProcess();
  await campaignReaches(client, campaign.id, 'completed', 120_000);
  const calls = await callsOf(client, campaign.id);
  expect(calls).toHaveLength(CALLS);
  expect(calls.filter((c) => c.status !== 'completed' || c.ended_reason !== 'carrier')).toEqual([]);
  expect(peakConcurrency(calls)).toBeLessThanOrEqual(CONCURRENCY);
  const ended = (await eventsOf(api, orgId)).filter((e) => e.type === 'campaign_call.ended').map((e) => e.data.call.id as string);
  expect(ended.sort()).toEqual(calls.map((c) => c.id).sort());
  restarted.kill('SIGTERM');
}, 240_000);
