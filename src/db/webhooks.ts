import { listPage, patchFields, type Db, type Sql } from './index.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import { newId } from '../ids.ts';
import type { EventSubscription, EventType } from '../schemas/events.ts';
import {
  WebhookPatchSchema, type Delivery, type DeliveryStatus, type WebhookCreate, type WebhookEndpoint, type WebhookEndpointWithSecret, type WebhookPatch,
} from '../schemas/webhooks.ts';

interface EndpointRow {
  id: string; url: string; events: EventSubscription[]; description: string | null;
  enabled: boolean; disabled_reason: string | null; created_at: Date; updated_at: Date;
}

// Never `secret_sealed` or `previous_secret_sealed`: only loadAttemptTarget opens them, to sign.
const COLUMNS = ['id', 'url', 'events', 'description', 'enabled', 'disabled_reason', 'created_at', 'updated_at'];

/** How long the secret replaced by a rotation still signs, so receivers can switch over. */
export const PREVIOUS_SECRET_GRACE = '24 hours';
/** An endpoint whose every attempt failed for this long is disabled. */
export const DISABLE_AFTER_FAILING = '5 days';
export const FAILING_DISABLED_REASON = 'every delivery attempt failed for 5 days; PATCH enabled=true to resume';

/**
 * The additional data a secret is sealed with: a sealed value copied onto another endpoint does
 * not open there. The previous secret is sealed with the same context (it moves on rotation).
 */
const secretContext = (endpointId: string) => `webhook_endpoints.secret:${endpointId}`;
/** A plaintext secret as stored before migration 013; sealed values start with the box's `v1:`. */
const PLAINTEXT = 'whsec_%';

/** The API shape of an endpoint row. */
export function toEndpoint(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id, url: row.url, events: row.events, description: row.description,
    enabled: row.enabled, disabled_reason: row.disabled_reason,
    created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
  };
}

