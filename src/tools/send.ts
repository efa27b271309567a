import type { Db } from '../db/index.ts';
import { loadToolTarget } from '../db/agent-tools.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import { createSandboxAgent, createToolAgent, sandboxEchoUrl, sendToolRequest, type ToolOutcome } from './http.ts';

/**
 * One attempt of an agent tool call in `live` or `sandbox` mode: the tool's target loaded (URL,
 * method, timeout, unsealed secrets), then one signed, bounded, SSRF-guarded request to it, or to
 * the service's echo endpoint in `sandbox`. Used by the conversation workflow's activity and, in
 * process, by activities where no conversation workflow runs (a simulation's turn).
 */

export interface ToolSendRequest {
  /** The call's id: the `webhook-id` header, the same on every attempt. */
  callId: string;
  toolId: string;
  conversationId: string;
  mode: 'live' | 'sandbox';
  args: Record<string, unknown>;
}

export type ToolSender = (request: ToolSendRequest) => Promise<ToolOutcome>;

/** A sender with its own connection pools, made on the first call (a worker whose agents call no tool loads none). */
export function createToolSender({ sql, config, secrets }: {
  sql: Db; config: { ALLOW_PRIVATE_NETWORK_TARGETS: boolean; PUBLIC_BASE_URL?: string | undefined; PORT: number }; secrets: SecretBox;
}): ToolSender {
  let live: ReturnType<typeof createToolAgent> | null = null;
  let sandbox: ReturnType<typeof createSandboxAgent> | null = null;
  return async (request) => {
    const target = await loadToolTarget(sql, secrets, request.toolId);
    if (!target) return { status: 'error', durationMs: 0, httpStatus: null, result: null, error: 'the tool was deleted', retryable: false };
    const sandboxed = request.mode === 'sandbox';
    return sendToolRequest(sandboxed ? (sandbox ??= createSandboxAgent()) : (live ??= createToolAgent(config)), {
      callId: request.callId, toolName: target.name, conversationId: request.conversationId,
      // The sandbox takes every call as a POST of {tool, arguments} (its echo endpoint's one shape).
      url: sandboxed ? sandboxEchoUrl(config) : target.url, method: sandboxed ? 'POST' : target.method, timeoutSeconds: target.timeoutSeconds,
      secrets: target.secrets, args: sandboxed ? { tool: target.name, arguments: request.args } : request.args,
    });
  };
}

/** Attempts of one call made in process, as the conversation workflow's retry policy allows (its TOOL_CALL_ATTEMPTS, 250 ms doubling). */
export const IN_PROCESS_ATTEMPTS = 3;

/** One call made in process: repeated (same `webhook-id`, the same pauses between) only where repeating is safe. */
export async function sendInProcess(send: ToolSender, request: ToolSendRequest): Promise<ToolOutcome> {
  for (let attempt = 1; ; attempt++) {
    const outcome = await send(request);
    if (!outcome.retryable || attempt >= IN_PROCESS_ATTEMPTS) return outcome;
    await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** (attempt - 1)));
  }
}
