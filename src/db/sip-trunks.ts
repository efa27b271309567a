import { listPage, patchFields, type Db } from './index.ts';
import { newId } from '../ids.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import { normalizeSipHost } from '../domain/sip-host.ts';
import { SipTrunkPatchSchema, type SipTrunk } from '../schemas/sip-trunks.ts';

interface SipTrunkRow { id: string; label: string; sip_host: string; sip_username: string; created_at: Date; updated_at: Date }

// Never `password_sealed`: only loadSipTrunkPassword reads it.
const COLUMNS = ['id', 'label', 'sip_host', 'sip_username', 'created_at', 'updated_at'];

/** The additional data a password is sealed with: a sealed value copied onto another trunk does not open. */
const passwordContext = (trunkId: string) => `sip_trunks.password:${trunkId}`;

/** A trunk's fields as stored: `sip_host` already normalized, `password` in plaintext (sealed here). */
export interface SipTrunkInput { label: string; sip_host: string; sip_username: string; password: string }

/** The API shape of a trunk row (no credential). */
export function toSipTrunk(row: SipTrunkRow): SipTrunk {
  return {
    id: row.id, label: row.label, sip_host: row.sip_host, sip_username: row.sip_username,
    created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
  };
}

export async function insertSipTrunk(db: Db, secrets: SecretBox, orgId: string, input: SipTrunkInput): Promise<SipTrunk> {
  const id = newId();
  const [row] = await db<SipTrunkRow[]>`
    insert into sip_trunks (id, org_id, label, sip_host, sip_username, password_sealed)
    values (${id}, ${orgId}, ${input.label}, ${input.sip_host}, ${input.sip_username}, ${secrets.seal(input.password, passwordContext(id))})
    returning ${db(COLUMNS)}`;
  return toSipTrunk(row!);
}

/** A trunk of the organization, or null (another organization's trunk is null too). */
export async function findSipTrunk(db: Db, orgId: string, id: string): Promise<SipTrunk | null> {
  const [row] = await db<SipTrunkRow[]>`select ${db(COLUMNS)} from sip_trunks where id = ${id} and org_id = ${orgId}`;
  return row ? toSipTrunk(row) : null;
}

/**
 * The organization's (oldest) trunk to `sipHost` with that user name, or null. The host is
 * normalized first, so an exported `sip:` URI finds its trunk; one that does not parse finds none.
 */
export async function findSipTrunkByHost(db: Db, orgId: string, sipHost: string, sipUsername: string): Promise<SipTrunk | null> {
  const host = normalizeSipHost(sipHost);
  if (!host.ok) return null;
  const [row] = await db<SipTrunkRow[]>`select ${db(COLUMNS)} from sip_trunks
    where org_id = ${orgId} and sip_host = ${host.host} and sip_username = ${sipUsername}
    order by created_at, id limit 1`;
  return row ? toSipTrunk(row) : null;
}

export async function listSipTrunks(db: Db, orgId: string, q: { limit: number; offset: number }): Promise<{ data: SipTrunk[]; total: number }> {
  return listPage(db, { ...q, columns: db(COLUMNS), from: db`from sip_trunks where org_id = ${orgId}`, order: db`created_at desc, id desc` }, toSipTrunk);
}

/** Applies the fields present in `patch`; a password is sealed anew (rotated). Null when absent. */
export async function updateSipTrunk(db: Db, secrets: SecretBox, orgId: string, id: string, patch: Partial<SipTrunkInput>): Promise<SipTrunk | null> {
  const fields = patchFields(SipTrunkPatchSchema, patch, ['password']);
  if (patch.password !== undefined) fields.password_sealed = secrets.seal(patch.password, passwordContext(id));
  if (Object.keys(fields).length === 0) return findSipTrunk(db, orgId, id);
  const [row] = await db<SipTrunkRow[]>`
    update sip_trunks set ${db(fields)}, updated_at = now()
    where id = ${id} and org_id = ${orgId} returning ${db(COLUMNS)}`;
  return row ? toSipTrunk(row) : null;
}

/**
 * Deletes a trunk unless transfer rules of live agents use it: then nothing changes and the
 * answer counts them. Rules of agents already deleted (waiting for their purge) go with it.
 * Pass a transaction: the trunk is locked, so no rule can start using it meanwhile.
 */
export async function deleteSipTrunk(db: Db, orgId: string, id: string): Promise<{ deleted: boolean; rulesInUse: number }> {
  const [trunk] = await db`select id from sip_trunks where id = ${id} and org_id = ${orgId} for update`;
  if (!trunk) return { deleted: false, rulesInUse: 0 };
  const [count] = await db<{ n: number }[]>`select count(*)::int as n from transfer_rules r join agents a on a.id = r.agent_id
    where r.sip_trunk_id = ${id} and a.deleted_at is null`;
  if (count!.n > 0) return { deleted: false, rulesInUse: count!.n };
  await db`delete from transfer_rules where sip_trunk_id = ${id}`;
  await db`delete from sip_trunks where id = ${id}`;
  return { deleted: true, rulesInUse: 0 };
}

/**
 * The trunk's password in plaintext, for the telephony code that registers with the trunk:
 * the one place it is ever opened. Null when the trunk is absent.
 */
export async function loadSipTrunkPassword(db: Db, secrets: SecretBox, orgId: string, id: string): Promise<string | null> {
  const [row] = await db<{ password_sealed: string }[]>`select password_sealed from sip_trunks where id = ${id} and org_id = ${orgId}`;
  return row ? secrets.open(row.password_sealed, passwordContext(id)) : null;
}