export async function insertEndpoint(db: Db, secrets: SecretBox, orgId: string, input: WebhookCreate & { secret: string }): Promise<WebhookEndpointWithSecret> {
  const id = newId();
  const [row] = await db<EndpointRow[]>`
    insert into webhook_endpoints (id, org_id, url, events, description, secret_sealed)
    values (${id}, ${orgId}, ${input.url}, ${input.events}, ${input.description ?? null}, ${secrets.seal(input.secret, secretContext(id))})
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
export async function rotateEndpointSecret(db: Db, secrets: SecretBox, orgId: string, id: string, secret: string): Promise<WebhookEndpointWithSecret | null> {
  const [row] = await db<EndpointRow[]>`
    update webhook_endpoints set previous_secret_sealed = secret_sealed, secret_sealed = ${secrets.seal(secret, secretContext(id))},
      previous_secret_expires_at = now() + ${PREVIOUS_SECRET_GRACE}::interval, updated_at = now()
    where id = ${id} and org_id = ${orgId} returning ${db(COLUMNS)}`;
  return row ? { ...toEndpoint(row), secret } : null;
}

/** How an endpoint fared: the share of its attempts of the last 24 hours that succeeded (null when none) and its latest failure. */
export async function endpointHealth(db: Db, endpointId: string): Promise<{ success_rate_24h: number | null; last_failure_at: string | null }> {
  const [row] = await db<{ attempts: number; succeeded: number; last_failure_at: Date | null }[]>`
    select count(a.id)::int as attempts, count(a.id) filter (where a.error is null)::int as succeeded,
      (select last_failure_at from webhook_endpoints where id = ${endpointId}) as last_failure_at
    from webhook_delivery_attempts a join webhook_deliveries d on d.id = a.delivery_id
    where d.endpoint_id = ${endpointId} and a.at > now() - interval '24 hours'`;
  return {
    success_rate_24h: row && row.attempts > 0 ? Math.round((row.succeeded / row.attempts) * 10_000) / 10_000 : null,
    last_failure_at: row?.last_failure_at?.toISOString() ?? null,
  };
}

/**
 * Seals the secrets still stored in plaintext (rows written before migration 013). Run at start,
 * before anything reads a secret; idempotent. Returns how many endpoints it sealed.
 */
export async function sealPlaintextWebhookSecrets(db: Db, secrets: SecretBox): Promise<number> {
  const rows = await db<{ id: string; secret_sealed: string; previous_secret_sealed: string | null }[]>`
    select id, secret_sealed, previous_secret_sealed from webhook_endpoints
    where secret_sealed like ${PLAINTEXT} or previous_secret_sealed like ${PLAINTEXT} for update`;
  const seal = (id: string, value: string | null) => (value && value.startsWith('whsec_') ? secrets.seal(value, secretContext(id)) : value);
  for (const row of rows) {
    await db`update webhook_endpoints set secret_sealed = ${seal(row.id, row.secret_sealed)},
      previous_secret_sealed = ${seal(row.id, row.previous_secret_sealed)} where id = ${row.id}`;
  }
  return rows.length;
}

/** PostgreSQL's SQLSTATE for a transaction it aborted to break a deadlock. */
const DEADLOCK_DETECTED = '40P01';

/**
 * Deletes an endpoint, and with it (by cascade) its deliveries and their attempts. The dispatcher's claim and the
 * attempt recorder lock a delivery, then update its endpoint; the delete takes the two in that order too, the endpoint's
 * deliveries first: deleting the endpoint first and reaching its deliveries through the cascade took them the other way
 * round, and PostgreSQL broke the deadlock by aborting one side (the DELETE answered 500). A delivery fanned out after the
 * delete's locks can still close a circle; a delete PostgreSQL aborted for it is tried again, twice at most.
 */
export async function deleteEndpoint(sql: Sql, orgId: string, id: string): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await sql.begin(async (tx) => {
        await tx`select id from webhook_deliveries where endpoint_id = ${id} and org_id = ${orgId} order by id for update`;
        const rows = await tx`delete from webhook_endpoints where id = ${id} and org_id = ${orgId} returning id`;
        return rows.length > 0;
      });
    } catch (err) {
      if (attempt < 3 && (err as { code?: unknown } | null)?.code === DEADLOCK_DETECTED) continue;
      throw err;
    }
  }
}

/**
 * The endpoint's deliveries still being attempted: the ones a retry workflow may hold (its first run, and the latest
 * manual retry's), which deleting or disabling the endpoint cancels.
 */
export async function pendingDeliveries(db: Db, orgId: string, endpointId: string): Promise<{ eventId: string; manualRetries: number }[]> {
  return db<{ eventId: string; manualRetries: number }[]>`select event_id as "eventId", manual_retries as "manualRetries"
    from webhook_deliveries where endpoint_id = ${endpointId} and org_id = ${orgId} and status = 'pending'`;
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
    update webhook_deliveries d set status = 'pending', manual_retries = manual_retries + 1, workflow_started_at = now(), updated_at = now()
    from events e where d.id = ${deliveryId} and e.id = d.event_id
    returning d.event_id, e.agent_id, d.manual_retries`;
  return { deliveryId, eventId: row!.event_id, endpointId, orgId, agentId: row!.agent_id, retryNumber: row!.manual_retries };
}

// ---- the fast path: the dispatcher claims events and deliveries (issue 16)

/** A delivery as the dispatcher, the sweep and the retry workflows know it. */
export interface PendingDelivery { deliveryId: string; eventId: string; endpointId: string; orgId: string; agentId: string | null }

/** The channel the dispatchers LISTEN on: a committed event notifies it (the trigger of migration 012). */
export const OUTBOX_CHANNEL = 'webhook_outbox';

/**
 * Wakes every dispatcher to look at the outbox (events not fanned out, deliveries not claimed), as
 * a committed event does. The recovery sweep sends it each run, so a notification lost in between
 * delays a first attempt by one sweep interval, and the attempt is still the dispatcher's.
 */
