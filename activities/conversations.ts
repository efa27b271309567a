import { endConversation, evaluateConversation } from '../src/conversations/lifecycle.ts';
import { heartbeating, type ActivityDeps, type ActivityRegistration } from './index.ts';

export function createConversationActivities(full: ActivityDeps) {
  return {
    /** The inactivity timer ran out: end the conversation (a no-op if the visitor ended it first). */
    async endIdleConversation(input: { conversationId: string }): Promise<boolean> {
      return endConversation(full, input.conversationId, 'inactivity');
    },
    async evaluateEndedConversation(input: { conversationId: string }): Promise<boolean> {
      return heartbeating(() => evaluateConversation(full, input.conversationId));
    },
  };
}

export type ConversationActivities = ReturnType<typeof createConversationActivities>;

/** Run by the conversations queue's worker (activities/index.ts finds this module). */
export const registration: ActivityRegistration = { queue: 'conversations', create: createConversationActivities };
