import { deleteAuditBatch } from '../db/audit-log.ts';
import type { RetentionStep } from '../governance/plugins.ts';

/**
 * The audit log past the organization's `audit_log` window goes in batches (the log is append-only: only this
 * retention delete passes its trigger). Entries belong to the organization, not an agent: no agent override applies.
 */
export const retentionSteps: Record<string, RetentionStep> = {
  audit_log: { key: 'audit_log', perAgent: false, deleteBatch: (tx, scope, batchSize) => deleteAuditBatch(tx, scope.orgId, scope.cutoff, batchSize) },
};
