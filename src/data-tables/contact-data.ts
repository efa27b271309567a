import { eraseDataTableRows, exportDataTableRows } from '../db/contact-data.ts';
import type { ContactDataStep } from '../governance/plugins.ts';

/** Rows of agents' data tables holding the person's e-mail address or phone number. */
export const contactDataSteps: Record<string, ContactDataStep> = {
  data_table_rows: { export: exportDataTableRows, erase: async (tx, c) => ({ deleted: await eraseDataTableRows(tx, c) }) },
};
