import { randomUUID } from 'node:crypto';
import { AppError } from '../../src/errors.ts';
import type { Sql } from '../../src/db/index.ts';
import type { SecretBox } from '../../src/crypto/secret-box.ts';
import {
  claimIdempotencyKey, completeIdempotencyKey, findIdempotencyKey, IDEMPOTENCY_LEASE_SECONDS, releaseIdempotencyKey, renewIdempotencyLeases,
} from '../../src/db/idempotency-keys.ts';

export interface StoredResponse { status: number; headers: Record<string, string>; body: unknown }

const KEY_FORMAT = /^[\x21-\x7e]{1,255}$/;

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
 * The claims this process holds while their requests run, per database, renewed every third of a
 * lease in one statement. A claim is tied to the process that runs its request: when the process
 * dies (a crash, an OOM kill, a deploy), renewals stop and a retry may take the key over once the
 * lease lapsed (issue 40, D15), while a twin of a request still running, however long, gets 409.
 */
const held = new Map<Sql, { holders: Set<string>; timer: NodeJS.Timeout }>();

function hold(sql: Sql, holder: string): () => void {
  let entry = held.get(sql);
  if (!entry) {
    const holders = new Set<string>();
    const timer = setInterval(() => {
      // A failed renewal is retried at the next tick; the lease outlasts two of them.
      renewIdempotencyLeases(sql, [...holders]).catch(() => undefined);
    }, (IDEMPOTENCY_LEASE_SECONDS * 1000) / 3);
    timer.unref();
    entry = { holders, timer };
    held.set(sql, entry);
  }
  entry.holders.add(holder);
  return () => {
    entry.holders.delete(holder);
    if (entry.holders.size === 0) {
      clearInterval(entry.timer);
      held.delete(sql);
    }
  };
}

/** Who sends the request: its organization and API key (a stored response is replayed to that key only). */
export interface IdempotencyScope { orgId: string; keyId: string }

/**
 * Runs `execute` at most once per (organization, key) within 24 hours. A repeat with the same
 * request from the same API key replays the stored response; one with another request, or from
 * another API key, is 422; one while the first still runs is 409 (one whose process died runs
 * again once its lease lapsed). Only successes are stored: after an error the key is free again, as nothing changed. `canReplay` is asked before a stored body is
 * shown again: a response holding a shown-once secret of a resource since deleted is 409, not replayed.
 */
export async function runIdempotent(sql: Sql, secrets: SecretBox, scope: IdempotencyScope, key: string, print: Buffer,
  execute: () => Promise<StoredResponse>, canReplay?: (body: unknown) => Promise<boolean>): Promise<StoredResponse & { replayed: boolean }> {
  const { orgId } = scope;
  const holder = randomUUID();
  if (!(await claimIdempotencyKey(sql, orgId, key, { fingerprint: print, apiKeyId: scope.keyId, holder }))) {
    const prior = await findIdempotencyKey(sql, orgId, key);
    if (!prior) return runIdempotent(sql, secrets, scope, key, print, execute, canReplay);
    const reused = () => new AppError(422, 'idempotency_key_reused', 'this Idempotency-Key was used with a different request');
    if (!prior.fingerprint.equals(print)) throw reused();
    if (prior.state === 'in_progress') {
      throw new AppError(409, 'idempotency_in_progress', 'the first request with this Idempotency-Key is still running', {
        headers: { 'Retry-After': '1' },
      });
    }
    // Another key's response (a token, a secret) is never replayed to it.
    if (prior.apiKeyId !== scope.keyId) throw reused();
    const body: unknown = prior.responseBody === null ? undefined : JSON.parse(secrets.open(prior.responseBody, sealContext(orgId, key)));
    if (canReplay && !(await canReplay(body))) {
      throw new AppError(409, 'invalid_state', 'the resource this Idempotency-Key created is gone; its response is not shown again');
    }
    return { status: prior.responseStatus, headers: prior.responseHeaders, body, replayed: true };
  }
  const letGo = hold(sql, holder);
  try {
    let response: StoredResponse;
    try {
      response = await execute();
    } catch (err) {
      // A refused request changed nothing: release the key so a corrected retry can use it.
      await releaseIdempotencyKey(sql, orgId, key, holder);
      throw err;
    }
    if (response.status >= 500) await releaseIdempotencyKey(sql, orgId, key, holder);
    else {
      const sealedBody = response.body === undefined ? null : secrets.seal(JSON.stringify(response.body), sealContext(orgId, key));
      await completeIdempotencyKey(sql, orgId, key, holder, { status: response.status, headers: response.headers, sealedBody });
    }
    return { ...response, replayed: false };
  } finally {
    letGo();
  }
}

/** Stored responses are sealed: one may hold a token or a webhook secret shown only once. */
const sealContext = (orgId: string, key: string) => `idempotency_keys.response_body:${orgId}:${key}`;
