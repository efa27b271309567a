import { proxyActivities } from '@temporalio/workflow';
import type { DataTransferActivities } from '../activities/data-transfers.ts';
import { workflowIds, workflowKind } from '../src/temporal/ids.ts';

/**
 * The data transfers' jobs (issue 45): a large export and a contacts CSV import. Each is one long step, retried a few
 * times, then settled as `failed` (retried for long: the job must not stay `running`).
 */
const steps = proxyActivities<DataTransferActivities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '2 minutes', maximumAttempts: 5 },
});

const settle = proxyActivities<DataTransferActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', maximumInterval: '10 minutes', maximumAttempts: 100 },
});

const failure = (err: unknown, otherwise: string) => (err instanceof Error ? err.message.slice(0, 500) : otherwise);

/**
 * One large export, `data-export:<export id>`: the step writes the file into the BlobStore and records it (a
 * retried step writes the same key again); a step that keeps failing leaves the job `failed`.
 */
export async function exportData(input: { exportId: string }): Promise<string> {
  try {
    return await steps.writeExport(input);
  } catch (err) {
    await settle.failExport({ exportId: input.exportId, error: failure(err, 'export failed') });
    return 'failed';
  }
}

/**
 * One contacts CSV import, `contact-import:<import id>`: the step reads the stored CSV and creates or updates each
 * valid row's contact (by phone, then email: a retried step updates what it created, never twice), skipping and
 * recording the rows it refuses; a step that keeps failing leaves the job `failed`.
 */
export async function importContacts(input: { importId: string }): Promise<string> {
  try {
    return await steps.applyContactImport(input);
  } catch (err) {
    await settle.failContactImport({ importId: input.importId, error: failure(err, 'import failed') });
    return 'failed';
  }
}

export const dataExportKind = workflowKind(exportData, { queue: 'maintenance', reuse: 'rejectDuplicate', id: workflowIds.dataExport });
export const contactImportKind = workflowKind(importContacts, { queue: 'maintenance', reuse: 'rejectDuplicate', id: workflowIds.contactImport });
