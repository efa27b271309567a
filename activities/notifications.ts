import { mailBusinessNotification, textBusinessNotification, type NotificationReason } from '../src/conversations/notify.ts';
import type { ActivityDeps, ActivityRegistration } from './index.ts';

export function createNotificationActivities(deps: ActivityDeps) {
  return {
    /** Mails `notification_email` (idempotent: the Message-ID is fixed by the conversation and reason). */
    async mailBusinessNotification(input: { conversationId: string; reason: NotificationReason }): Promise<boolean> {
      return mailBusinessNotification(deps, input);
    },
    /** Texts `notification_phone` from the agent's active number. */
    async textBusinessNotification(input: { conversationId: string; reason: NotificationReason }): Promise<boolean> {
      return textBusinessNotification(deps, input);
    },
  };
}

export type NotificationActivities = ReturnType<typeof createNotificationActivities>;

/** Run by the conversations queue's worker (activities/index.ts finds this module). */
export const registration: ActivityRegistration = { queue: 'conversations', create: createNotificationActivities };
