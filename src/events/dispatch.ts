import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { webhookRetryDelays, type Config } from '../config.ts';
import type { Db } from '../db/index.ts';
import { claimStrandedDeliveries, fanOutEvents, markWorkflowStarted, wakeDispatchers, type PendingDelivery } from '../db/webhooks.ts';
import { deliverWebhookKind } from '../../workflows/deliver-webhook.ts';
import { startWorkflow } from '../temporal/start.ts';
import { createLogger } from '../logger.ts';

const silent = createLogger('silent');

/** What starting delivery workflows needs: the database, a Temporal client, the configuration and a logger. */
export interface DispatchDeps {
  sql: Db;
  temporal: Client;
  config: Config;
  /** Where a failed start is logged; none, nowhere (a test driving dispatch directly). */
  log?: Logger;
}

/**
 * Starts the delivery workflow of one delivery (eagerly, with a delivery worker in this process);
 * a second start of the same delivery is a no-op. `firstAttemptDone`: the dispatcher made the
 * first attempt and it failed, so the workflow begins with the first retry delay. A manual
 * retry (`retryNumber`) is one attempt under a workflow id of its own.
 */
export async function startDeliveryWorkflow(deps: DispatchDeps, delivery: PendingDelivery, opts: { retryNumber?: number; firstAttemptDone?: boolean } = {}): Promise<void> {
  const manual = opts.retryNumber !== undefined;
  await startWorkflow({ ...deps, log: deps.log ?? silent }, deliverWebhookKind, deliverWebhookKind.id(delivery.eventId, delivery.endpointId, opts.retryNumber),
    // A manual retry is one attempt: whoever asked for it sees its outcome at once.
    [{ deliveryId: delivery.deliveryId, retryDelaysSeconds: manual ? [] : webhookRetryDelays(deps.config), ...(opts.firstAttemptDone ? { firstAttemptDone: true } : {}) }],
    {
      orgId: delivery.orgId, agentId: delivery.agentId,
      summary: `Webhook delivery of event ${delivery.eventId} to endpoint ${delivery.endpointId}${manual ? `, manual retry ${opts.retryNumber}` : opts.firstAttemptDone ? ', retries after a failed first attempt' : ''}`,
    });
}

/**
 * The recovery sweep (run by the `webhook-recovery-sweep` Schedule): fans out events no
 * dispatcher took, then hands every delivery that stayed pending with no workflow for more
 * than `olderThanSeconds` (its dispatcher died mid-attempt, or none runs) to a delivery
 * workflow. Delivery is at least once: an attempt a dead dispatcher made but never recorded is
 * made again, with the same webhook-id. Returns how many deliveries it handed over.
 */
export async function sweepStrandedDeliveries(deps: DispatchDeps, opts: { olderThanSeconds: number; limit: number }): Promise<number> {
  await fanOutEvents(deps.sql, opts.limit);
  // What a lost notification left (events it fanned out just now, deliveries never claimed) is
  // the dispatchers' to attempt first: wake them, as a committed event does.
  await wakeDispatchers(deps.sql);
  const stranded = await claimStrandedDeliveries(deps.sql, opts.olderThanSeconds, opts.limit);
  const results = await Promise.allSettled(stranded.map((d) => startDeliveryWorkflow(deps, d, { firstAttemptDone: d.attempted })));
  await markWorkflowStarted(deps.sql, stranded.filter((_, i) => results[i]!.status === 'fulfilled').map((d) => d.deliveryId));
  const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  // The ones not started stay claimed: the next sweep after `olderThanSeconds` tries again.
  if (failure) throw failure.reason;
  return stranded.length;
}
