import type { Config } from '../config.ts';
import { createLlmRuntime, type LlmRuntimeOptions } from './llm.ts';
import { createOfflineRuntime } from './offline.ts';
import type { AgentRuntime } from './types.ts';

export type { AgentRuntime } from './types.ts';

/**
 * Where an agent's turns go when its `model` setting says (issue 46, item 3): a provider's endpoint and key (none: the
 * deployment's LLM_*), the model name (none: LLM_MODEL) and the sampling sent with each request.
 */
export interface RuntimeModel {
  endpoint?: { baseUrl: string; apiKey: string | null } | undefined;
  model?: string | undefined;
  temperature?: number | undefined;
  max_tokens?: number | undefined;
}

/**
 * The runtime the service answers with: the LLM one when LLM_BASE_URL is set (with LLM_API_KEY
 * and LLM_MODEL) or `model` names a provider's endpoint, else the offline one, which needs nothing outside the service.
 * @example
 * const runtime = createRuntime(loadConfig());
 * const agents = createRuntime(config, { fetch: guarded }, { endpoint: { baseUrl, apiKey }, model: 'gpt-4o-mini', temperature: 0.2 });
 */
export function createRuntime(
  config: Pick<Config, 'LLM_BASE_URL' | 'LLM_API_KEY' | 'LLM_MODEL'>,
  opts: Pick<LlmRuntimeOptions, 'fetch' | 'logger'> = {},
  model: RuntimeModel = {},
): AgentRuntime {
  const endpoint = model.endpoint ?? (config.LLM_BASE_URL ? { baseUrl: config.LLM_BASE_URL, apiKey: config.LLM_API_KEY ?? null } : null);
  if (!endpoint) return createOfflineRuntime();
  return createLlmRuntime({
    baseUrl: endpoint.baseUrl, apiKey: endpoint.apiKey, model: model.model ?? config.LLM_MODEL, ...opts,
    ...(model.temperature !== undefined || model.max_tokens !== undefined ? { sampling: { temperature: model.temperature, max_tokens: model.max_tokens } } : {}),
  });
}
