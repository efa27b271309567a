import { listConsents } from '../db/governance.ts';
import type { ContactDataStep } from './plugins.ts';

/** Consent records: exported here; they go with the contact row (ON DELETE CASCADE). */
export const contactDataSteps: Record<string, ContactDataStep> = {
  consents: { export: (db, c) => listConsents(db, c.orgId, c.id), erase: async () => ({ deleted: 0 }) },
};
