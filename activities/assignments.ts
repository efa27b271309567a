import { assignNext, checkAssignee } from '../src/assignments/index.ts';
import { notifyMembers, type NoticeInput } from '../src/assignments/notify.ts';
import type { ActivityDeps, ActivityRegistration } from './index.ts';

export function createAssignmentActivities(deps: ActivityDeps) {
  return {
    /** Keeps the conversation's assignee, or assigns the next member round-robin, or leaves it queued (idempotent under the row lock). */
    async assignNext(input: { conversationId: string; exclude: string[] }) {
      return assignNext(deps.sql, input);
    },
    /** After the assignee's wait: taken over, closed, kept, changed by hand, or released to the next member. */
    async checkAssignee(input: { conversationId: string; memberId: string; timedOut: boolean }) {
      return checkAssignee(deps.sql, input);
    },
    /** Tells the members concerned (live stream, mail, SMS) as their preferences say. */
    async notifyMembers(input: NoticeInput): Promise<number> {
      return notifyMembers(deps, input);
    },
  };
}

export type AssignmentActivities = ReturnType<typeof createAssignmentActivities>;

/** Run by the conversations queue's worker (activities/index.ts finds this module). */
export const registration: ActivityRegistration = { queue: 'conversations', create: createAssignmentActivities };
