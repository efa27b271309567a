import { afterAll, beforeAll, expect, it } from 'vitest';
import { client, eventually, startTestService, workflowBundle, type TestService } from './helpers.ts';
import { createLogger } from '../src/logger.ts';
import { startWorkers } from '../src/temporal/worker.ts';
import { inject } from 'vitest';

let svc: TestService;
beforeAll(async () => { svc = await startTestService({ PURGE_BATCH_SIZE: 100 }); });
afterAll(async () => { await svc?.stop(); });

const ROWS = 10_000;

it('finishes a purge after the worker is stopped mid-way and started again', async () => {
  const { token, orgId } = await svc.newOrg();
  const api = client(svc.url, token);
  const { body: agent } = await api.post('/api/v1/rest/agents', { name: 'Big history' });
  await svc.sql`insert into conversations (id, org_id, agent_id, surface)
    select gen_random_uuid(), ${orgId}, ${agent.id}, 'web' from generate_series(1, ${ROWS})`;
  const remaining = async () => (await svc.sql<{ n: number }[]>`select count(*)::int as n from conversations where agent_id = ${agent.id}`)[0]!.n;

  expect((await api.delete(`/api/v1/rest/agents/${agent.id}`)).status).toBe(204);
  expect((await api.get(`/api/v1/rest/agents/${agent.id}`)).status).toBe(404);

  // Stop the only worker once some batches are done but most are not.
  await eventually(async () => (await remaining()) < ROWS, 30_000, 10);
  await svc.workers!.shutdown();
  const atStop = await remaining();
  expect(atStop).toBeGreaterThan(0);
  expect(atStop).toBeLessThan(ROWS);

  // With no worker, nothing moves, and the workflow is still running: its next step (a batch, or the
  // workflow task deciding it) waits in the task queue, scheduled and taken by no one. Only a started
  // activity deletes rows, so once nothing of it is started the count is final.
  const handle = svc.temporal.workflow.getHandle(`agent-purge:${agent.id}`);
  const waiting = await eventually(async () => {
    const { raw, status } = await handle.describe();
    const states = [...(raw.pendingActivities ?? []).map((a) => a.state), ...(raw.pendingWorkflowTask ? [raw.pendingWorkflowTask.state] : [])];
    // 1: PENDING_ACTIVITY_STATE_SCHEDULED, PENDING_WORKFLOW_TASK_STATE_SCHEDULED (never STARTED: no worker polls).
    return states.length > 0 && states.every((state) => state === 1) && status.name;
  });
  expect(waiting).toBe('RUNNING');
  expect(await remaining()).toBe(atStop);
  expect(await svc.sql`select 1 from agents where id = ${agent.id}`).toHaveLength(1);

  // A new worker picks the purge up where the history says it was.
  const workers = await startWorkers({
    sql: svc.sql, config: svc.config, address: inject('temporalAddress'), namespace: svc.config.TEMPORAL_NAMESPACE,
    log: createLogger('silent'), workflowBundle: await workflowBundle(),
  });
  try {
    const result = await handle.result();
    expect(result.deleted.conversations).toBe(ROWS);
    expect(await remaining()).toBe(0);
    expect(await svc.sql`select 1 from agents where id = ${agent.id}`).toHaveLength(0);
  } finally {
    await workers.shutdown();
  }
  // 100 batches through a dev server that the other test files load too: give it room.
}, 120_000);
