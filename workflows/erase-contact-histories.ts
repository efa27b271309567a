import { proxyActivities } from '@temporalio/workflow';
import type { GovernanceActivities } from '../activities/governance.ts';
import { workflowIds, workflowKind } from '../src/temporal/ids.ts';

const { deleteWorkflowHistories } = proxyActivities<GovernanceActivities>({
  startToCloseTimeout: '1 hour',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', backoffCoefficient: 2 },
});

export interface EraseContactHistoriesInput { orgId: string; contactId: string; workflowIds: string[] }

/**
 * After a contact's erase: deletes the Temporal executions (histories with their sealed payloads)
 * of the erased conversations, so no message or captured field survives there. Its own history
 * holds workflow ids only.
 */
export async function eraseContactHistories(input: EraseContactHistoriesInput): Promise<{ deleted: number }> {
  return { deleted: await deleteWorkflowHistories({ workflowIds: input.workflowIds }) };
}

export const eraseContactHistoriesKind = workflowKind(eraseContactHistories, { queue: 'maintenance', reuse: 'rejectDuplicate', id: workflowIds.contactErase });
