import type { Db } from './index.ts';

/**
 * The idempotency_keys table: one claimed Idempotency-Key per organization, with the fingerprint
 * of its request, the API key that sent it and, once done, its sealed response.
 */

/** How long a claimed key is kept before it may be claimed afresh. */
export const IDEMPOTENCY_HOURS_KEPT = 24;

export interface IdempotencyRecord {
  fingerprint: Buffer;
  apiKeyId: string | null;
  state: 'in_progress' | 'completed';
  responseStatus: number;
  responseHeaders: Record<string, string>;
  /** Sealed JSON of the body, or null when the response had none. */
  responseBody: string | null;
}

/** Claims (orgId, key) for a new request; false when a live claim exists (see findIdempotencyKey). */
export async function claimIdempotencyKey(db: Db, orgId: string, key: string, claim: { fingerprint: Buffer; apiKeyId: string }): Promise<boolean> {
  const claimed = await db`
    insert into idempotency_keys (org_id, key, fingerprint, api_key_id, state)
    values (${orgId}, ${key}, ${claim.fingerprint}, ${claim.apiKeyId}, 'in_progress')
    on conflict (org_id, key) do update
      set fingerprint = excluded.fingerprint, api_key_id = excluded.api_key_id, state = 'in_progress', created_at = now(),
          response_status = null, response_headers = null, response_body = null
      where idempotency_keys.created_at < now() - make_interval(hours => ${IDEMPOTENCY_HOURS_KEPT})
    returning key`;
  return claimed.length > 0;
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

/** Frees a claim still in progress (its request was refused, so nothing changed). */
export async function releaseIdempotencyKey(db: Db, orgId: string, key: string): Promise<void> {
  await db`delete from idempotency_keys where org_id = ${orgId} and key = ${key} and state = 'in_progress'`;
}

/** Stores the response of a claimed key (the body already sealed). */
export async function completeIdempotencyKey(db: Db, orgId: string, key: string, response: {
  status: number; headers: Record<string, string>; sealedBody: string | null;
}): Promise<void> {
  await db`update idempotency_keys set state = 'completed', response_status = ${response.status},
      response_headers = ${db.json(response.headers)}, response_body = ${response.sealedBody}
    where org_id = ${orgId} and key = ${key}`;
}
