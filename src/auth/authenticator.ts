import type { Sql } from '../db/index.ts';
import { findKeyByTokenHash, keysNotLive } from '../db/api-keys.ts';
import { memberScope } from '../db/members.ts';
import { listenDurably } from '../db/listen.ts';
import { isPermission, type Permission } from '../schemas/permissions.ts';
import { tokenDigest, tokenKindOf, type TokenKind } from './tokens.ts';

/** Who a request acts for. */
export interface Principal {
  orgId: string;
  keyId: string;
  kind: TokenKind;
  /** The member a user token acts for (null for an organization key): who the audit log and the inbox name. */
  memberId: string | null;
  permissions: ReadonlySet<Permission>;
  /**
   * The agents whose conversations this principal may see (issue 45): an operator's served agents; null
   * for everyone else (organization keys, supervisors, admins, and operators serving every agent).
   */
  agentScope: readonly string[] | null;
}

export interface Authenticator {
  /** The principal of a bearer token, or null when it is unknown or revoked. */
  authenticate(token: string): Promise<Principal | null>;
  /**
   * The principal of a token this process holds in its cache, without waiting for anything; undefined when
   * `authenticate` must look it up (unknown here, expired, or not a token at all).
   */
  cached(token: string): Principal | undefined;
  /** Forgets a key at once in this process (and ends what watches it); other processes learn through NOTIFY. */
  forget(keyId: string): void;
  /**
   * Calls `onRevoked` once when the key is revoked, on whichever replica: what outlives the request
   * that authenticated it (a live stream) ends with it. A key revoked before the watch began is found
   * too (it is checked once the watch is in place). Returns what stops watching.
   */
  watchRevocation(keyId: string, onRevoked: () => void): () => void;
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

  const watchers = new Map<string, Set<() => void>>();

  const forget = (keyId: string): void => {
    for (const [hash, entry] of cache) if (entry.principal.keyId === keyId) cache.delete(hash);
    const watching = watchers.get(keyId);
    watchers.delete(keyId);
    for (const onRevoked of watching ?? []) onRevoked();
  };
  /** Ends the watches of keys that are no longer live (revocations announced while nobody listened, or before a watch began). */
  const recheck = (ids: string[]): void => {
    if (ids.length === 0) return;
    keysNotLive(sql, ids).then((gone) => gone.forEach(forget), () => undefined);
  };
  // Durably: a replica that stopped hearing revocations would accept a revoked key until its cache expired.
  // A re-made LISTEN missed what was announced meanwhile: the cache goes, and watched keys are checked.
  const subscription = await listenDurably(sql, KEY_REVOKED_CHANNEL, (keyId) => forget(keyId), () => {
    cache.clear();
    recheck([...watchers.keys()]);
  });

  function watchRevocation(keyId: string, onRevoked: () => void): () => void {
    let once = false;
    const fire = () => { if (!once) { once = true; onRevoked(); } };
    const set = watchers.get(keyId) ?? new Set();
    set.add(fire);
    watchers.set(keyId, set);
    recheck([keyId]);
    return () => {
      once = true;
      const current = watchers.get(keyId);
      current?.delete(fire);
      if (current?.size === 0) watchers.delete(keyId);
    };
  }

  function cached(token: string): Principal | undefined {
    if (!tokenKindOf(token) || token.length > 200) return undefined;
    const hit = cache.get(tokenDigest(token));
    return hit && hit.expires > Date.now() ? hit.principal : undefined;
  }

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
    const scope = row.member_id ? await memberScope(sql, row.member_id) : null;
    const principal: Principal = {
      orgId: row.org_id, keyId: row.id, kind: row.kind, memberId: row.member_id,
      permissions: new Set(row.permissions.filter(isPermission)),
      agentScope: scope?.role === 'operator' && scope.agent_ids.length > 0 ? scope.agent_ids : null,
    };
    if (cache.size >= MAX_ENTRIES) cache.clear();
    cache.set(cacheKey, { principal, expires: Date.now() + ttlMs });
    return principal;
  }

  return { authenticate, cached, forget, watchRevocation, close: () => subscription.unlisten() };
}
