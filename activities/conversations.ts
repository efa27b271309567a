import { endConversation, evaluateConversation } from '../src/conversations/lifecycle.ts';
import { createRuntime } from '../src/runtime/index.ts';
import { createLogger } from '../src/logger.ts';
import type { ActivityDeps } from './index.ts';

export function createConversationActivities(deps: ActivityDeps) {
  const runtime = createRuntime(deps.config);
  const log = createLogger(deps.config.LOG_LEVEL);
  const full = { ...deps, runtime, log };
  return {
    /** The inactivity timer ran out: end the conversation (a no-op if the visitor ended it first). */
    async endIdleConversation(input: { conversationId: string }): Promise<boolean> {
      return endConversation(full, input.conversationId, 'inactivity');
    },
    async evaluateEndedConversation(input: { conversationId: string }): Promise<boolean> {
      return evaluateConversation(full, input.conversationId);
    },
  };
}

export type ConversationActivities = ReturnType<typeof createConversationActivities>;
