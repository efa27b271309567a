import { expect, it } from 'vitest';
import { crashStage } from './support/crash-stage.ts';
import { eventually } from './helpers.ts';
import { callsOf, campaignReaches, eventsOf, orgWithNumber, peakConcurrency, startedCampaign } from './support/campaigns.ts';

/**
 * Issue 18: a worker killed with SIGKILL in the middle of a campaign, then restarted: every call
 * ends exactly once and the concurrency limit still holds.
 */

const SETTINGS = { SANDBOX_RING_SECONDS: 0, SANDBOX_CALL_SECONDS: 2 } as const;
const SECRETS_KEY = Buffer.alloc(32, 18).toString('base64');
const CALLS = 30;
const CONCURRENCY = 5;

const stage = crashStage(SETTINGS, SECRETS_KEY);
const { startWorkerProcess } = stage;

it('kill -9 of the worker mid-campaign: after a restart every call ends exactly once, never more than the concurrency in flight', async () => {
  const worker = await startWorkerProcess();
  const { api: client, agent, orgId } = await orgWithNumber(stage.api);
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
  const ended = (await eventsOf(stage.api, orgId)).filter((e) => e.type === 'campaign_call.ended').map((e) => e.data.call.id as string);
  expect(ended.sort()).toEqual(calls.map((c) => c.id).sort());
  restarted.kill('SIGTERM');
}, 240_000);
