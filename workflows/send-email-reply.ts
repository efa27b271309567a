import { proxyActivities } from '@temporalio/workflow';
import type { EmailActivities } from '../activities/email.ts';
import { workflowIds, workflowKind } from '../src/temporal/ids.ts';

export interface SendEmailReplyInput { conversationId: string; messageIds: string[] }

const { deliverEmailReply } = proxyActivities<EmailActivities>({
  startToCloseTimeout: '2 minutes',
  // A mail server's bad hour (4xx, no connection) is ridden out; a message that still cannot go after a day is
  // given up. A permanent refusal (5xx) fails at once: the activity throws the non-retryable `mail_rejected`.
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '30 minutes', maximumAttempts: 60 },
});

/**
 * Sends the reply made of these messages (the agent's, or a member's) to the correspondent of an
 * email conversation, threaded. Its id (`email-reply:<first message id>`) runs once, and the
 * message's Message-ID comes from the same id, so a retried send is the same message.
 */
export async function sendEmailReply(input: SendEmailReplyInput): Promise<boolean> {
  return deliverEmailReply(input);
}

/** One send per reply, ever. */
export const sendEmailReplyKind = workflowKind(sendEmailReply, { queue: 'conversations', reuse: 'rejectDuplicate', id: workflowIds.emailReply });
