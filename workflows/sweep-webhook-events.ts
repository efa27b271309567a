import { proxyActivities } from '@temporalio/workflow';
import type { WebhookActivities } from '../activities/webhooks.ts';

const { dispatchStaleWebhookEvents } = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '2 minutes',
  // A few tries, then the run fails and the next tick of the schedule starts afresh.
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 5 },
});

export interface SweepWebhookEventsInput {
  /** Only events older than this: younger ones are still being dispatched by the API that committed them. */
  olderThanSeconds: number;
}

const BATCH = 200;
// Bounds one run's history; a backlog larger than this is finished by the next ticks.
const MAX_BATCHES = 25;

/**
 * The outbox's safety net, run by the `webhook-recovery-sweep` schedule: dispatches events
 * that committed but were never dispatched (process stopped after commit, Temporal down).
 */
export async function sweepWebhookEvents(input: SweepWebhookEventsInput): Promise<{ dispatched: number }> {
  let dispatched = 0;
  for (let i = 0; i < MAX_BATCHES; i++) {
    const found = await dispatchStaleWebhookEvents({ olderThanSeconds: input.olderThanSeconds, limit: BATCH });
    dispatched += found;
    if (found < BATCH) break;
  }
  return { dispatched };
}
