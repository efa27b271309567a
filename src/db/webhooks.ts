import { listPage, patchFields, type Db } from './index.ts';
import { newId } from '../ids.ts';
import type { EventSubscription, EventType } from '../schemas/events.ts';
import {
  WebhookPatchSchema, type Delivery, type DeliveryStatus, type WebhookCreate, type WebhookEndpoint, type WebhookEndpointWithSecret, type WebhookPatch,
} from '../schemas/webhooks.ts';

interface EndpointRow {
  id: string; url: string; events: EventSubscription[]; description: string | null;
  enabled: boolean; disabled_reason: string | null; created_at: Date; updated_at: Date;
}

// Never `secret` or `previous_secret`: only the two functions that must show a secret read it.
const COLUMNS = ['id', 'url', 'events', 'description', 'enabled', 'disabled_reason', 'created_at', 'updated_at'];

/** How long the secret replaced by a rotation still signs, so receivers can switch over. */
export const PREVIOUS_SECRET_GRACE = '24 hours';
/** An endpoint whose every attempt failed for this long is disabled. */
export const DISABLE_AFTER_FAILING = '5 days';
export const FAILING_DISABLED_REASON = 'every delivery attempt failed for 5 days; PATCH enabled=true to resume';

/** The API shape of an endpoint row. */
export function toEndpoint(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id, url: row.url, events: row.events, description: row.description,
    enabled: row.enabled, disabled_reason: row.disabled_reason,
    created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
  };
}

export async function insertEndpoint(db: Db, orgId: string, input: WebhookCreate & { secret: string }): Promise<WebhookEndpointWithSecret> {
  const [row] = await db<EndpointRow[]>`
    insert into webhook_endpoints (id, org_id, url, events, description, secret)
    values (${newId()}, ${orgId}, ${input.url}, ${input.events}, ${input.description ?? null}, ${input.secret})
    returning ${db(COLUMNS)}`;
  return { ...toEndpoint(row!), secret: input.secret };
}

export async function findEndpoint(db: Db, orgId: string, id: string): Promise<WebhookEndpoint | null> {
  const [row] = await db<EndpointRow[]>`select ${db(COLUMNS)} from webhook_endpoints where id = ${id} and org_id = ${orgId}`;
  return row ? toEndpoint(row) : null;
}

export async function listEndpoints(db: Db, orgId: string, q: { limit: number; offset: number }): Promise<{ data: WebhookEndpoint[]; total: number }> {
  return listPage(db, { ...q, columns: db(COLUMNS), from: db`from webhook_endpoints where org_id = ${orgId}`, order: db`created_at desc, id desc` }, toEndpoint);
}

/** Applies the fields present in `patch`; enabling clears the failure streak and the reason. Null when absent. */
export async function updateEndpoint(db: Db, orgId: string, id: string, patch: WebhookPatch): Promise<WebhookEndpoint | null> {
  const fields = patchFields(WebhookPatchSchema, patch);
  if (patch.enabled !== undefined) Object.assign(fields, { disabled_reason: null, failing_since: null });
  if (Object.keys(fields).length === 0) return findEndpoint(db, orgId, id);
  const [row] = await db<EndpointRow[]>`
    update webhook_endpoints set ${db(fields)}, updated_at = now()
    where id = ${id} and org_id = ${orgId} returning ${db(COLUMNS)}`;
  return row ? toEndpoint(row) : null;
}

/** Replaces the secret; the old one keeps signing for PREVIOUS_SECRET_GRACE. Null when absent. */
export async function rotateEndpointSecret(db: Db, orgId: string, id: string, secret: string): Promise<WebhookEndpointWithSecret | null> {
  const [row] = await db<EndpointRow[]>`
    update webhook_endpoints set previous_secret = secret, secret = ${secret},
      previous_secret_expires_at = now() + ${PREVIOUS_SECRET_GRACE}::interval, updated_at = now()
    where id = ${id} and org_id = ${orgId} returning ${db(COLUMNS)}`;
  return row ? { ...toEndpoint(row), secret } : null;
}

export async function deleteEndpoint(db: Db, orgId: string, id: string): Promise<boolean> {
  const rows = await db`delete from webhook_endpoints where id = ${id} and org_id = ${orgId} returning id`;
  return rows.length > 0;
}

// ---- deliveries as the API shows them

interface DeliveryRow { id: string; event_id: string; event_type: EventType; status: DeliveryStatus }
interface AttemptRow { delivery_id: string; at: Date; status_code: number | null; error: string | null }

