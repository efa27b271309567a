import { deleteOldReportRunsBatch } from '../db/retention.ts';
import type { RetentionStep } from '../governance/plugins.ts';

/** Report runs past their retention go with their artifact and figures (a report draws from rollups, not from old runs). */
export const retentionSteps: Record<string, RetentionStep> = {
  report_runs: { key: 'report_artifacts', perAgent: false, deleteBatch: deleteOldReportRunsBatch },
};
