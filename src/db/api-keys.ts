import { listPage, type Db } from './index.ts';
import { newId } from '../ids.ts';

/**
 * The api_keys, members and organizations tables. Tokens are never stored: only their SHA-256
 * (`token_hash`) and a hint. The rules (who may grant or revoke what) live in src/auth/keys.ts.
 */

export interface ApiKey {
  id: string;
  name: string;
  permissions: string[];
  kind: 'org' | 'user';
  user_email: string | null;
  token_hint: string;
  created_at: Date;
}

/** What authentication needs of a live key. */
export interface KeyPrincipalRow { id: string; org_id: string; kind: 'org' | 'user'; member_id: string | null; permissions: string[] }

const selectKey = (db: Db) => db`
  select k.id, k.name, k.permissions, k.kind, m.email as user_email, k.token_hint, k.created_at
  from api_keys k left join members m on m.id = k.member_id`;

/** Finds or creates the member with this email (case-insensitive) in an organization. */
export async function ensureMember(db: Db, orgId: string, email: string): Promise<string> {
  const [row] = await db<{ id: string }[]>`
    insert into members (id, org_id, email, name) values (${newId()}, ${orgId}, ${email}, ${email.split('@')[0] || email})
    on conflict (org_id, lower(email)) do update set email = members.email
    returning id`;
  return row!.id;
}

export async function insertApiKey(db: Db, orgId: string, key: {
  id: string; memberId: string | null; kind: 'org' | 'user'; name: string; permissions: string[]; tokenHash: Buffer; tokenHint: string;
}): Promise<void> {
  await db`
    insert into api_keys (id, org_id, member_id, kind, name, permissions, token_hash, token_hint)
    values (${key.id}, ${orgId}, ${key.memberId}, ${key.kind}, ${key.name}, ${key.permissions}, ${key.tokenHash}, ${key.tokenHint})`;
}

export async function getApiKey(db: Db, orgId: string, id: string): Promise<ApiKey | null> {
  const [row] = await db<ApiKey[]>`${selectKey(db)} where k.org_id = ${orgId} and k.id = ${id} and k.revoked_at is null`;
  return row ?? null;
}

export async function listApiKeys(db: Db, orgId: string, page: { limit: number; offset: number }): Promise<{ data: ApiKey[]; total: number }> {
  return listPage<ApiKey, ApiKey>(db, {
    ...page,
    columns: db`k.id, k.name, k.permissions, k.kind, m.email as user_email, k.token_hint, k.created_at`,
    from: db`from api_keys k left join members m on m.id = k.member_id where k.org_id = ${orgId} and k.revoked_at is null`,
    order: db`k.created_at desc, k.id desc`,
  }, (row) => row);
}

/** A live key's permissions, locked until the transaction ends (a revocation decides on them); null when none. */
export async function lockApiKeyPermissions(db: Db, orgId: string, id: string): Promise<string[] | null> {
  const [key] = await db<{ permissions: string[] }[]>`select permissions from api_keys
    where org_id = ${orgId} and id = ${id} and revoked_at is null for update`;
  return key?.permissions ?? null;
}

/** Marks a key revoked and announces its id on `channel` (NOTIFY, delivered at commit to every replica). */
export async function markApiKeyRevoked(db: Db, id: string, channel: string): Promise<void> {
  await db`update api_keys set revoked_at = now() where id = ${id}`;
  await db`select pg_notify(${channel}, ${id})`;
}

/** The live key with this token hash, or null. */
export async function findKeyByTokenHash(db: Db, tokenHash: Buffer): Promise<KeyPrincipalRow | null> {
  const [row] = await db<KeyPrincipalRow[]>`
    select id, org_id, kind, member_id, permissions from api_keys
    where token_hash = ${tokenHash} and revoked_at is null`;
  return row ?? null;
}

/** The organization's own row, or null (a key outlives nothing: its organization exists while it does). */
export async function findOrganization(db: Db, orgId: string): Promise<{ id: string; name: string; created_at: Date } | null> {
  const [row] = await db<{ id: string; name: string; created_at: Date }[]>`select id, name, created_at from organizations where id = ${orgId}`;
  return row ?? null;
}

export async function insertOrganization(db: Db, id: string, name: string): Promise<void> {
  await db`insert into organizations (id, name) values (${id}, ${name})`;
}

/**
 * The organization named `default` (created when missing) with a key of `tokenHash` holding
 * `permissions`, un-revoked. Serialized by an advisory lock: safe from several processes at once.
 */
export async function upsertBootstrapKey(tx: Db, key: { permissions: string[]; tokenHash: Buffer; tokenHint: string }): Promise<string> {
  await tx`select pg_advisory_xact_lock(727002)`;
  let [org] = await tx<{ id: string }[]>`select id from organizations where name = 'default' order by created_at limit 1`;
  if (!org) {
    org = { id: newId() };
    await insertOrganization(tx, org.id, 'default');
  }
  await tx`
    insert into api_keys (id, org_id, kind, name, permissions, token_hash, token_hint)
    values (${newId()}, ${org.id}, 'org', 'bootstrap', ${key.permissions}, ${key.tokenHash}, ${key.tokenHint})
    on conflict (token_hash) do update set permissions = excluded.permissions, revoked_at = null`;
  return org.id;
}

/** Those of `ids` that name no live key (revoked, or gone with their organization). */
export async function keysNotLive(db: Db, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db<{ id: string }[]>`select id from unnest(${ids}::uuid[]) as ids(id)
    where not exists (select 1 from api_keys k where k.id = ids.id and k.revoked_at is null)`;
  return rows.map((r) => r.id);
}
