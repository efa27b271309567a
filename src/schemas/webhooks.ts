import { Type, type Static } from '@sinclair/typebox';
import { EVENT_SUBSCRIPTIONS, EVENT_TYPES } from './events.ts';
import { ListEnvelope, Nullable, StringEnum, Timestamp, Uuid } from './common.ts';

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

const WebhookUrl = Type.String({
  format: 'uri', pattern: '^https?://', maxLength: 2048, 'x-code': 'invalid_url',
  description: 'Where deliveries are POSTed: https (http only with ALLOW_PRIVATE_NETWORK_TARGETS); never a private address',
});
const Subscriptions = Type.Array(StringEnum(EVENT_SUBSCRIPTIONS), {
  minItems: 1, maxItems: EVENT_SUBSCRIPTIONS.length, uniqueItems: true,
  description: `Event types to receive, or \`*\` for every type: ${EVENT_TYPES.join(', ')}`,
});
const Description = Type.String({ maxLength: 500 });
const Secret = Type.String({ pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$', description: 'Signing secret: shown only on create and rotate-secret' });

/** An endpoint as every endpoint answers it: never with its secret. */
export const WebhookEndpointSchema = Type.Object({
  id: Uuid,
  url: Type.String(),
  events: Type.Array(StringEnum(EVENT_SUBSCRIPTIONS)),
  description: Nullable(Type.String()),
  enabled: Type.Boolean(),
  disabled_reason: Nullable(Type.String({ description: 'Why the service disabled the endpoint (null when enabled or disabled by PATCH)' })),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'WebhookEndpoint', additionalProperties: false });
export type WebhookEndpoint = Static<typeof WebhookEndpointSchema>;

/** What GET /webhooks/:id answers: the endpoint and how its deliveries fare. */
export const WebhookEndpointDetailSchema = Type.Composite([WebhookEndpointSchema, Type.Object({
  success_rate_24h: Nullable(Type.Number({ minimum: 0, maximum: 1, description: 'Share of the delivery attempts of the last 24 hours that succeeded (0 to 1); null when there were none' })),
  last_failure_at: Nullable(Type.String({ format: 'date-time', description: 'When the latest failed delivery attempt was made; null when none failed' })),
})], { $id: 'WebhookEndpointDetail', additionalProperties: false });
export type WebhookEndpointDetail = Static<typeof WebhookEndpointDetailSchema>;

/** What create and rotate-secret answer: the endpoint with its (new) secret. */
export const WebhookEndpointWithSecretSchema = Type.Composite([WebhookEndpointSchema, Type.Object({ secret: Secret })],
  { $id: 'WebhookEndpointWithSecret', additionalProperties: false });
export type WebhookEndpointWithSecret = Static<typeof WebhookEndpointWithSecretSchema>;

export const WebhookCreateSchema = Type.Object({
  url: WebhookUrl,
  events: Subscriptions,
  description: Type.Optional(Description),
}, { $id: 'WebhookCreate', additionalProperties: false });
export type WebhookCreate = Static<typeof WebhookCreateSchema>;

export const WebhookPatchSchema = Type.Object({
  url: Type.Optional(WebhookUrl),
  events: Type.Optional(Subscriptions),
  enabled: Type.Optional(Type.Boolean({ description: '`true` also clears `disabled_reason` and the failure streak' })),
  description: Type.Optional(Nullable(Description)),
}, { $id: 'WebhookPatch', additionalProperties: false });
export type WebhookPatch = Static<typeof WebhookPatchSchema>;

export const WebhookListSchema = ListEnvelope(WebhookEndpointSchema, 'WebhookEndpointList');

export const DeliveryAttemptSchema = Type.Object({
  at: Timestamp,
  status_code: Nullable(Type.Integer({ description: 'HTTP status of the answer; null when none came (network error, timeout)' })),
  error: Nullable(Type.String({ description: 'Why the attempt failed; null when it succeeded' })),
}, { $id: 'WebhookDeliveryAttempt', additionalProperties: false });

export const DeliverySchema = Type.Object({
  id: Uuid,
  event_id: Type.String(),
  event_type: StringEnum(EVENT_TYPES),
  status: StringEnum(DELIVERY_STATUSES),
  attempts: Type.Array(DeliveryAttemptSchema, { description: 'Oldest first' }),
}, { $id: 'WebhookDelivery', additionalProperties: false });
export type Delivery = Static<typeof DeliverySchema>;

export const DeliveryListSchema = ListEnvelope(DeliverySchema, 'WebhookDeliveryList');

export const DeliveryParams = Type.Object({ id: Uuid, deliveryId: Uuid }, { additionalProperties: false });