export async function wakeDispatchers(db: Db): Promise<void> {
  await db`select pg_notify(${OUTBOX_CHANNEL}, ${CLAIM_DELIVERIES})`;
}

/**
 * The payload of a wake that asks for deliveries to be claimed too. A committed event's (empty) asks
 * for a fan-out only: the dispatcher claims after it when the fan-out made deliveries.
 */
export const CLAIM_DELIVERIES = 'deliveries';

/**
 * The endpoints `w` that receive the events `e` (id, org_id, type) of the query it joins: those of the event's
 * organization, enabled and subscribed to its type or `*`. Both fan-outs (fanOutWrittenEvent, fanOutEvents) join it.
 */
const subscribers = (db: Db) => db`join webhook_endpoints w on w.org_id = e.org_id and w.enabled and w.events && array[e.type, '*']`;

/**
 * The payload of a wake sent by a statement that fanned out an event it wrote (fanOutWrittenEvent): deliveries to
 * claim, no event to fan out.
 */
export const FANNED_OUT = 'fanned-out';

/**
 * The common table expressions that fan out an event written by the same statement (issue 48, round six), as
 * fanOutEvents would at once: after a CTE `event` that inserts it already dispatched (`dispatched_at`) and returns its
 * `id`, `org_id` and `type`, `fanned` makes one delivery per enabled endpoint of its organization subscribed to its type
 * or `*`, and `woke` wakes the dispatchers to claim them (FANNED_OUT) when it made any. `woke` is a plain select: the
 * statement must read it (`(select count(*) from woke)`) for the wake to be sent. One statement is one transaction: the
 * deliveries commit with the event, or neither does; the wake is delivered at that commit.
 */
export const fanOutWrittenEvent = (db: Db) => db`, fanned as (
      insert into webhook_deliveries (id, org_id, endpoint_id, event_id)
      select gen_random_uuid(), e.org_id, w.id, e.id
      from event e ${subscribers(db)}
      returning 1),
    woke as (select pg_notify(${OUTBOX_CHANNEL}, ${FANNED_OUT}) where exists (select 1 from fanned))`;

/**
 * Whether a statement failed because an endpoint it made a delivery for was deleted meanwhile (the delivery's foreign
 * key): nothing it wrote is kept, and it may be made again another way.
 */
export function isEndpointGone(err: unknown): boolean {
  const e = err as { code?: unknown; constraint_name?: unknown } | null;
  return e?.code === '23503' && e.constraint_name === 'webhook_deliveries_endpoint_id_fkey';
}

/**
 * Fans out up to `limit` undispatched events: one delivery per enabled endpoint of the event's
 * organization subscribed to its type or `*`, and the event marked dispatched, in one statement.
 * Rows another dispatcher holds are skipped (FOR UPDATE SKIP LOCKED). Returns how many events it took
 * and how many deliveries it made (none when no endpoint listens: most organizations have none).
 */
export async function fanOutEvents(db: Db, limit: number): Promise<{ events: number; deliveries: number }> {
  const [row] = await db<{ events: number; deliveries: number }[]>`
    with claimed as (
      select id, org_id, type from events where dispatched_at is null
      order by created_at limit ${limit} for update skip locked),
    marked as (
      update events e set dispatched_at = now() from claimed c where e.id = c.id returning e.id),
    inserted as (
      insert into webhook_deliveries (id, org_id, endpoint_id, event_id)
      select gen_random_uuid(), e.org_id, w.id, e.id
      from claimed e ${subscribers(db)}
      on conflict (event_id, endpoint_id) do nothing returning id)
    select (select count(*) from marked)::int as events, (select count(*) from inserted)::int as deliveries`;
  return { events: row?.events ?? 0, deliveries: row?.deliveries ?? 0 };
}

/** A claimed delivery with everything its first attempt needs: the dispatcher reads nothing more. */
export interface ClaimedDelivery extends PendingDelivery { target: SealedTarget }

