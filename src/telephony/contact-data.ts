import { eraseCarrierRecords } from '../db/contact-data.ts';
import type { ContactDataStep } from '../governance/plugins.ts';

/** The carrier's sessions and operations with the person's number (their content is in the conversations). */
export const contactDataSteps: Record<string, ContactDataStep> = {
  carrier_records: { order: 20, erase: async (tx, c) => ({ deleted: await eraseCarrierRecords(tx, c) }) },
};
