import { eraseWebhookEvents, exportWebhookEvents } from '../db/contact-data.ts';
import type { ContactDataStep } from '../governance/plugins.ts';

/** Webhook events whose payload names the person, with their deliveries: last, once nothing new names it. */
export const contactDataSteps: Record<string, ContactDataStep> = {
  webhook_events: { order: 90, export: exportWebhookEvents, erase: async (tx, c) => ({ deleted: await eraseWebhookEvents(tx, c) }) },
};