async function withAttempts(db: Db, rows: DeliveryRow[]): Promise<Delivery[]> {
  if (rows.length === 0) return [];
  const attempts = await db<AttemptRow[]>`
    select delivery_id, at, status_code, error from webhook_delivery_attempts
    where delivery_id = any(${rows.map((r) => r.id)}::uuid[]) order by at, id`;
  return rows.map((r) => ({
    id: r.id, event_id: r.event_id, event_type: r.event_type, status: r.status,
    attempts: attempts.filter((a) => a.delivery_id === r.id)
      .map((a) => ({ at: a.at.toISOString(), status_code: a.status_code, error: a.error })),
  }));
}

/** An endpoint's deliveries, newest first, each with its attempts. */
export async function listDeliveries(db: Db, orgId: string, endpointId: string, q: { limit: number; offset: number }):
  Promise<{ data: Delivery[]; total: number }> {
  const page = await listPage(db, {
    ...q,
    columns: db`d.id, d.event_id, e.type as event_type, d.status`,
    from: db`from webhook_deliveries d join events e on e.id = d.event_id where d.endpoint_id = ${endpointId} and d.org_id = ${orgId}`,
    order: db`d.created_at desc, d.id desc`,
  }, (row: DeliveryRow) => row);
  return { data: await withAttempts(db, page.data), total: page.total };
}

export async function findDelivery(db: Db, orgId: string, endpointId: string, deliveryId: string): Promise<Delivery | null> {
  const rows = await db<DeliveryRow[]>`select d.id, d.event_id, e.type as event_type, d.status
    from webhook_deliveries d join events e on e.id = d.event_id
    where d.id = ${deliveryId} and d.endpoint_id = ${endpointId} and d.org_id = ${orgId}`;
  return (await withAttempts(db, rows))[0] ?? null;
}

/** What a manual retry needs to start its workflow. */
export interface RetryTicket { deliveryId: string; eventId: string; endpointId: string; orgId: string; agentId: string | null; retryNumber: number }

/**
 * Puts a finished delivery back to `pending` and numbers the retry. Answers `pending` when the
 * delivery is still being attempted, `disabled` when its endpoint is, null when absent.
 */
export async function claimDeliveryRetry(db: Db, orgId: string, endpointId: string, deliveryId: string):
  Promise<RetryTicket | 'pending' | 'disabled' | null> {
  const [current] = await db<{ status: DeliveryStatus; enabled: boolean }[]>`
    select d.status, w.enabled from webhook_deliveries d join webhook_endpoints w on w.id = d.endpoint_id
    where d.id = ${deliveryId} and d.endpoint_id = ${endpointId} and d.org_id = ${orgId} for update of d`;
  if (!current) return null;
  if (!current.enabled) return 'disabled';
  if (current.status === 'pending') return 'pending';
  const [row] = await db<{ event_id: string; agent_id: string | null; manual_retries: number }[]>`
    update webhook_deliveries d set status = 'pending', manual_retries = manual_retries + 1, updated_at = now()
    from events e where d.id = ${deliveryId} and e.id = d.event_id
    returning d.event_id, e.agent_id, d.manual_retries`;
  return { deliveryId, eventId: row!.event_id, endpointId, orgId, agentId: row!.agent_id, retryNumber: row!.manual_retries };
}

// ---- dispatch (the outbox relay)

/** A delivery whose workflow dispatch starts. */
export interface PendingDelivery { deliveryId: string; eventId: string; endpointId: string; orgId: string; agentId: string | null }

/**
 * Creates the deliveries of undispatched events (one per enabled endpoint of the event's
 * organization subscribed to its type or `*`; a second dispatch adds none), and returns every
 * delivery of those events still waiting for its first workflow.
 */
export async function createDeliveries(db: Db, eventIds: string[]): Promise<PendingDelivery[]> {
  const pairs = await db<{ event_id: string; endpoint_id: string; org_id: string }[]>`
    select e.id as event_id, w.id as endpoint_id, e.org_id
    from events e join webhook_endpoints w
      on w.org_id = e.org_id and w.enabled and w.events && array[e.type, '*']
    where e.id = any(${eventIds}::text[]) and e.dispatched_at is null`;
  if (pairs.length > 0) {
    await db`insert into webhook_deliveries (id, org_id, endpoint_id, event_id)
      select * from unnest(${pairs.map(() => newId())}::uuid[], ${pairs.map((p) => p.org_id)}::uuid[],
        ${pairs.map((p) => p.endpoint_id)}::uuid[], ${pairs.map((p) => p.event_id)}::text[])
      on conflict (event_id, endpoint_id) do nothing`;
  }
  return db<PendingDelivery[]>`
    select d.id as "deliveryId", d.event_id as "eventId", d.endpoint_id as "endpointId", d.org_id as "orgId", e.agent_id as "agentId"
    from webhook_deliveries d join events e on e.id = d.event_id
    where d.event_id = any(${eventIds}::text[]) and e.dispatched_at is null and d.status = 'pending' and d.manual_retries = 0`;
}

