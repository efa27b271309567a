import { AppError, notFound } from '../../src/errors.ts';
import {
  claimDeliveryRetry, deleteEndpoint, findDelivery, findEndpoint, insertEndpoint, listDeliveries, listEndpoints,
  rotateEndpointSecret, updateEndpoint, type RetryTicket,
} from '../../src/db/webhooks.ts';
import { startDeliveryWorkflow } from '../../src/events/dispatch.ts';
import { newWebhookSecret } from '../../src/events/signing.ts';
import { assertOutboundUrl } from '../../src/net/outbound.ts';
import { IdParams, PageQuery } from '../../src/schemas/common.ts';
import {
  DeliveryListSchema, DeliveryParams, DeliverySchema, WebhookCreateSchema, WebhookEndpointSchema,
  WebhookEndpointWithSecretSchema, WebhookListSchema, WebhookPatchSchema,
} from '../../src/schemas/webhooks.ts';
import type { Principal } from '../../src/auth/authenticator.ts';
import type { AppDeps } from '../context.ts';
import { route, type RouteFamily } from '../routing.ts';

const BASE = '/api/v1/rest';

const checkUrl = (deps: AppDeps, url: string) => assertOutboundUrl(url, 'url', { allowPrivate: deps.config.ALLOW_PRIVATE_NETWORK_TARGETS });

/** A replayed response shows the endpoint's secret only while the endpoint exists. */
const endpointExists = async ({ deps, principal, body }: { deps: AppDeps; principal: Principal; body: unknown }) =>
  (await findEndpoint(deps.sql, principal.orgId, (body as { id: string }).id)) !== null;

