import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { GovernanceActivities } from '../activities/governance.ts';
import { workflowIds, workflowKind } from '../src/temporal/ids.ts';

// A task deletes a whole scope, a batch per transaction, heartbeating its progress after each: a
// worker that dies mid-task is noticed within the heartbeat timeout and the task resumes on another.
const { planRetention, runRetentionTask, retentionSummary } = proxyActivities<GovernanceActivities>({
  startToCloseTimeout: '6 hours',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', backoffCoefficient: 2 },
});

export interface EnforceRetentionInput { orgId: string }

/** What one task deletes: a step's rows of one scope older than `cutoff`. */
export interface RetentionTask { step: string; cutoff: string; agentId: string | null; excludeAgentIds: string[] }

export interface EnforceRetentionResult { orgId: string; ranAt: string; tasks: number; deleted: Record<string, number> }

/**
 * One retention run of an organization (its Schedule `retention:<org>` starts one a day): the cutoffs
 * are fixed once, from the run's start, so a retry or a resumed task never reaches into the window
 * kept; every batch is a delete of rows older than them, so running a task again deletes nothing twice.
 */
export async function enforceRetention(input: EnforceRetentionInput): Promise<EnforceRetentionResult> {
  const runKey = workflowInfo().workflowId;
  const ranAt = new Date().toISOString();
  const tasks = await planRetention({ orgId: input.orgId, now: ranAt });
  for (const task of tasks) await runRetentionTask({ runKey, orgId: input.orgId, task });
  return { orgId: input.orgId, ranAt, tasks: tasks.length, deleted: await retentionSummary({ runKey }) };
}

/** Each firing of the Schedule (and each run asked for by hand) has an id of its own. */
export const enforceRetentionKind = workflowKind(enforceRetention, { queue: 'maintenance', reuse: 'rejectDuplicate', id: workflowIds.retentionRun });