export async function markEventsDispatched(db: Db, eventIds: string[]): Promise<void> {
  if (eventIds.length === 0) return;
  await db`update events set dispatched_at = now() where id = any(${eventIds}::text[]) and dispatched_at is null`;
}

/** Events committed more than `olderThanSeconds` ago and still not dispatched, oldest first. */
export async function staleEventIds(db: Db, olderThanSeconds: number, limit: number): Promise<string[]> {
  const rows = await db<{ id: string }[]>`select id from events
    where dispatched_at is null and created_at < now() - ${olderThanSeconds} * interval '1 second'
    order by created_at limit ${limit}`;
  return rows.map((r) => r.id);
}

// ---- what the delivery activities read and write

/** Everything one HTTP attempt needs; the secrets never leave the activity that signs. */
export interface AttemptTarget {
  url: string;
  enabled: boolean;
  secrets: string[];
  event: { id: string; type: string; created_at: Date; data: unknown };
}

export async function loadAttemptTarget(db: Db, deliveryId: string): Promise<AttemptTarget | null> {
  const [row] = await db<{
    url: string; enabled: boolean; secret: string; previous_secret: string | null; previous_valid: boolean;
    event_id: string; type: string; created_at: Date; data: unknown;
  }[]>`
    select w.url, w.enabled, w.secret, w.previous_secret, coalesce(w.previous_secret_expires_at > now(), false) as previous_valid,
      e.id as event_id, e.type, e.created_at, e.data
    from webhook_deliveries d join webhook_endpoints w on w.id = d.endpoint_id join events e on e.id = d.event_id
    where d.id = ${deliveryId}`;
  if (!row) return null;
  const secrets = row.previous_secret && row.previous_valid ? [row.secret, row.previous_secret] : [row.secret];
  return { url: row.url, enabled: row.enabled, secrets, event: { id: row.event_id, type: row.type, created_at: row.created_at, data: row.data } };
}

export interface AttemptRecord {
  deliveryId: string;
  attemptKey: string;
  at: string;
  statusCode: number | null;
  error: string | null;
  responseExcerpt: string | null;
  durationMs: number | null;
  ok: boolean;
}

/**
 * Stores one attempt (once, whatever the retries) and keeps the endpoint's failure streak:
 * a success ends it; a failure starts it if needed and disables an endpoint failing for
 * DISABLE_AFTER_FAILING. `finalStatus` settles the delivery.
 */
export async function recordAttempt(db: Db, attempt: AttemptRecord, finalStatus: DeliveryStatus | null): Promise<void> {
  await db`
    with delivery as (select endpoint_id from webhook_deliveries where id = ${attempt.deliveryId}),
    attempt as (
      insert into webhook_delivery_attempts (id, delivery_id, attempt_key, at, status_code, error, response_excerpt, duration_ms)
      select ${newId()}, ${attempt.deliveryId}, ${attempt.attemptKey}, ${attempt.at}, ${attempt.statusCode}, ${attempt.error},
        ${attempt.responseExcerpt}, ${attempt.durationMs} from delivery
      on conflict (delivery_id, attempt_key) do nothing returning id),
    settle as (
      update webhook_deliveries set status = coalesce(${finalStatus}, status), updated_at = now()
      where id = ${attempt.deliveryId} and ${finalStatus}::text is not null returning id)
    update webhook_endpoints w set
      failing_since = ${attempt.ok ? null : db`coalesce(w.failing_since, ${attempt.at}::timestamptz)`},
      enabled = ${attempt.ok ? db`w.enabled` : db`w.enabled and not coalesce(w.failing_since < ${attempt.at}::timestamptz - ${DISABLE_AFTER_FAILING}::interval, false)`},
      disabled_reason = ${attempt.ok ? db`w.disabled_reason` : db`case when w.enabled and w.failing_since < ${attempt.at}::timestamptz - ${DISABLE_AFTER_FAILING}::interval
        then ${FAILING_DISABLED_REASON} else w.disabled_reason end`}
    from delivery where w.id = delivery.endpoint_id and exists (select 1 from attempt)`;
}

/** Settles a delivery without an attempt (its endpoint was disabled meanwhile). */
export async function settleDelivery(db: Db, deliveryId: string, status: DeliveryStatus): Promise<void> {
  await db`update webhook_deliveries set status = ${status}, updated_at = now() where id = ${deliveryId}`;
}
