import type { ActivityRegistration } from './index.ts';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { toolArgsContext, toolResultContext, type SealedToolOutcome } from '../src/tools/http.ts';
import { createToolSender } from '../src/tools/send.ts';
import type { ActivityDeps } from './index.ts';

export type { SealedToolOutcome } from '../src/tools/http.ts';

/** One tool call as the conversation workflow hands it to its activity. */
export interface ToolCallInput {
  /** The call's id: the `webhook-id` header, the same on every attempt. */
  callId: string;
  toolId: string;
  conversationId: string;
  mode: 'live' | 'sandbox';
  /** The arguments, JSON sealed with the SecretBox (context toolArgsContext). */
  sealedArgs: string;
  /** Attempts the workflow's retry policy allows: the last one reports instead of throwing. */
  maxAttempts: number;
}

/** Agent tool calls, run by the conversation workflow (update `callTool`). */
export function createAgentToolActivities({ sql, config, secrets }: Pick<ActivityDeps, 'sql' | 'config' | 'secrets'>) {
  const send = createToolSender({ sql, config, secrets });
  return {
    /**
     * One attempt of a call. A failure that may be repeated (nothing was answered to a POST; a GET
     * that failed or got a 5xx) throws, so the retry policy tries again with the same `webhook-id`;
     * anything else, and the last attempt, is reported as the outcome.
     */
    async callAgentTool(input: ToolCallInput): Promise<SealedToolOutcome> {
      const args = JSON.parse(secrets.open(input.sealedArgs, toolArgsContext(input.callId))) as Record<string, unknown>;
      const outcome = await send({ callId: input.callId, toolId: input.toolId, conversationId: input.conversationId, mode: input.mode, args });
      if (outcome.retryable && Context.current().info.attempt < input.maxAttempts) {
        throw ApplicationFailure.retryable(outcome.error ?? 'the call failed', 'ToolCallFailed');
      }
      const { result, ...rest } = outcome;
      return { ...rest, sealedResult: outcome.status === 'ok' ? secrets.seal(JSON.stringify(result), toolResultContext(input.callId)) : null };
    },
  };
}

export type AgentToolActivities = ReturnType<typeof createAgentToolActivities>;

export const registration: ActivityRegistration = { queue: 'conversations', create: createAgentToolActivities };
