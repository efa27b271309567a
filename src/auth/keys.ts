import type { Static } from '@sinclair/typebox';
import type { Db, Sql } from '../db/index.ts';
import type { ApiKeySchema } from '../schemas/api-keys.ts';
import { newId } from '../ids.ts';
import { KEY_REVOKED_CHANNEL } from './authenticator.ts';
import { isPermission, PERMISSIONS, type Permission } from '../schemas/permissions.ts';
import { generateToken, hashToken, tokenHint, type TokenKind } from './tokens.ts';

export type ApiKey = Static<typeof ApiKeySchema>;

type ApiKeyRow = Omit<ApiKey, 'created_at'> & { created_at: Date };
const toApiKey = (row: ApiKeyRow): ApiKey => ({ ...row, created_at: row.created_at.toISOString() });

const selectKey = (db: Db) => db`
  select k.id, k.name, k.permissions, k.kind, m.email as user_email, k.token_hint, k.created_at
  from api_keys k left join members m on m.id = k.member_id`;

/** Finds or creates the member with this email (case-insensitive) in an organization. */
export async function ensureMember(db: Db, orgId: string, email: string): Promise<string> {
  const [row] = await db<{ id: string }[]>`
    insert into members (id, org_id, email) values (${newId()}, ${orgId}, ${email})
    on conflict (org_id, lower(email)) do update set email = members.email
    returning id`;
  return row!.id;
}

/** Issues a key; the token is returned here and never again. */
export async function createApiKey(db: Db, orgId: string, input: {
  name: string; permissions: readonly Permission[]; userEmail?: string | null; token?: string;
}): Promise<ApiKey & { token: string }> {
  const kind: TokenKind = input.userEmail ? 'user' : 'org';
  const memberId = input.userEmail ? await ensureMember(db, orgId, input.userEmail) : null;
  const token = input.token ?? generateToken(kind);
  const id = newId();
  const permissions = [...new Set(input.permissions)];
  await db`
    insert into api_keys (id, org_id, member_id, kind, name, permissions, token_hash, token_hint)
    values (${id}, ${orgId}, ${memberId}, ${kind}, ${input.name}, ${permissions}, ${hashToken(token)}, ${tokenHint(token)})`;
  const key = await getApiKey(db, orgId, id);
  return { ...key!, token };
}

export async function getApiKey(db: Db, orgId: string, id: string): Promise<ApiKey | null> {
  const [row] = await db<ApiKeyRow[]>`${selectKey(db)} where k.org_id = ${orgId} and k.id = ${id} and k.revoked_at is null`;
  return row ? toApiKey(row) : null;
}

export async function listApiKeys(db: Db, orgId: string, page: { limit: number; offset: number }): Promise<{ data: ApiKey[]; total: number }> {
  const rows = await db<ApiKeyRow[]>`${selectKey(db)} where k.org_id = ${orgId} and k.revoked_at is null
    order by k.created_at desc, k.id desc limit ${page.limit} offset ${page.offset}`;
  const [{ total } = { total: 0 }] = await db<{ total: number }[]>`
    select count(*)::int as total from api_keys where org_id = ${orgId} and revoked_at is null`;
  return { data: rows.map(toApiKey), total };
}

/** Why a revocation was refused: the key holds a permission the revoking key lacks (the first such). */
export type RevokeRefusal = { lacking: Permission };

/**
 * Revokes a key and tells every replica to forget it, when every permission it holds is in
 * `holderPermissions` (a key may revoke only keys no more powerful than itself). Returns false
 * when there was no such key.
 */
export async function revokeApiKey(db: Db, orgId: string, id: string, holderPermissions: ReadonlySet<Permission>): Promise<boolean | RevokeRefusal> {
  const [key] = await db<{ permissions: string[] }[]>`select permissions from api_keys
    where org_id = ${orgId} and id = ${id} and revoked_at is null for update`;
  if (!key) return false;
  const lacking = key.permissions.filter(isPermission).find((p) => !holderPermissions.has(p));
  if (lacking) return { lacking };
  await db`update api_keys set revoked_at = now() where id = ${id}`;
  await db`select pg_notify(${KEY_REVOKED_CHANNEL}, ${id})`;
  return true;
}

/** Creates an organization with an admin key holding every permission. */
export async function createOrganization(db: Db, name: string): Promise<{ org_id: string; name: string; token: string }> {
  const orgId = newId();
  await db`insert into organizations (id, name) values (${orgId}, ${name})`;
  const key = await createApiKey(db, orgId, { name: 'admin', permissions: PERMISSIONS });
  return { org_id: orgId, name, token: key.token };
}

/**
 * Makes `AMS_BOOTSTRAP_TOKEN` an org key with every permission in the organization named `default`
 * (created when missing). Safe to run at every start and from several processes.
 */
export async function ensureBootstrapKey(sql: Sql, token: string): Promise<string> {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(727002)`;
    let [org] = await tx<{ id: string }[]>`select id from organizations where name = 'default' order by created_at limit 1`;
    if (!org) {
      org = { id: newId() };
      await tx`insert into organizations (id, name) values (${org.id}, 'default')`;
    }
    await tx`
      insert into api_keys (id, org_id, kind, name, permissions, token_hash, token_hint)
      values (${newId()}, ${org.id}, 'org', 'bootstrap', ${[...PERMISSIONS]}, ${hashToken(token)}, ${tokenHint(token)})
      on conflict (token_hash) do update set permissions = excluded.permissions, revoked_at = null`;
    return org.id;
  });
}
