import { proxyActivities } from '@temporalio/workflow';
import type { WebhookActivities } from '../activities/webhooks.ts';

const { recoverStrandedWebhookDeliveries } = proxyActivities<WebhookActivities>({
  // Short: a sweep whose worker was killed mid-activity blocks the Schedule's next runs (they
  // overlap it) until this expires, and the deliveries that worker held wait as long.
  startToCloseTimeout: '20 seconds',
  // A few tries, then the run fails and the next tick of the schedule starts afresh.
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 5 },
});

export interface SweepWebhookEventsInput {
  /** Only deliveries claimed (or waiting) longer than this: younger ones are a live dispatcher's. */
  olderThanSeconds: number;
}

const BATCH = 200;
// Bounds one run's history; a backlog larger than this is finished by the next ticks.
const MAX_BATCHES = 25;

/**
 * The outbox's safety net, run by the `webhook-recovery-sweep` schedule: fans out events no
 * dispatcher took, and hands deliveries whose dispatcher died mid-attempt to delivery workflows.
 */
export async function sweepWebhookEvents(input: SweepWebhookEventsInput): Promise<{ dispatched: number }> {
  let dispatched = 0;
  for (let i = 0; i < MAX_BATCHES; i++) {
    const found = await recoverStrandedWebhookDeliveries({ olderThanSeconds: input.olderThanSeconds, limit: BATCH });
    dispatched += found;
    if (found < BATCH) break;
  }
  return { dispatched };
}
