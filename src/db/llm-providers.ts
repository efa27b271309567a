import { listPage, patchFields, type Db } from './index.ts';
import { newId } from '../ids.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import { LlmProviderPatchSchema, type LlmProvider } from '../schemas/llm-providers.ts';

interface LlmProviderRow {
  id: string; name: string; base_url: string; api_key_last4: string | null; has_key: boolean; default_model: string; created_at: Date; updated_at: Date;
}

// Never `api_key_sealed` itself: only loadLlmProviderCredentials opens it.
const COLUMNS = ['id', 'name', 'base_url', 'api_key_last4', 'default_model', 'created_at', 'updated_at'];

/** The additional data a key is sealed with: a sealed value copied onto another provider does not open. */
const keyContext = (providerId: string) => `llm_providers.api_key:${providerId}`;

/** What responses may show of a key: its last 4 characters, and only of a key long enough that they give little away. */
const last4 = (key: string) => (key.length >= 12 ? key.slice(-4) : null);

/** A provider's fields as stored: `api_key` in plaintext (sealed here), null for none. */
export interface LlmProviderInput { name: string; base_url: string; api_key?: string | null | undefined; default_model: string }

export function toLlmProvider(row: LlmProviderRow): LlmProvider {
  return {
    id: row.id, name: row.name, base_url: row.base_url, api_key_set: row.has_key, api_key_last4: row.api_key_last4,
    default_model: row.default_model, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
  };
}

const returning = (db: Db) => db`${db(COLUMNS)}, api_key_sealed is not null as has_key`;

export async function insertLlmProvider(db: Db, secrets: SecretBox, orgId: string, input: LlmProviderInput): Promise<LlmProvider> {
  const id = newId();
  const key = input.api_key ?? null;
  const [row] = await db<LlmProviderRow[]>`
    insert into llm_providers (id, org_id, name, base_url, api_key_sealed, api_key_last4, default_model)
    values (${id}, ${orgId}, ${input.name}, ${input.base_url}, ${key === null ? null : secrets.seal(key, keyContext(id))},
      ${key === null ? null : last4(key)}, ${input.default_model})
    returning ${returning(db)}`;
  return toLlmProvider(row!);
}

/** A provider of the organization, or null (another organization's provider is null too). */
export async function findLlmProvider(db: Db, orgId: string, id: string): Promise<LlmProvider | null> {
  const [row] = await db<LlmProviderRow[]>`select ${returning(db)} from llm_providers where id = ${id} and org_id = ${orgId}`;
  return row ? toLlmProvider(row) : null;
}

/** Whether the organization holds the provider; FOR SHARE, so a concurrent delete waits for the caller's transaction. */
export async function llmProviderHeld(db: Db, orgId: string, id: string): Promise<boolean> {
  const [row] = await db`select 1 from llm_providers where id = ${id} and org_id = ${orgId} for share`;
  return row !== undefined;
}

export async function listLlmProviders(db: Db, orgId: string, q: { limit: number; offset: number }): Promise<{ data: LlmProvider[]; total: number }> {
  return listPage(db, {
    ...q, columns: returning(db), from: db`from llm_providers where org_id = ${orgId}`, order: db`created_at desc, id desc`,
  }, toLlmProvider);
}

/** Applies the fields present in `patch`; a key is sealed anew (rotated), null removes it. Null when absent. */
export async function updateLlmProvider(db: Db, secrets: SecretBox, orgId: string, id: string, patch: Partial<LlmProviderInput>): Promise<LlmProvider | null> {
  const fields = patchFields(LlmProviderPatchSchema, patch, ['api_key']);
  if (patch.api_key !== undefined) {
    fields.api_key_sealed = patch.api_key === null ? null : secrets.seal(patch.api_key, keyContext(id));
    fields.api_key_last4 = patch.api_key === null ? null : last4(patch.api_key);
  }
  if (Object.keys(fields).length === 0) return findLlmProvider(db, orgId, id);
  const [row] = await db<LlmProviderRow[]>`
    update llm_providers set ${db(fields)}, updated_at = now()
    where id = ${id} and org_id = ${orgId} returning ${returning(db)}`;
  return row ? toLlmProvider(row) : null;
}

/**
 * Deletes a provider no live agent names in its `model` setting (nor in a pending draft): then nothing changes
 * and the answer counts those agents. Pass a transaction: the provider is locked meanwhile.
 */
export async function deleteLlmProvider(db: Db, orgId: string, id: string): Promise<{ deleted: boolean; agentsInUse: number }> {
  const [provider] = await db`select id from llm_providers where id = ${id} and org_id = ${orgId} for update`;
  if (!provider) return { deleted: false, agentsInUse: 0 };
  const [count] = await db<{ n: number }[]>`select count(*)::int as n from agents
    where org_id = ${orgId} and deleted_at is null
      and (config->'model'->>'provider_id' = ${id} or draft->'changes'->'model'->>'provider_id' = ${id})`;
  if (count!.n > 0) return { deleted: false, agentsInUse: count!.n };
  await db`delete from llm_providers where id = ${id}`;
  return { deleted: true, agentsInUse: 0 };
}

/**
 * The provider's endpoint, key in plaintext and default model, for the runtime that calls it: the one place the
 * key is ever opened. Null when the organization has no such provider.
 */
export async function loadLlmProviderCredentials(db: Db, secrets: SecretBox, orgId: string, id: string): Promise<{
  baseUrl: string; apiKey: string | null; defaultModel: string; updatedAt: Date;
} | null> {
  const [row] = await db<{ base_url: string; api_key_sealed: string | null; default_model: string; updated_at: Date }[]>`
    select base_url, api_key_sealed, default_model, updated_at from llm_providers where id = ${id} and org_id = ${orgId}`;
  if (!row) return null;
  return {
    baseUrl: row.base_url, defaultModel: row.default_model, updatedAt: row.updated_at,
    apiKey: row.api_key_sealed === null ? null : secrets.open(row.api_key_sealed, keyContext(id)),
  };
}
