import { notFound } from '../../src/errors.ts';
import { findEndpoint, listEndpoints } from '../../src/db/webhooks.ts';
import { IdParams, PageQuery } from '../../src/schemas/common.ts';
import {
  DeliveryListSchema, DeliveryParams, DeliverySchema, WebhookCreateSchema, WebhookEndpointDetailSchema, WebhookEndpointSchema,
  WebhookEndpointWithSecretSchema, WebhookListSchema, WebhookPatchSchema,
} from '../../src/schemas/webhooks.ts';
import { listEndpointDeliveries, retryDelivery } from '../../src/webhooks/deliveries.ts';
import { changeEndpoint, createEndpoint, removeEndpoint, rotateSecret, showEndpoint } from '../../src/webhooks/endpoints.ts';
import type { Principal } from '../../src/auth/authenticator.ts';
import type { AppDeps } from '../context.ts';
import { pageReply, route, type RouteFamily } from '../routing.ts';

const BASE = '/api/v1/rest';

/** A replayed response shows the endpoint's secret only while the endpoint exists. */
const endpointExists = async ({ deps, principal, body }: { deps: AppDeps; principal: Principal; body: unknown }) =>
  (await findEndpoint(deps.sql, principal.orgId, (body as { id: string }).id)) !== null;

export const webhooksFamily: RouteFamily = {
  base: BASE,
  order: 50,
  tag: 'Webhooks',
  description: 'Endpoints that receive events as signed Standard Webhooks, and the log of their deliveries.',
  routes: [
    route({
      method: 'GET', path: '/webhooks', operationId: 'list_webhooks', summary: 'List webhook endpoints (never their secrets)',
      permissions: ['org.read'], query: PageQuery,
      responses: { 200: { description: 'A page of endpoints', schema: WebhookListSchema } },
      async handler({ query, principal, deps }) {
        const page = await listEndpoints(deps.sql, principal.orgId, query);
        return pageReply(page, query);
      },
    }),
    route({
      method: 'GET', path: '/webhooks/:id', operationId: 'get_webhook', summary: 'Get a webhook endpoint (never its secret)',
      description: 'With `success_rate_24h` (the share of the last 24 hours\' attempts that succeeded) and `last_failure_at`.',
      permissions: ['org.read'], params: IdParams,
      responses: { 200: { description: 'The endpoint and how its deliveries fare', schema: WebhookEndpointDetailSchema } },
      async handler({ params, principal, deps }) {
        const endpoint = await showEndpoint(deps, principal.orgId, params.id);
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
        const endpoint = await createEndpoint(deps, principal.orgId, body);
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
        const endpoint = await changeEndpoint(deps, principal.orgId, params.id, body);
        if (!endpoint) throw notFound('webhook');
        return { status: 200, body: endpoint };
      },
    }),
    route({
      method: 'DELETE', path: '/webhooks/:id', operationId: 'delete_webhook', summary: 'Delete a webhook endpoint and its delivery log',
      permissions: ['org.write'], params: IdParams,
      responses: { 204: { description: 'Deleted' } },
      async handler({ params, principal, deps }) {
        if (!(await removeEndpoint(deps, principal.orgId, params.id))) throw notFound('webhook');
        return { status: 204 };
      },
    }),
    route({
      method: 'POST', path: '/webhooks/:id/rotate-secret', operationId: 'rotate_webhook_secret', summary: 'Replace the signing secret',
      description: 'For 24 hours deliveries carry two signatures, one with the new secret and one with the old, so receivers can switch over.',
      permissions: ['org.write'], params: IdParams,
      responses: { 200: { description: 'The endpoint with its new secret', schema: WebhookEndpointWithSecretSchema } },
      async handler({ params, principal, deps }) {
        const endpoint = await rotateSecret(deps, principal.orgId, params.id);
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
        const page = await listEndpointDeliveries(deps, principal.orgId, params.id, query);
        if (!page) throw notFound('webhook');
        return pageReply(page, query);
      },
    }),
    route({
      method: 'POST', path: '/webhooks/:id/deliveries/:deliveryId/retry', operationId: 'retry_webhook_delivery', summary: 'Send a delivery again',
      description: 'One more attempt of a `succeeded` or `failed` delivery (409 `invalid_state` while it is `pending` or its endpoint is disabled).',
      permissions: ['org.write'], params: DeliveryParams,
      responses: { 202: { description: 'The delivery, `pending` again', schema: DeliverySchema } },
      async handler({ params, principal, deps }) {
        const delivery = await retryDelivery(deps, principal.orgId, params.id, params.deliveryId);
        return { status: 202, body: delivery };
      },
    }),
  ],
};

