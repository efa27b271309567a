import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { webhookRetryDelays, type Config } from '../config.ts';
import type { Db } from '../db/index.ts';
import { createDeliveries, markEventsDispatched, staleEventIds, type PendingDelivery } from '../db/webhooks.ts';
import { workflowIds } from '../temporal/ids.ts';
import { startWorkflow } from '../temporal/start.ts';
import { createLogger } from '../logger.ts';

const silent = createLogger('silent');

/** What dispatch needs: the database, a Temporal client, the configuration and a logger. */
export interface DispatchDeps {
  sql: Db;
  temporal: Client;
  config: Config;
  /** Where a failed start is logged; none, nowhere (a test driving dispatch directly). */
  log?: Logger;
}

/**
 * Starts the delivery workflow of one delivery (eagerly, with a delivery worker in this process);
 * a second start of the same delivery is a no-op.
 */
export async function startDeliveryWorkflow(deps: DispatchDeps, delivery: PendingDelivery, opts: { retryNumber?: number } = {}): Promise<void> {
  const manual = opts.retryNumber !== undefined;
  await startWorkflow({ ...deps, log: deps.log ?? silent }, 'webhookDelivery', workflowIds.webhookDelivery(delivery.eventId, delivery.endpointId, opts.retryNumber),
    // A manual retry is one attempt: whoever asked for it sees its outcome at once.
    [{ deliveryId: delivery.deliveryId, retryDelaysSeconds: manual ? [] : webhookRetryDelays(deps.config) }],
    { orgId: delivery.orgId, agentId: delivery.agentId, summary: `Webhook delivery of event ${delivery.eventId} to endpoint ${delivery.endpointId}${manual ? `, manual retry ${opts.retryNumber}` : ''}` });
}

/**
 * The outbox relay. For each committed, undispatched event: one delivery per subscribed,
 * enabled endpoint of its organization, one workflow per delivery, then the event is marked
 * dispatched. Safe to run twice on the same events (API and sweep racing): deliveries are
 * unique per (event, endpoint) and workflow ids are business keys. Events whose workflows
 * could not all start stay undispatched for the sweep; the first such error is thrown.
 * Returns how many workflows it started (or found started).
 */
export async function dispatchEvents(deps: DispatchDeps, eventIds: string[]): Promise<number> {
  if (eventIds.length === 0) return 0;
  const deliveries = await createDeliveries(deps.sql, eventIds);
  const results = await Promise.allSettled(deliveries.map((d) => startDeliveryWorkflow(deps, d)));
  const failedEvents = new Set(deliveries.filter((_, i) => results[i]!.status === 'rejected').map((d) => d.eventId));
  await markEventsDispatched(deps.sql, eventIds.filter((id) => !failedEvents.has(id)));
  const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure) throw failure.reason;
  return deliveries.length;
}

/** Dispatches up to `limit` events left undispatched for more than `olderThanSeconds`; returns how many it found. */
export async function dispatchStaleEvents(deps: DispatchDeps, opts: { olderThanSeconds: number; limit: number }): Promise<number> {
  const ids = await staleEventIds(deps.sql, opts.olderThanSeconds, opts.limit);
  await dispatchEvents(deps, ids);
  return ids.length;
}
