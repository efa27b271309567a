import { continueAsNew, log, proxyActivities } from '@temporalio/workflow';
import type { PurgeActivities } from '../activities/purge.ts';
import { workflowIds, workflowKind } from '../src/temporal/ids.ts';

// A batch is a bounded delete that takes well under a second. Its timeout is also how long the
// purge waits before retrying a batch whose worker vanished mid-task, so it is kept short.
const { listAgentPurgeSteps, purgeAgentBatch, deleteAgentRecord } = proxyActivities<PurgeActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', backoffCoefficient: 2 },
});

export interface PurgeAgentInput {
  orgId: string;
  agentId: string;
  batchSize: number;
  /** Set when the purge continues as new: where it was and what it had deleted. */
  progress?: { steps: string[]; stepIndex: number; deleted: Record<string, number> };
}

export interface PurgeAgentResult { deleted: Record<string, number> }

// Keeps each run's history short: a purge of millions of rows continues as new instead of growing.
const BATCHES_PER_RUN = 500;

/**
 * Deletes everything that depends on an agent already hidden from the API, a batch at a time,
 * then the agent itself. Durable: a worker that dies mid-way resumes where the history says.
 */
export async function purgeAgent(input: PurgeAgentInput): Promise<PurgeAgentResult> {
  const steps = input.progress?.steps ?? await listAgentPurgeSteps();
  const deleted = { ...input.progress?.deleted };
  let batches = 0;
  for (let i = input.progress?.stepIndex ?? 0; i < steps.length; i++) {
    const step = steps[i]!;
    for (;;) {
      const count = await purgeAgentBatch({ agentId: input.agentId, step, batchSize: input.batchSize });
      deleted[step] = (deleted[step] ?? 0) + count;
      if (count < input.batchSize) break;
      if (++batches >= BATCHES_PER_RUN) {
        return continueAsNew<typeof purgeAgent>({ ...input, progress: { steps, stepIndex: i, deleted } });
      }
    }
  }
  await deleteAgentRecord({ agentId: input.agentId });
  log.info('agent purged', { agentId: input.agentId, deleted });
  return { deleted };
}

/** One purge per agent, ever. */
export const purgeAgentKind = workflowKind(purgeAgent, { queue: 'maintenance', reuse: 'rejectDuplicate', id: workflowIds.agentPurge });
