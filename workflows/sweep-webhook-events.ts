import { condition, continueAsNew, defineSignal, log, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
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
 * One sweep of the outbox's safety net: fans out events no dispatcher took, and hands deliveries
 * whose dispatcher died mid-attempt to delivery workflows. Until issue 42 a Schedule started it
 * every WEBHOOK_SWEEP_SECONDS (2,880 runs a day in the Web UI's list); it stays for the histories
 * of those runs, and `webhookRecoverySweeper` runs the same sweep in its loop.
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

export interface WebhookSweeperInput extends SweepWebhookEventsInput {
  /** Seconds between sweeps (WEBHOOK_SWEEP_SECONDS). */
  everySeconds: number;
}

/** Sweep now (a worker started: what a dead one left is found at once), with these settings from now on. */
export const sweepNowSignal = defineSignal<[WebhookSweeperInput]>('sweepNow');

/** Sweeps in one run before it continues as new: bounds its history (about 11 events a sweep). */
const SWEEPS_PER_RUN = 240;

/**
 * The recovery sweeper: ONE long-lived workflow per deployment, `webhook-recovery-sweeper:<prefix>`,
 * that sweeps, then sleeps on a durable timer for `everySeconds` (or until `sweepNow`), and
 * continues as new every SWEEPS_PER_RUN sweeps. The Web UI lists one running row (and one
 * continued run every two hours at the default 30 s) instead of a run per tick. The guarantee is
 * the Schedule's: the timer is Temporal's, so it fires whichever worker lives; a sweep whose
 * activity gives up is logged and the loop goes on. Workers start it (or signal it) at start-up.
 */
export async function webhookRecoverySweeper(input: WebhookSweeperInput): Promise<void> {
  let settings = input;
  let asked = false;
  setHandler(sweepNowSignal, (next) => {
    settings = next;
    asked = true;
  });
  for (let i = 0; i < SWEEPS_PER_RUN && !workflowInfo().continueAsNewSuggested; i++) {
    asked = false;
    try {
      await sweepWebhookEvents(settings);
    } catch (err) {
      log.warn('webhook recovery sweep failed; the next one tries again', { error: String(err) });
    }
    await condition(() => asked, settings.everySeconds * 1000);
  }
  await continueAsNew<typeof webhookRecoverySweeper>(settings);
}
