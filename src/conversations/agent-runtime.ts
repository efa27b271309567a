import type { Dispatcher } from 'undici';
import type { Config } from '../config.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import type { Db } from '../db/index.ts';
import { loadLlmProviderCredentials } from '../db/llm-providers.ts';
import { createOutboundAgent, outboundPolicy } from '../net/outbound.ts';
import { undici } from '../net/undici.ts';
import { createRuntime, type AgentRuntime } from '../runtime/index.ts';
import type { Agent } from '../schemas/agents.ts';

/**
 * The runtime of one agent's turn (issue 46, item 3), chosen per turn from its `model` setting:
 * - none, or one that sets nothing the deployment's runtime lacks: the deployment's runtime (LLM_* env, or offline);
 * - `provider_id`: that provider's base URL and key, its `model` (or the provider's `default_model`) and sampling;
 * - no provider: the deployment's LLM_BASE_URL with the setting's model and sampling; offline without LLM_BASE_URL, as before.
 * A provider's URL is the organization's: requests to it go through the outbound guard (no private address unless allowed,
 * checked at each connection, so a name that later resolves elsewhere is refused too).
 */
export async function runtimeFor(deps: { sql: Db; config: Config; secrets: SecretBox; runtime: AgentRuntime }, orgId: string,
  agent: Pick<Agent, 'model'>): Promise<AgentRuntime> {
  const setting = agent.model;
  if (!setting) return deps.runtime;
  const sampling = { temperature: setting.temperature ?? undefined, max_tokens: setting.max_tokens ?? undefined, model: setting.model ?? undefined };
  if (!setting.provider_id) {
    if (!deps.config.LLM_BASE_URL || Object.values(sampling).every((v) => v === undefined)) return deps.runtime;
    return createRuntime(deps.config, {}, sampling);
  }
  const provider = await loadLlmProviderCredentials(deps.sql, deps.secrets, orgId, setting.provider_id);
  // A provider cannot go while an agent names it (409); an agent whose setting still names one that did answers as the deployment does.
  if (!provider) return deps.runtime;
  return createRuntime(deps.config, { fetch: guardedFetch(deps.config) }, {
    ...sampling, model: sampling.model ?? provider.defaultModel, endpoint: { baseUrl: provider.baseUrl, apiKey: provider.apiKey },
  });
}

const dispatchers = new WeakMap<object, Dispatcher>();

/** A fetch whose connections pass the deployment's outbound policy; one connection pool per configuration. */
function guardedFetch(config: Config): typeof globalThis.fetch {
  let dispatcher = dispatchers.get(config);
  if (!dispatcher) {
    dispatcher = createOutboundAgent(outboundPolicy(config), { connections: 32 });
    dispatchers.set(config, dispatcher);
  }
  const pool = dispatcher;
  return ((input: Parameters<typeof globalThis.fetch>[0], init?: RequestInit) =>
    undici().fetch(input as string, { ...(init as object), dispatcher: pool } as Parameters<ReturnType<typeof undici>['fetch']>[1])) as unknown as typeof globalThis.fetch;
}

/**
 * The language the agent replies in: the setting's `reply_language` (`auto`, the default: the conversation's own;
 * `agent_default`: the agent's default_language; a tag: that language), else the conversation's language.
 */
export function replyLanguageOf(agent: Pick<Agent, 'model' | 'default_language'>, conversationLanguage: string | null): string {
  const wanted = agent.model?.reply_language ?? 'auto';
  if (wanted === 'agent_default') return agent.default_language ?? conversationLanguage ?? 'en';
  if (wanted !== 'auto') return wanted;
  return conversationLanguage ?? 'en';
}
