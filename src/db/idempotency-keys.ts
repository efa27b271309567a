import type { Db } from './index.ts';

/**
 * The idempotency_keys table: one claimed Idempotency-Key per organization, with the fingerprint
 * of its request, the API key that sent it and, once done, its sealed response.
 */

/** How long a claimed key is kept before it may be claimed afresh. */
export const IDEMPOTENCY_HOURS_KEPT = 24;

/**
 * How long a claim in progress lives without renewal. The process running the request renews it
 * (renewIdempotencyLeases) well within this, for as long as the request runs; a claim whose process
 * died is taken over by a retry once its lease lapsed.
 */
export const IDEMPOTENCY_LEASE_SECONDS = 30;

export interface IdempotencyRecord {
  fingerprint: Buffer;
  apiKeyId: string | null;
  state: 'in_progress' | 'completed';
  responseStatus: number;
  responseHeaders: Record<string, string>;
  /** Sealed JSON of the body, or null when the response had none. */
  responseBody: string | null;
}

/**
 * Claims (orgId, key) for a new request as `holder` (an id of this one claim); false when a live
 * claim exists (see findIdempotencyKey). A claim is dead, and taken over, once it is older than
 * IDEMPOTENCY_HOURS_KEPT, or while still in progress once its lease lapsed (its process died).
 */
export async function claimIdempotencyKey(db: Db, orgId: string, key: string, claim: {
  fingerprint: Buffer; apiKeyId: string; holder: string; leaseSeconds?: number;
}): Promise<boolean> {
  const lease = claim.leaseSeconds ?? IDEMPOTENCY_LEASE_SECONDS;
  const claimed = await db`
    insert into idempotency_keys (org_id, key, fingerprint, api_key_id, state, holder, lease_expires_at)
    values (${orgId}, ${key}, ${claim.fingerprint}, ${claim.apiKeyId}, 'in_progress', ${claim.holder}, now() + make_interval(secs => ${lease}))
    on conflict (org_id, key) do update
      set fingerprint = excluded.fingerprint, api_key_id = excluded.api_key_id, state = 'in_progress', created_at = now(),
          holder = excluded.holder, lease_expires_at = excluded.lease_expires_at,
          response_status = null, response_headers = null, response_body = null
      where idempotency_keys.created_at < now() - make_interval(hours => ${IDEMPOTENCY_HOURS_KEPT})
         or (idempotency_keys.state = 'in_progress' and idempotency_keys.lease_expires_at < now())
    returning key`;
  return claimed.length > 0;
}

/** Extends the leases of the claims still in progress among `holders` (the requests this process runs). */
export async function renewIdempotencyLeases(db: Db, holders: string[], leaseSeconds = IDEMPOTENCY_LEASE_SECONDS): Promise<void> {
  if (holders.length === 0) return;
  await db`update idempotency_keys set lease_expires_at = now() + make_interval(secs => ${leaseSeconds})
    where holder = any(${holders}::uuid[]) and state = 'in_progress'`;
}

export async function findIdempotencyKey(db: Db, orgId: string, key: string): Promise<IdempotencyRecord | null> {
  const [row] = await db<{ fingerprint: Buffer; api_key_id: string | null; state: 'in_progress' | 'completed'; response_status: number;
    response_headers: Record<string, string>; response_body: string | null }[]>`
    select fingerprint, api_key_id, state, response_status, response_headers, response_body
    from idempotency_keys where org_id = ${orgId} and key = ${key}`;
  return row ? {
    fingerprint: row.fingerprint, apiKeyId: row.api_key_id, state: row.state, responseStatus: row.response_status,
    responseHeaders: row.response_headers, responseBody: row.response_body,
  } : null;
}

/**
 * Frees a claim still in progress (its request was refused, so nothing changed). Only `holder`'s own:
 * a claim taken over after its lease lapsed belongs to the request that took it.
 */
export async function releaseIdempotencyKey(db: Db, orgId: string, key: string, holder: string): Promise<void> {
  await db`delete from idempotency_keys where org_id = ${orgId} and key = ${key} and state = 'in_progress' and holder = ${holder}`;
}

/** Stores the response of `holder`'s claim of a key (the body already sealed); nothing when the claim was taken over. */
export async function completeIdempotencyKey(db: Db, orgId: string, key: string, holder: string, response: {
  status: number; headers: Record<string, string>; sealedBody: string | null;
}): Promise<void> {
  await db`update idempotency_keys set state = 'completed', response_status = ${response.status},
      response_headers = ${db.json(response.headers)}, response_body = ${response.sealedBody}
    where org_id = ${orgId} and key = ${key} and state = 'in_progress' and holder = ${holder}`;
}
