import { proxyActivities } from '@temporalio/workflow';
import type { DataTransferActivities } from '../activities/data-transfers.ts';
import { workflowIds, workflowKind } from '../src/temporal/ids.ts';

const steps = proxyActivities<DataTransferActivities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '2 minutes', maximumAttempts: 5 },
});

const settle = proxyActivities<DataTransferActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', maximumInterval: '10 minutes', maximumAttempts: 100 },
});

/**
 * One contacts CSV import, `contact-import:<import id>`: the step reads the stored CSV and creates or updates each
 * valid row's contact (by phone, then email: a retried step updates what it created, never twice), skipping and
 * recording the rows it refuses; a step that keeps failing leaves the job `failed`.
 */
export async function importContacts(input: { importId: string }): Promise<string> {
  try {
    return await steps.applyContactImport(input);
  } catch (err) {
    await settle.failContactImport({ importId: input.importId, error: err instanceof Error ? err.message.slice(0, 500) : 'import failed' });
    return 'failed';
  }
}

export const contactImportKind = workflowKind(importContacts, { queue: 'maintenance', reuse: 'rejectDuplicate', id: workflowIds.contactImport });
