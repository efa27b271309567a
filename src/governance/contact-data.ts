import { eraseIdempotencyReplays } from '../db/contact-data.ts';
import { listConsents } from '../db/governance.ts';
import type { ContactDataStep } from './plugins.ts';

/** Consent records (they go with the contact), and stored Idempotency-Key answers naming the person. */
export const contactDataSteps: Record<string, ContactDataStep> = {
  consents: { export: (db, c) => listConsents(db, c.orgId, c.id), erase: async () => ({ deleted: 0 }) },
  idempotency_replays: { order: 90, erase: async (tx, c) => ({ deleted: await eraseIdempotencyReplays(tx, c) }) },
};
