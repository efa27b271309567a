import type { Sql } from '../db/index.ts';
import { findKeyByTokenHash } from '../db/api-keys.ts';
import { listenDurably } from '../db/listen.ts';
import { isPermission, type Permission } from '../schemas/permissions.ts';
import { tokenDigest, tokenKindOf, type TokenKind } from './tokens.ts';

/** Who a request acts for. */
export interface Principal {
  orgId: string;
  keyId: string;
  kind: TokenKind;
  memberId: string | null;
  permissions: ReadonlySet<Permission>;
}

export interface Authenticator {
  /** The principal of a bearer token, or null when it is unknown or revoked. */
  authenticate(token: string): Promise<Principal | null>;
  /** Forgets a key at once in this process; other processes learn through NOTIFY. */
  forget(keyId: string): void;
  close(): Promise<void>;
}

/** The NOTIFY channel on which a revoked key's id is announced to every API replica. */
export const KEY_REVOKED_CHANNEL = 'ams_api_key_revoked';

const MAX_ENTRIES = 10_000;

/**
 * Looks tokens up by hash and caches hits briefly, so an authenticated request usually costs no
 * query. Revocation stays immediate: the revoking process drops its entry and every other replica
 * drops it on the NOTIFY sent in the revoking transaction.
 */
export async function createAuthenticator(sql: Sql, opts: { ttlMs?: number } = {}): Promise<Authenticator> {
  const ttlMs = opts.ttlMs ?? 60_000;
  const cache = new Map<string, { principal: Principal; expires: number }>();

  const forget = (keyId: string): void => {
    for (const [hash, entry] of cache) if (entry.principal.keyId === keyId) cache.delete(hash);
  };
  // Durably: a replica that stopped hearing revocations would accept a revoked key until its cache expired.
  const subscription = await listenDurably(sql, KEY_REVOKED_CHANNEL, (keyId) => forget(keyId), () => cache.clear());

  async function authenticate(token: string): Promise<Principal | null> {
    const kind = tokenKindOf(token);
    if (!kind || token.length > 200) return null;
    const cacheKey = tokenDigest(token);
    const hit = cache.get(cacheKey);
    if (hit && hit.expires > Date.now()) return hit.principal;
    const row = await findKeyByTokenHash(sql, Buffer.from(cacheKey, 'base64'));
    if (!row || row.kind !== kind) {
      cache.delete(cacheKey);
      return null;
    }
    const principal: Principal = {
      orgId: row.org_id, keyId: row.id, kind: row.kind, memberId: row.member_id,
      permissions: new Set(row.permissions.filter(isPermission)),
    };
    if (cache.size >= MAX_ENTRIES) cache.clear();
    cache.set(cacheKey, { principal, expires: Date.now() + ttlMs });
    return principal;
  }

  return { authenticate, forget, close: () => subscription.unlisten() };
}
