import { claimDeliveryRetry, findDelivery, findEndpoint, listDeliveries, type RetryTicket } from '../db/webhooks.ts';
import { AppError, notFound } from '../errors.ts';
import { startDeliveryWorkflow } from '../events/dispatch.ts';
import type { Delivery } from '../schemas/webhooks.ts';
import type { WebhookDeps } from './endpoints.ts';

/** A page of an endpoint's deliveries with their attempts; null when there is no such endpoint. */
export async function listEndpointDeliveries(deps: WebhookDeps, orgId: string, endpointId: string, page: { limit: number; offset: number }):
  Promise<{ data: Delivery[]; total: number } | null> {
  if (!(await findEndpoint(deps.sql, orgId, endpointId))) return null;
  return listDeliveries(deps.sql, orgId, endpointId, page);
}

/**
 * Sends a finished delivery again: puts it back to `pending` and starts its manual-retry workflow
 * in one transaction, so if Temporal cannot take the workflow the delivery stays as it was.
 * 404 when absent, 409 while it is still attempted or its endpoint is disabled, 503 when Temporal is down.
 */
export async function retryDelivery(deps: WebhookDeps, orgId: string, endpointId: string, deliveryId: string): Promise<Delivery> {
  const delivery = await deps.sql.begin(async (tx) => {
    const ticket = await claimDeliveryRetry(tx, orgId, endpointId, deliveryId);
    if (ticket === null) throw notFound('delivery');
    if (ticket === 'pending') throw new AppError(409, 'invalid_state', 'the delivery is still being attempted');
    if (ticket === 'disabled') throw new AppError(409, 'invalid_state', 'the endpoint is disabled: enable it first');
    await startRetry(deps, ticket);
    return findDelivery(tx, orgId, endpointId, deliveryId);
  });
  if (!delivery) throw notFound('delivery');
  return delivery;
}

async function startRetry(deps: WebhookDeps, ticket: RetryTicket): Promise<void> {
  try {
    await startDeliveryWorkflow(deps, ticket, { retryNumber: ticket.retryNumber });
  } catch (err) {
    deps.log.error({ err, delivery_id: ticket.deliveryId }, 'could not start the delivery retry workflow');
    throw new AppError(503, 'temporal_unavailable', 'the workflow service is unavailable; the delivery was not retried, try again', {
      headers: { 'Retry-After': '5' },
    });
  }
}
