import { expect, it } from 'vitest';
import { crashStage } from './support/crash-stage.ts';
import { eventually } from './helpers.ts';
import { newAgent, newOrg } from './support/orgs.ts';
import { createSql } from '../src/db/index.ts';
import { newId } from '../src/ids.ts';
import type { EnforceRetentionResult } from '../workflows/enforce-retention.ts';

/**
 * Issue 47: a retention run whose worker is killed with SIGKILL in the middle of a batch, then
 * restarted: nothing is deleted twice, nothing within the window is deleted, and the summary is exact.
 */

const SETTINGS = { RETENTION_BATCH_SIZE: 5 } as const;
const SECRETS_KEY = Buffer.alloc(32, 47).toString('base64');
const OLD = 60;
const RECENT = 10;

const stage = crashStage(SETTINGS, SECRETS_KEY);
const { startWorkerProcess } = stage;

async function seed(orgId: string, agentId: string, daysAgo: number): Promise<string> {
  const id = newId();
  await stage.api.sql`insert into conversations (id, org_id, agent_id, surface, status, started_at, ended_at, last_activity_at)
    values (${id}, ${orgId}, ${agentId}, 'web', 'ended', now() - make_interval(days => ${daysAgo}), now() - make_interval(days => ${daysAgo}), now() - make_interval(days => ${daysAgo}))`;
  return id;
}

it('kill -9 of the worker in the middle of a batch: after a restart every old conversation is deleted once, the recent ones stay', async () => {
  const { api: client, orgId } = await newOrg(stage.api);
  const agent = await newAgent(client);
  const old: string[] = [];
  for (let i = 0; i < OLD; i++) old.push(await seed(orgId, agent.id, 45));
  const recent: string[] = [];
  for (let i = 0; i < RECENT; i++) recent.push(await seed(orgId, agent.id, 29));
  expect((await client.put('/api/v1/rest/governance/retention', { conversations: 30 })).status).toBe(200);

  const worker = await startWorkerProcess();
  const run = await client.post('/api/v1/rest/governance/retention/run');
  expect(run.status).toBe(202);
  const runKey = run.body.workflow_id as string;

  // Once a few batches are in, hold the run's progress row: the next batch deletes its rows, then waits on
  // the lock to count them, uncommitted. The worker dies there; its transaction must roll back.
  await eventually(async () => {
    const [row] = await stage.api.sql<{ deleted: number }[]>`select deleted from retention_run_progress where run_key = ${runKey} and step = 'conversations'`;
    return row && row.deleted >= 10;
  }, 60_000, 20);
  const holder = createSql(stage.databaseUrl, { max: 1 });
  let release!: () => void;
  const released = new Promise<void>((resolve) => { release = resolve; });
  const held = holder.begin(async (tx) => {
    await tx`select deleted from retention_run_progress where run_key = ${runKey} and step = 'conversations' for update`;
    await released;
  });
  await eventually(async () => (await stage.api.sql`select 1 from pg_stat_activity where wait_event_type = 'Lock' and query like '%retention_run_progress%'`).length > 0, 30_000, 20);
  const [left] = await stage.api.sql<{ n: number }[]>`select count(*)::int as n from conversations where id = any(${old}::uuid[])`;
  const atKill = OLD - left!.n;
  worker.kill('SIGKILL');
  release();
  await held;
  await holder.end();
  expect(atKill).toBeGreaterThanOrEqual(10);
  expect(atKill).toBeLessThan(OLD);

  const restarted = await startWorkerProcess();
  const result = await stage.api.temporal.workflow.getHandle(runKey).result() as EnforceRetentionResult;
  expect(result.deleted).toEqual({ conversations: OLD });
  expect(await stage.api.sql`select id from conversations where id = any(${old}::uuid[])`).toHaveLength(0);
  expect((await stage.api.sql<{ id: string }[]>`select id from conversations where id = any(${recent}::uuid[])`).map((r) => r.id).sort()).toEqual([...recent].sort());
  const events = await stage.api.sql<{ id: string }[]>`select data->'conversation'->>'id' as id from events where org_id = ${orgId} and type = 'conversation.deleted'`;
  expect(events.map((e) => e.id).sort()).toEqual([...old].sort());
  restarted.kill('SIGTERM');
}, 180_000);
