import { ActivityFailure, CancellationScope, isCancellation, proxyLocalActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { AttemptOutcome, AttemptSkipped, WebhookActivities } from '../activities/webhooks.ts';
import { workflowIds, workflowKind } from '../src/temporal/ids.ts';

// Every step runs as a local activity: in the worker that runs the workflow, with no round
// trip through the Temporal server per step, so a delivery costs one workflow task instead of
// three plus an activity task (bench/webhooks.ts measures the difference).
//
// The HTTP attempt runs once per call: a Temporal retry would hide attempts from the schedule
// below, which is the one the contract promises (WEBHOOK_RETRY_DELAYS). 30 s covers the 15 s
// request timeout plus the lookup and the database read.
const { attemptWebhookDelivery } = proxyLocalActivities<WebhookActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 1 },
});

// Recording is a short, idempotent database write: retried until it lands.
const { recordWebhookAttempt, settleWebhookDelivery } = proxyLocalActivities<WebhookActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', backoffCoefficient: 2 },
});

export interface DeliverWebhookInput {
  deliveryId: string;
  /** Seconds to wait after each failed attempt; one attempt more than delays. Empty for a manual retry. */
  retryDelaysSeconds: number[];
  /**
   * The dispatcher already made the first attempt (and recorded it as `<workflow id>#0`): it
   * failed, so this run starts with the first delay and attempt 1 (issue 16).
   */
  firstAttemptDone?: boolean;
}

export interface DeliverWebhookResult {
  status: 'succeeded' | 'failed' | 'gone';
  attempts: number;
}

/** One attempt; an activity that could not even report (worker lost, timeout) is a failed attempt too. */
async function attemptOnce(deliveryId: string): Promise<AttemptOutcome | AttemptSkipped> {
  const at = new Date().toISOString();
  try {
    return await attemptWebhookDelivery({ deliveryId });
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    const reason = err.cause?.message ?? err.message;
    return { kind: 'attempted', ok: false, at, statusCode: null, error: `attempt did not complete: ${reason}`.slice(0, 200), responseExcerpt: null, durationMs: 0 };
  }
}

/**
 * Delivers one event to one endpoint: attempts, records each attempt, waits the configured
 * delay (a durable timer: a restart does not shorten or lose it) and tries again, until a 2xx
 * or the delays run out. An endpoint disabled meanwhile ends the delivery `failed`.
 * Deleting or disabling the endpoint cancels the run (issue 43): it ends `canceled` at once, in
 * the middle of its sleep, its delivery settled `failed` (a deleted endpoint's is gone already).
 */
export async function deliverWebhook(input: DeliverWebhookInput): Promise<DeliverWebhookResult> {
  try {
    return await deliver(input);
  } catch (err) {
    if (isCancellation(err)) await CancellationScope.nonCancellable(() => settleWebhookDelivery({ deliveryId: input.deliveryId, status: 'failed' }));
    throw err;
  }
}

async function deliver(input: DeliverWebhookInput): Promise<DeliverWebhookResult> {
  const { deliveryId, retryDelaysSeconds: delays } = input;
  const first = input.firstAttemptDone ? 1 : 0;
  if (first === 1) await sleep(delays[0]! * 1000);
  for (let attempt = first; ; attempt++) {
    const outcome = await attemptOnce(deliveryId);
    if (outcome.kind === 'gone') return { status: 'gone', attempts: attempt };
    if (outcome.kind === 'endpoint_disabled') {
      await settleWebhookDelivery({ deliveryId, status: 'failed' });
      return { status: 'failed', attempts: attempt };
    }
    const last = outcome.ok || attempt >= delays.length;
    const finalStatus = outcome.ok ? 'succeeded' : last ? 'failed' : null;
    const { kind: _kind, ...record } = outcome;
    await recordWebhookAttempt({ ...record, deliveryId, attemptKey: `${workflowInfo().workflowId}#${attempt}`, finalStatus });
    if (finalStatus) return { status: finalStatus, attempts: attempt + 1 };
    await sleep(delays[attempt]! * 1000);
  }
}

/** One delivery per event, endpoint and manual retry; started eagerly beside a webhook worker. */
export const deliverWebhookKind = workflowKind(deliverWebhook, { queue: 'webhooks', reuse: 'rejectDuplicate', eager: true, id: workflowIds.webhookDelivery });