/**
 * Claims up to `limit` deliveries waiting for their first attempt, oldest first, at most
 * `perEndpoint` in flight per endpoint counting `inFlight` (this process's attempts under way).
 * Skips rows another dispatcher holds; a claimed row carries `claimed_at`. Each comes with its
 * endpoint and event, as loadAttemptTarget reads them, still sealed. `moreWaiting` answers
 * whether any delivery still waits for its first attempt, unclaimed, after this claim, whether it claimed any or not; a row another
 * dispatcher is claiming at that moment counts as waiting, which costs at most one more claim.
 *
 * `successes`: successful attempts to record in the same statement (issue 48, round six), with what
 * recordSuccesses does for each; they are stored when this returns, and not at all when it throws.
 * The rows they settle are claimed already, so the claim never picks them.
 */
export async function claimDeliveries(db: Db, opts: { limit: number; perEndpoint: number; inFlight: Map<string, number>; successes?: AttemptRecord[] }):
  Promise<{ claimed: ClaimedDelivery[]; moreWaiting: boolean }> {
  const busyIds = [...opts.inFlight.keys()];
  const successes = opts.successes ?? [];
  const col = <T>(pick: (a: AttemptRecord) => T) => successes.map(pick);
  const rows = await db<(PendingDelivery & TargetRow & { moreWaiting: boolean })[]>`
    with busy as (select * from unnest(${busyIds}::uuid[], ${busyIds.map((id) => opts.inFlight.get(id)!)}::int[]) as b(endpoint_id, n)),
    ranked as (
      select d.id, d.created_at, row_number() over (partition by d.endpoint_id order by d.created_at, d.id) + coalesce(b.n, 0) as slot
      from webhook_deliveries d left join busy b on b.endpoint_id = d.endpoint_id
      where d.status = 'pending' and d.claimed_at is null and d.workflow_started_at is null),
    picked as (
      select id, endpoint_id from webhook_deliveries
      where id in (select id from ranked where slot <= ${opts.perEndpoint} order by created_at, id limit ${opts.limit})
        -- Re-checked on rows another dispatcher changed meanwhile.
        and status = 'pending' and claimed_at is null and workflow_started_at is null
      for update skip locked),
    ${successesRecorded(db, col)},
    -- One update of the endpoints for both (one statement may not update a row twice): the recovery sweep leaves this
    -- endpoint's waiting deliveries alone while last_claimed_at is recent (written at most once a second per endpoint);
    -- a success ends the failure streak of its endpoint.
    endpoints as (
      update webhook_endpoints w set
        last_claimed_at = case when w.id in (select endpoint_id from picked) and (w.last_claimed_at is null or w.last_claimed_at < now() - interval '1 second')
          then now() else w.last_claimed_at end,
        failing_since = case when w.id in (select endpoint_id from recovered) then null else w.failing_since end
      where (w.id in (select endpoint_id from picked) and (w.last_claimed_at is null or w.last_claimed_at < now() - interval '1 second'))
        or (w.failing_since is not null and w.id in (select endpoint_id from recovered))),
    claimed as (
      update webhook_deliveries d set claimed_at = now() from picked, events e, webhook_endpoints w
      where d.id = picked.id and e.id = d.event_id and w.id = d.endpoint_id
      returning d.id as "deliveryId", d.event_id as "eventId", d.endpoint_id as "endpointId", d.org_id as "orgId", e.agent_id as "agentId",
        ${targetColumns(db)})
    -- The backlog check, in this statement (issue 48), answered even when it claims nothing: the rows it claims still
    -- look unclaimed to it, so they are left out.
    select c.*, m."moreWaiting" from (select exists (select 1 from webhook_deliveries o where o.status = 'pending' and o.claimed_at is null
      and o.workflow_started_at is null and o.id not in (select id from picked)) as "moreWaiting") m left join claimed c on true`;
  return {
    claimed: rows.filter((r) => r.deliveryId !== null)
      .map(({ deliveryId, eventId, endpointId, orgId, agentId, moreWaiting: _more, ...target }) => ({ deliveryId, eventId, endpointId, orgId, agentId, target })),
    moreWaiting: rows[0]?.moreWaiting ?? true,
  };
}

