import { deleteOldWebhookEventsBatch } from '../db/retention.ts';
import type { RetentionStep } from '../governance/plugins.ts';

/** Events past their retention go with their deliveries and attempts, once no delivery of theirs is pending. */
export const retentionSteps: Record<string, RetentionStep> = {
  webhook_events: { key: 'webhook_deliveries', perAgent: false, deleteBatch: deleteOldWebhookEventsBatch },
};
