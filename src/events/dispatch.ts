import { WorkflowExecutionAlreadyStartedError, WorkflowIdConflictPolicy, WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import { webhookRetryDelays, type Config } from '../config.ts';
import type { Db } from '../db/index.ts';
import { createDeliveries, markEventsDispatched, staleEventIds, type PendingDelivery } from '../db/webhooks.ts';
import { SEARCH_ATTRIBUTES, taskQueues, workflowIds } from '../temporal/index.ts';
import { colocatedClient } from '../temporal/worker.ts';
import type { deliverWebhook } from '../../workflows/deliver-webhook.ts';

/** What dispatch needs: the database, a Temporal client and the configuration. */
export interface DispatchDeps {
  sql: Db;
  temporal: Client;
  config: Config;
}

/** Starts the delivery workflow of one delivery; a second start of the same delivery is a no-op. */
export async function startDeliveryWorkflow(deps: DispatchDeps, delivery: PendingDelivery, opts: { retryNumber?: number } = {}): Promise<void> {
  const manual = opts.retryNumber !== undefined;
  const taskQueue = taskQueues(deps.config).webhooks;
  // With a delivery worker in this process, start eagerly: the server hands the first workflow
  // task back in the start response when that worker has a free slot (else it queues it as usual).
  const eager = colocatedClient(deps.temporal.options.namespace, taskQueue);
  try {
    await (eager ?? deps.temporal).workflow.start<typeof deliverWebhook>('deliverWebhook', {
      workflowId: workflowIds.webhookDelivery(delivery.eventId, delivery.endpointId, opts.retryNumber),
      taskQueue,
      requestEagerStart: eager !== undefined,
      // A manual retry is one attempt: whoever asked for it sees its outcome at once.
      args: [{ deliveryId: delivery.deliveryId, retryDelaysSeconds: manual ? [] : webhookRetryDelays(deps.config) }],
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      typedSearchAttributes: [
        { key: SEARCH_ATTRIBUTES.OrganizationId, value: delivery.orgId },
        ...(delivery.agentId ? [{ key: SEARCH_ATTRIBUTES.AgentId, value: delivery.agentId }] : []),
      ],
    });
  } catch (err) {
    // Already ran to its end (REJECT_DUPLICATE): this delivery was dispatched before.
    if (err instanceof WorkflowExecutionAlreadyStartedError) return;
    throw err;
  }
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