/**
 * The common table expressions that record successful attempts (recordSuccesses, and the claim that carries them):
 * `input`, `attempt` (each attempt stored once), `settle` (its delivery `succeeded`) and `recovered` (the endpoints whose
 * failure streak a stored attempt ends: `endpoint_id`, of those with one).
 */
function successesRecorded(db: Db, col: <T>(pick: (a: AttemptRecord) => T) => T[]) {
  return db`input as (
      select * from unnest(${col(() => newId())}::uuid[], ${col((a) => a.deliveryId)}::uuid[], ${col((a) => a.attemptKey)}::text[],
        ${col((a) => a.at)}::timestamptz[], ${col((a) => a.statusCode)}::int[], ${col((a) => a.responseExcerpt)}::text[], ${col((a) => a.durationMs)}::int[])
        as i(id, delivery_id, attempt_key, at, status_code, response_excerpt, duration_ms)),
    attempt as (
      insert into webhook_delivery_attempts (id, delivery_id, attempt_key, at, status_code, error, response_excerpt, duration_ms)
      select i.id, i.delivery_id, i.attempt_key, i.at, i.status_code, null, i.response_excerpt, i.duration_ms
      from input i join webhook_deliveries d on d.id = i.delivery_id
      on conflict (delivery_id, attempt_key) do nothing returning delivery_id),
    settle as (
      update webhook_deliveries d set status = 'succeeded', updated_at = now() from input i where d.id = i.delivery_id returning d.id),
    recovered as (
      select w.id as endpoint_id from webhook_endpoints w
      where w.failing_since is not null and w.id in (select d.endpoint_id from webhook_deliveries d join attempt a on a.delivery_id = d.id))`;
}

/** Records that a delivery workflow owns these deliveries now: the dispatcher and the sweep leave them alone. */
export async function markWorkflowStarted(db: Db, deliveryIds: string[]): Promise<void> {
  if (deliveryIds.length === 0) return;
  await db`update webhook_deliveries set workflow_started_at = now(), claimed_at = null
    where id = any(${deliveryIds}::uuid[]) and workflow_started_at is null`;
}

/**
 * The recovery sweep's claim: deliveries still pending with no workflow, claimed more than
 * `olderThanSeconds` ago (their dispatcher died), or never claimed, created that long ago, while
 * no dispatcher claimed for their endpoint that long (none runs). A delivery waiting its turn
 * behind the per-endpoint limit of a live dispatcher stays on the fast path.
 * Re-claims them (so another sweep leaves them for a while) and says whether the first attempt
 * was already made (then the workflow starts with the retries).
 */
export async function claimStrandedDeliveries(db: Db, olderThanSeconds: number, limit: number): Promise<(PendingDelivery & { attempted: boolean })[]> {
  return db<(PendingDelivery & { attempted: boolean })[]>`
    with picked as (
      select id from webhook_deliveries
      where status = 'pending' and workflow_started_at is null
        and coalesce(claimed_at, created_at) < now() - ${olderThanSeconds} * interval '1 second'
        and (claimed_at is not null or not exists (select 1 from webhook_endpoints w
          where w.id = webhook_deliveries.endpoint_id and w.last_claimed_at >= now() - ${olderThanSeconds} * interval '1 second'))
      order by coalesce(claimed_at, created_at) limit ${limit} for update skip locked)
    update webhook_deliveries d set claimed_at = now() from picked, events e
    where d.id = picked.id and e.id = d.event_id
    returning d.id as "deliveryId", d.event_id as "eventId", d.endpoint_id as "endpointId", d.org_id as "orgId", e.agent_id as "agentId",
      exists (select 1 from webhook_delivery_attempts a where a.delivery_id = d.id) as attempted`;
}

// ---- what the delivery activities read and write

