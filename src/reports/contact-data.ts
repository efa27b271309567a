import { eraseReportRunsNaming } from '../db/contact-data.ts';
import type { ContactDataStep } from '../governance/plugins.ts';

/** Report runs whose figures or recipients name the person (their counts live on in the rollups). */
export const contactDataSteps: Record<string, ContactDataStep> = {
  report_runs: { erase: async (tx, c) => ({ deleted: await eraseReportRunsNaming(tx, c) }) },
};
