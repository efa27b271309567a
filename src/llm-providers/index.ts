import type { SecretBox } from '../crypto/secret-box.ts';
import { deleteLlmProvider, insertLlmProvider, updateLlmProvider } from '../db/llm-providers.ts';
import type { FamilyDeps } from '../deps.ts';
import { AppError, notFound } from '../errors.ts';
import { assertOutboundUrl, outboundPolicy } from '../net/outbound.ts';
import type { LlmProvider, LlmProviderCreate, LlmProviderPatch } from '../schemas/llm-providers.ts';

/** The LLM providers family's use cases: the key is sealed with `secrets`, never returned. */
type LlmProviderDeps = Pick<FamilyDeps, 'sql' | 'config'> & { secrets: SecretBox };

/**
 * The provider's base URL, checked as every URL the service calls for a user (webhooks, tools): https unless private
 * targets are allowed, no user info, never a private address (400 `private_network_target`). Trailing slashes go.
 */
async function baseUrl(deps: Pick<FamilyDeps, 'config'>, url: string): Promise<string> {
  await assertOutboundUrl(url, 'base_url', outboundPolicy(deps.config));
  return url.replace(/\/+$/, '');
}

export async function createLlmProvider(deps: LlmProviderDeps, orgId: string, input: LlmProviderCreate): Promise<LlmProvider> {
  return insertLlmProvider(deps.sql, deps.secrets, orgId, { ...input, base_url: await baseUrl(deps, input.base_url) });
}

/** Changes any subset of a provider's fields; a new key rotates the stored one. 404 when the provider is not the organization's. */
export async function patchLlmProvider(deps: LlmProviderDeps, orgId: string, id: string, patch: LlmProviderPatch): Promise<LlmProvider> {
  const fields = patch.base_url === undefined ? patch : { ...patch, base_url: await baseUrl(deps, patch.base_url) };
  const provider = await updateLlmProvider(deps.sql, deps.secrets, orgId, id, fields);
  if (!provider) throw notFound('LLM provider');
  return provider;
}

/** Deletes a provider no agent uses: 409 `llm_provider_in_use` (with `agent_count`) while agents' model settings name it. */
export async function removeLlmProvider(deps: Pick<FamilyDeps, 'sql'>, orgId: string, id: string): Promise<void> {
  const result = await deps.sql.begin((tx) => deleteLlmProvider(tx, orgId, id));
  if (result.agentsInUse > 0) {
    const agents = result.agentsInUse === 1 ? '1 agent uses' : `${result.agentsInUse} agents use`;
    throw new AppError(409, 'llm_provider_in_use', `${agents} this LLM provider in its model setting: point them at another provider (or null) first`, {
      extra: { agent_count: result.agentsInUse },
    });
  }
  if (!result.deleted) throw notFound('LLM provider');
}
