import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Sql } from '../src/db/index.ts';
import type { Config } from '../src/config.ts';
import type { SecretBox } from '../src/crypto/secret-box.ts';
import { recordAttempt, settleDelivery, type AttemptRecord } from '../src/db/webhooks.ts';
import { attemptDelivery, createDeliveryAgent, type AttemptOutcome, type AttemptSkipped } from '../src/events/attempt.ts';
import { sweepStrandedDeliveries } from '../src/events/dispatch.ts';
import type { DeliveryStatus } from '../src/schemas/webhooks.ts';
import type { ActivityRegistration } from './index.ts';

export type { AttemptOutcome, AttemptSkipped } from '../src/events/attempt.ts';

export interface WebhookActivityDeps { sql: Sql; config: Config; temporal: Client; log: Logger; secrets: SecretBox }

/** Activities of webhook delivery and of the outbox recovery sweep. */
export function createWebhookActivities({ sql, config, temporal, log, secrets }: WebhookActivityDeps) {
  // One pool of connections for every retry: receivers that keep connections alive are
  // not re-dialled (and re-resolved) on each attempt. Made on the first retry, not at start-up.
  let agent: ReturnType<typeof createDeliveryAgent> | null = null;
  return {
    /**
     * One HTTP attempt. Run with no Temporal retry: the workflow owns the retry schedule, and
     * this activity reports every failure as an outcome instead of throwing.
     */
    async attemptWebhookDelivery(input: { deliveryId: string }): Promise<AttemptOutcome | AttemptSkipped> {
      return attemptDelivery({ sql, secrets, agent: agent ??= createDeliveryAgent(config, 32) }, input.deliveryId);
    },

    /** Stores an attempt and the endpoint's failure streak; `finalStatus` settles the delivery. Idempotent per `attemptKey`. */
    async recordWebhookAttempt(input: AttemptRecord & { finalStatus: DeliveryStatus | null }): Promise<void> {
      const { finalStatus, ...attempt } = input;
      await recordAttempt(sql, attempt, finalStatus);
    },

    /** Settles a delivery that ends without an attempt. */
    async settleWebhookDelivery(input: { deliveryId: string; status: DeliveryStatus }): Promise<void> {
      await settleDelivery(sql, input.deliveryId, input.status);
    },

    /**
     * The recovery sweep's work: hands deliveries whose dispatcher died (claimed, or waiting, for
     * more than `olderThanSeconds`) to delivery workflows; returns how many it found.
     */
    async recoverStrandedWebhookDeliveries(input: { olderThanSeconds: number; limit: number }): Promise<number> {
      return sweepStrandedDeliveries({ sql, temporal, config, log }, input);
    },
  };
}
export type WebhookActivities = ReturnType<typeof createWebhookActivities>;

/** Run by the webhooks queue's worker (activities/index.ts finds this module). */
export const registration: ActivityRegistration = { queue: 'webhooks', create: createWebhookActivities };
