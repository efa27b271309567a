import type { Static } from '@sinclair/typebox';
import type { Db, Sql } from '../db/index.ts';
import type { ApiKeySchema } from '../schemas/api-keys.ts';
import { newId } from '../ids.ts';
import { KEY_REVOKED_CHANNEL } from './authenticator.ts';
import { isPermission, PERMISSIONS, type Permission } from '../schemas/permissions.ts';
import { generateToken, hashToken, tokenHint, type TokenKind } from './tokens.ts';
import {
  ensureMember, getApiKey as findApiKey, insertApiKey, insertOrganization, listApiKeys as listKeys, lockApiKeyPermissions,
  markApiKeyRevoked, upsertBootstrapKey, type ApiKey as RepoApiKey,
} from '../db/api-keys.ts';

export type ApiKey = Static<typeof ApiKeySchema>;

const toApiKey = (row: RepoApiKey): ApiKey => ({ ...row, created_at: row.created_at.toISOString() }) as ApiKey;

/** Issues a key; the token is returned here and never again. */
export async function createApiKey(db: Db, orgId: string, input: {
  name: string; permissions: readonly Permission[]; userEmail?: string | null; token?: string;
}): Promise<ApiKey & { token: string }> {
  const kind: TokenKind = input.userEmail ? 'user' : 'org';
  const memberId = input.userEmail ? await ensureMember(db, orgId, input.userEmail) : null;
  const token = input.token ?? generateToken(kind);
  const id = newId();
  await insertApiKey(db, orgId, {
    id, memberId, kind, name: input.name, permissions: [...new Set(input.permissions)], tokenHash: hashToken(token), tokenHint: tokenHint(token),
  });
  const key = await getApiKey(db, orgId, id);
  return { ...(key as ApiKey), token };
}

export async function getApiKey(db: Db, orgId: string, id: string): Promise<ApiKey | null> {
  const row = await findApiKey(db, orgId, id);
  return row ? toApiKey(row) : null;
}

export async function listApiKeys(db: Db, orgId: string, page: { limit: number; offset: number }): Promise<{ data: ApiKey[]; total: number }> {
  const { data, total } = await listKeys(db, orgId, page);
  return { data: data.map(toApiKey), total };
}

/** Why a revocation was refused: the key holds a permission the revoking key lacks (the first such). */
export type RevokeRefusal = { lacking: Permission };

/**
 * Revokes a key and tells every replica to forget it, when every permission it holds is in
 * `holderPermissions` (a key may revoke only keys no more powerful than itself). Returns false
 * when there was no such key.
 */
export async function revokeApiKey(db: Db, orgId: string, id: string, holderPermissions: ReadonlySet<Permission>): Promise<boolean | RevokeRefusal> {
  const permissions = await lockApiKeyPermissions(db, orgId, id);
  if (!permissions) return false;
  const lacking = permissions.filter(isPermission).find((p) => !holderPermissions.has(p));
  if (lacking) return { lacking };
  await markApiKeyRevoked(db, id, KEY_REVOKED_CHANNEL);
  return true;
}

/** Creates an organization with an admin key holding every permission. */
export async function createOrganization(db: Db, name: string): Promise<{ org_id: string; name: string; token: string }> {
  const orgId = newId();
  await insertOrganization(db, orgId, name);
  const key = await createApiKey(db, orgId, { name: 'admin', permissions: PERMISSIONS });
  return { org_id: orgId, name, token: key.token };
}

/**
 * Makes `AMS_BOOTSTRAP_TOKEN` an org key with every permission in the organization named `default`
 * (created when missing). Safe to run at every start and from several processes.
 */
export async function ensureBootstrapKey(sql: Sql, token: string): Promise<string> {
  return sql.begin((tx) => upsertBootstrapKey(tx, { permissions: [...PERMISSIONS], tokenHash: hashToken(token), tokenHint: tokenHint(token) }));
}
