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
 * One large export, `data-export:<export id>`: the step writes the file into the BlobStore and records it (a
 * retried step writes the same key again); a step that keeps failing leaves the job `failed`.
 */
export async function exportData(input: { exportId: string }): Promise<string> {
  try {
    return await steps.writeExport(input);
  } catch (err) {
    await settle.failExport({ exportId: input.exportId, error: err instanceof Error ? err.message.slice(0, 500) : 'export failed' });
    return 'failed';
  }
}

export const dataExportKind = workflowKind(exportData, { queue: 'maintenance', reuse: 'rejectDuplicate', id: workflowIds.dataExport });
