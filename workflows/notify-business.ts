import { proxyActivities } from '@temporalio/workflow';
import type { NotificationActivities } from '../activities/notifications.ts';
import { workflowIds, workflowKind } from '../src/temporal/ids.ts';

export interface NotifyBusinessInput { conversationId: string; reason: 'handoff_requested' | 'lead_captured' | 'transfer_failed' }

const { mailBusinessNotification, textBusinessNotification } = proxyActivities<NotificationActivities>({
  startToCloseTimeout: '2 minutes',
  // A mail server's or the carrier's bad hour is ridden out; a notice still not sent after a day is given up.
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '30 minutes', maximumAttempts: 60 },
});

/**
 * Tells the business of a conversation (issue 43): the mail to `notification_email` and the text to
 * `notification_phone`, each retried on its own, so one's failure never sends the other twice.
 */
export async function notifyBusiness(input: NotifyBusinessInput): Promise<{ mailed: boolean; texted: boolean }> {
  const [mailed, texted] = await Promise.all([mailBusinessNotification(input), textBusinessNotification(input)]);
  return { mailed, texted };
}

/** Once per conversation and reason, ever. */
export const notifyBusinessKind = workflowKind(notifyBusiness, { queue: 'conversations', reuse: 'rejectDuplicate', id: workflowIds.notifyBusiness });
