import type { Config } from '../config.ts';
import { createLlmRuntime, type LlmRuntimeOptions } from './llm.ts';
import { createOfflineRuntime } from './offline.ts';
import type { AgentRuntime } from './types.ts';

export type { AgentRuntime } from './types.ts';

/**
 * The runtime the service answers with: the LLM one when LLM_BASE_URL is set (with LLM_API_KEY
 * and LLM_MODEL), else the offline one, which needs nothing outside the service.
 * @example
 * const runtime = createRuntime(loadConfig());
 */
export function createRuntime(
  config: Pick<Config, 'LLM_BASE_URL' | 'LLM_API_KEY' | 'LLM_MODEL'>,
  opts: Pick<LlmRuntimeOptions, 'fetch' | 'logger'> = {},
): AgentRuntime {
  if (!config.LLM_BASE_URL) return createOfflineRuntime();
  return createLlmRuntime({ baseUrl: config.LLM_BASE_URL, apiKey: config.LLM_API_KEY, model: config.LLM_MODEL, ...opts });
}