/** Everything one HTTP attempt needs; the secrets never leave the activity that signs. */
export interface AttemptTarget {
  url: string;
  enabled: boolean;
  secrets: string[];
  event: { id: string; type: string; created_at: Date; data: unknown };
}

/** An attempt's target as stored: the endpoint's secrets still sealed. */
export type SealedTarget = TargetRow;
interface TargetRow {
  endpoint_id: string; url: string; enabled: boolean; secret_sealed: string; previous_secret_sealed: string | null; previous_valid: boolean;
  event_id: string; type: string; created_at: Date; data: unknown;
}
/** The columns of a TargetRow, over `w` (the endpoint) and `e` (the event). */
const targetColumns = (db: Db) => db`w.id as endpoint_id, w.url, w.enabled, w.secret_sealed, w.previous_secret_sealed,
  coalesce(w.previous_secret_expires_at > now(), false) as previous_valid,
  e.id as event_id, e.type, e.created_at, e.data`;

/**
 * Opens a target's secrets. `open` defaults to the box itself; the dispatcher passes a cached
 * opener (a sealed value opens to the same secret every time, so the cache is keyed by it).
 */
export function openAttemptTarget(secretBox: SecretBox, row: SealedTarget, open = (sealed: string, context: string) => secretBox.open(sealed, context)): AttemptTarget {
  const context = secretContext(row.endpoint_id);
  const secrets = row.previous_secret_sealed && row.previous_valid
    ? [open(row.secret_sealed, context), open(row.previous_secret_sealed, context)] : [open(row.secret_sealed, context)];
  return { url: row.url, enabled: row.enabled, secrets, event: { id: row.event_id, type: row.type, created_at: row.created_at, data: row.data } };
}

export async function loadAttemptTarget(db: Db, secretBox: SecretBox, deliveryId: string): Promise<AttemptTarget | null> {
  const [row] = await db<TargetRow[]>`
    select ${targetColumns(db)}
    from webhook_deliveries d join webhook_endpoints w on w.id = d.endpoint_id join events e on e.id = d.event_id
    where d.id = ${deliveryId}`;
  return row ? openAttemptTarget(secretBox, row) : null;
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
      last_failure_at = ${attempt.ok ? db`w.last_failure_at` : db`greatest(w.last_failure_at, ${attempt.at}::timestamptz)`},
      enabled = ${attempt.ok ? db`w.enabled` : db`w.enabled and not coalesce(w.failing_since < ${attempt.at}::timestamptz - ${DISABLE_AFTER_FAILING}::interval, false)`},
      disabled_reason = ${attempt.ok ? db`w.disabled_reason` : db`case when w.enabled and w.failing_since < ${attempt.at}::timestamptz - ${DISABLE_AFTER_FAILING}::interval
        then ${FAILING_DISABLED_REASON} else w.disabled_reason end`}
    from delivery where w.id = delivery.endpoint_id and exists (select 1 from attempt)
      -- A success on an endpoint that was not failing changes nothing: no write.
      and ${attempt.ok ? db`w.failing_since is not null` : db`true`}`;
}

/**
 * Stores many successful attempts in one statement, with what recordAttempt does for each: the
 * attempt once, the delivery settled `succeeded`, and the failure streak of an endpoint that had
 * one ended.
 */
export async function recordSuccesses(db: Db, attempts: AttemptRecord[]): Promise<void> {
  if (attempts.length === 0) return;
  const col = <T>(pick: (a: AttemptRecord) => T) => attempts.map(pick);
  await db`
    with ${successesRecorded(db, col)}
    update webhook_endpoints w set failing_since = null where w.id in (select endpoint_id from recovered)`;
}

/** Settles a delivery without an attempt (its endpoint was disabled meanwhile). */
export async function settleDelivery(db: Db, deliveryId: string, status: DeliveryStatus): Promise<void> {
  await db`update webhook_deliveries set status = ${status}, updated_at = now() where id = ${deliveryId}`;
}
