import { deliverEmailReply } from '../src/conversations/email.ts';
import type { ActivityDeps, ActivityRegistration } from './index.ts';

export function createEmailActivities(deps: ActivityDeps) {
  return {
    /** Sends one reply of an email conversation (idempotent: its Message-ID is fixed by its first message). */
    async deliverEmailReply(input: { conversationId: string; messageIds: string[] }): Promise<boolean> {
      return deliverEmailReply(deps, input.conversationId, input.messageIds);
    },
  };
}

export type EmailActivities = ReturnType<typeof createEmailActivities>;

/** Run by the conversations queue's worker (activities/index.ts finds this module). */
export const registration: ActivityRegistration = { queue: 'conversations', create: createEmailActivities };