export const webhooksFamily: RouteFamily = {
  base: BASE,
  tag: 'Webhooks',
  description: 'Endpoints that receive events as signed Standard Webhooks, and the log of their deliveries.',
  routes: [
    route({
      method: 'GET', path: '/webhooks', operationId: 'list_webhooks', summary: 'List webhook endpoints (never their secrets)',
      permissions: ['org.read'], query: PageQuery,
      responses: { 200: { description: 'A page of endpoints', schema: WebhookListSchema } },
      async handler({ query, principal, deps }) {
        const page = await listEndpoints(deps.sql, principal.orgId, query);
        return { status: 200, body: { ...page, limit: query.limit, offset: query.offset } };
      },
    }),
    route({
      method: 'GET', path: '/webhooks/:id', operationId: 'get_webhook', summary: 'Get a webhook endpoint (never its secret)',
      permissions: ['org.read'], params: IdParams,
      responses: { 200: { description: 'The endpoint', schema: WebhookEndpointSchema } },
      async handler({ params, principal, deps }) {
        const endpoint = await findEndpoint(deps.sql, principal.orgId, params.id);
        if (!endpoint) throw notFound('webhook');
        return { status: 200, body: endpoint };
      },
    }),
    route({
      method: 'POST', path: '/webhooks', operationId: 'create_webhook', summary: 'Create a webhook endpoint',
      description: 'The answer carries the signing `secret` (`whsec_...`): it is shown here and on rotate-secret only. The URL must be https and must not resolve to a private address (unless ALLOW_PRIVATE_NETWORK_TARGETS).',
      permissions: ['org.write'], body: WebhookCreateSchema,
      responses: { 201: { description: 'The new endpoint with its secret', schema: WebhookEndpointWithSecretSchema } },
      async handler({ body, principal, deps }) {
        await checkUrl(deps, body.url);
        const endpoint = await insertEndpoint(deps.sql, principal.orgId, { ...body, secret: newWebhookSecret() });
        return { status: 201, body: endpoint, headers: { Location: `${BASE}/webhooks/${endpoint.id}` } };
      },
      stillExists: endpointExists,
    }),
    route({
      method: 'PATCH', path: '/webhooks/:id', operationId: 'update_webhook', summary: 'Update a webhook endpoint',
      description: '`enabled: true` resumes an endpoint the service disabled after 5 days of failures.',
      permissions: ['org.write'], params: IdParams, body: WebhookPatchSchema,
      responses: { 200: { description: 'The updated endpoint', schema: WebhookEndpointSchema } },
      async handler({ params, body, principal, deps }) {
        if (body.url !== undefined) await checkUrl(deps, body.url);
        const endpoint = await updateEndpoint(deps.sql, principal.orgId, params.id, body);
        if (!endpoint) throw notFound('webhook');
        return { status: 200, body: endpoint };
      },
    }),
    route({
      method: 'DELETE', path: '/webhooks/:id', operationId: 'delete_webhook', summary: 'Delete a webhook endpoint and its delivery log',
      permissions: ['org.write'], params: IdParams,
      responses: { 204: { description: 'Deleted' } },
      async handler({ params, principal, deps }) {
        if (!(await deleteEndpoint(deps.sql, principal.orgId, params.id))) throw notFound('webhook');
        return { status: 204 };
      },
    }),
    route({
      method: 'POST', path: '/webhooks/:id/rotate-secret', operationId: 'rotate_webhook_secret', summary: 'Replace the signing secret',
      description: 'For 24 hours deliveries carry two signatures, one with the new secret and one with the old, so receivers can switch over.',
      permissions: ['org.write'], params: IdParams,
      responses: { 200: { description: 'The endpoint with its new secret', schema: WebhookEndpointWithSecretSchema } },
      async handler({ params, principal, deps }) {
        const endpoint = await rotateEndpointSecret(deps.sql, principal.orgId, params.id, newWebhookSecret());
        if (!endpoint) throw notFound('webhook');
        return { status: 200, body: endpoint };
      },
      stillExists: endpointExists,
    }),
    route({
      method: 'GET', path: '/webhooks/:id/deliveries', operationId: 'list_webhook_deliveries', summary: 'List deliveries, newest first, with their attempts',
      permissions: ['org.read'], params: IdParams, query: PageQuery,
      responses: { 200: { description: 'A page of deliveries', schema: DeliveryListSchema } },
      async handler({ params, query, principal, deps }) {
        if (!(await findEndpoint(deps.sql, principal.orgId, params.id))) throw notFound('webhook');
        const page = await listDeliveries(deps.sql, principal.orgId, params.id, query);
        return { status: 200, body: { ...page, limit: query.limit, offset: query.offset } };
      },
    }),
    route({
      method: 'POST', path: '/webhooks/:id/deliveries/:deliveryId/retry', operationId: 'retry_webhook_delivery', summary: 'Send a delivery again',
      description: 'One more attempt of a `succeeded` or `failed` delivery (409 `invalid_state` while it is `pending` or its endpoint is disabled).',
      permissions: ['org.write'], params: DeliveryParams,
      responses: { 202: { description: 'The delivery, `pending` again', schema: DeliverySchema } },
      async handler({ params, principal, deps }) {
        // Claim and start in one transaction: if Temporal cannot take the workflow, the delivery stays as it was.
        const delivery = await deps.sql.begin(async (tx) => {
          const ticket = await claimDeliveryRetry(tx, principal.orgId, params.id, params.deliveryId);
          if (ticket === null) throw notFound('delivery');
          if (ticket === 'pending') throw new AppError(409, 'invalid_state', 'the delivery is still being attempted');
          if (ticket === 'disabled') throw new AppError(409, 'invalid_state', 'the endpoint is disabled: enable it first');
          await startRetry(deps, ticket);
          return findDelivery(tx, principal.orgId, params.id, params.deliveryId);
        });
        if (!delivery) throw notFound('delivery');
        return { status: 202, body: delivery };
      },
    }),
  ],
};

async function startRetry(deps: AppDeps, ticket: RetryTicket): Promise<void> {
  try {
    await startDeliveryWorkflow(deps, ticket, { retryNumber: ticket.retryNumber });
  } catch (err) {
    deps.log.error({ err, delivery_id: ticket.deliveryId }, 'could not start the delivery retry workflow');
    throw new AppError(503, 'service_unavailable', 'the workflow service is unavailable; the delivery was not retried, try again', {
      headers: { 'Retry-After': '5' },
    });
  }
}
