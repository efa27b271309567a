import { AppError } from '../../src/errors.ts';
import type { Sql } from '../../src/db/index.ts';
import type { SecretBox } from '../../src/crypto/secret-box.ts';

export interface StoredResponse { status: number; headers: Record<string, string>; body: unknown }

const KEY_FORMAT = /^[\x21-\x7e]{1,255}$/;
const HOURS_KEPT = 24;

/** Same JSON, same fingerprint, whatever the key order or spacing of the body. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * A keyed digest of the request: bodies can hold secrets (a SIP trunk password), and a plain
 * hash of one would let whoever reads the table test guesses offline.
 */
export function fingerprint(secrets: Pick<SecretBox, 'mac'>, method: string, path: string, body: unknown): Buffer {
  return secrets.mac(`${method} ${path}\n${canonical(body ?? null)}`);
}

export function checkIdempotencyKey(key: string): void {
  if (!KEY_FORMAT.test(key)) {
    throw new AppError(400, 'validation_error', 'Idempotency-Key must be 1 to 255 visible ASCII characters', {
      errors: [{ field: 'Idempotency-Key', code: 'invalid_format', message: 'Idempotency-Key must be 1 to 255 visible ASCII characters' }],
    });
  }
}

/**
 * Runs `execute` at most once per (organization, key) within 24 hours. A repeat with the same
 * request replays the stored response; one with another request is 422; one while the first still
 * runs is 409. Only successes are stored: after an error the key is free again, as nothing changed.
 */
export async function runIdempotent(sql: Sql, secrets: SecretBox, orgId: string, key: string, print: Buffer,
  execute: () => Promise<StoredResponse>): Promise<StoredResponse & { replayed: boolean }> {
  const claimed = await sql`
    insert into idempotency_keys (org_id, key, fingerprint, state) values (${orgId}, ${key}, ${print}, 'in_progress')
    on conflict (org_id, key) do update
      set fingerprint = excluded.fingerprint, state = 'in_progress', created_at = now(),
          response_status = null, response_headers = null, response_body = null
      where idempotency_keys.created_at < now() - make_interval(hours => ${HOURS_KEPT})
    returning key`;
  if (claimed.length === 0) {
    const [prior] = await sql<{ fingerprint: Buffer; state: string; response_status: number; response_headers: Record<string, string>; response_body: string | null }[]>`
      select fingerprint, state, response_status, response_headers, response_body
      from idempotency_keys where org_id = ${orgId} and key = ${key}`;
    if (!prior) return runIdempotent(sql, secrets, orgId, key, print, execute);
    if (!prior.fingerprint.equals(print)) {
      throw new AppError(422, 'idempotency_key_reused', 'this Idempotency-Key was used with a different request');
    }
    if (prior.state === 'in_progress') {
      throw new AppError(409, 'idempotency_in_progress', 'the first request with this Idempotency-Key is still running', {
        headers: { 'Retry-After': '1' },
      });
    }
    const body: unknown = prior.response_body === null ? undefined : JSON.parse(secrets.open(prior.response_body, sealContext(orgId, key)));
    return { status: prior.response_status, headers: prior.response_headers, body, replayed: true };
  }
  let response: StoredResponse;
  try {
    response = await execute();
  } catch (err) {
    // A refused request changed nothing: release the key so a corrected retry can use it.
    await release(sql, orgId, key);
    throw err;
  }
  if (response.status >= 500) await release(sql, orgId, key);
  else await store(sql, secrets, orgId, key, response);
  return { ...response, replayed: false };
}

async function release(sql: Sql, orgId: string, key: string): Promise<void> {
  await sql`delete from idempotency_keys where org_id = ${orgId} and key = ${key} and state = 'in_progress'`;
}

/** Stored responses are sealed: one may hold a token or a webhook secret shown only once. */
const sealContext = (orgId: string, key: string) => `idempotency_keys.response_body:${orgId}:${key}`;

async function store(sql: Sql, secrets: SecretBox, orgId: string, key: string, response: StoredResponse): Promise<void> {
  const body = response.body === undefined ? null : secrets.seal(JSON.stringify(response.body), sealContext(orgId, key));
  await sql`update idempotency_keys set state = 'completed', response_status = ${response.status},
      response_headers = ${sql.json(response.headers)}, response_body = ${body}
    where org_id = ${orgId} and key = ${key}`;
}
