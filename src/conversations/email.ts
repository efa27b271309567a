import { randomBytes } from 'node:crypto';
import { findAgent } from '../db/agents.ts';
import { recordContactConversation } from '../db/contacts.ts';
import { findConversationRecord, insertConversation, insertMessages, listMessages } from '../db/conversations.ts';
import {
  findEmailThread, findInboxByAddress, findThreadConversation, recordEmailMessage, setConversationEmail,
} from '../db/email-inboxes.ts';
import { touchVisitor } from '../db/live-inbox.ts';
import { emitEvent } from '../events/emit.ts';
import { createMailer, type Mailer } from '../mail/outbound.ts';
import type { InboundMail } from '../mail/inbound.ts';
import { HANDOFF_REQUEST } from '../runtime/signals.ts';
import { sendEmailReplyKind } from '../../workflows/send-email-reply.ts';
import { startWorkflow, type StartDeps } from '../temporal/start.ts';
import { flagNeedsHuman } from '../db/live-inbox.ts';
import { agentTurn, conversationEventData, signalLifecycle, startLifecycle, type ConversationDeps } from './lifecycle.ts';

/**
 * The email channel: mail to an inbox's address becomes a conversation with surface `email`,
 * threaded by Message-ID, In-Reply-To and References and matched to a contact by the sender's
 * address; the agent's replies (or a member's, after a take-over) go back from the inbox's address
 * with threading headers.
 */

type MailDeps = Pick<ConversationDeps, 'sql' | 'config' | 'log'> & { mailer?: Mailer };

const mailerOf = (deps: MailDeps): Mailer => deps.mailer ?? createMailer(deps.config);

/** Whether the listener takes mail for this address (at RCPT). */
export async function acceptsAddress(deps: Pick<ConversationDeps, 'sql'>, address: string): Promise<boolean> {
  return (await findInboxByAddress(deps.sql, address)) !== null;
}

/** Records one received message in its conversation (a new one, or the thread's), then lets the agent answer. */
export async function receiveEmail(deps: ConversationDeps & { mailer?: Mailer }, mail: InboundMail): Promise<void> {
  for (const recipient of new Set(mail.recipients)) {
    const inbox = await findInboxByAddress(deps.sql, recipient);
    if (inbox) await receiveInInbox(deps, inbox, mail);
  }
}

async function receiveInInbox(deps: ConversationDeps & { mailer?: Mailer }, inbox: { id: string; org_id: string; widget_id: string }, mail: InboundMail): Promise<void> {
  const agent = await findAgent(deps.sql, inbox.org_id, inbox.widget_id);
  if (!agent || !mail.from) return;
  const messageId = mail.messageId ?? `${randomBytes(12).toString('hex')}@inbound.invalid`;
  const thread = await findThreadConversation(deps.sql, inbox.id, [mail.inReplyTo, ...mail.references].filter((v): v is string => !!v));
  const text = [mail.text || '(no text)', mail.attachmentNames.length ? `[attachments: ${mail.attachmentNames.join(', ')}]` : '']
    .filter(Boolean).join('\n');
  const started = await deps.sql.begin(async (tx) => {
    let conversationId = thread?.status === 'active' ? thread.id : null;
    let eventId: string | null = null;
    if (!conversationId) {
      const conversation = await insertConversation(tx, {
        orgId: inbox.org_id, agentId: agent.id, surface: 'email', pageUrl: null, visitorId: null, contactId: null,
        language: agent.default_language ?? 'en', tokenHash: null,
      });
      conversationId = conversation.id;
      await setConversationEmail(tx, conversationId, { inboxId: inbox.id, address: mail.from, subject: mail.subject });
      await recordContactConversation(tx, inbox.org_id, { conversationId, email: mail.from, at: conversation.startedAt });
      eventId = await emitEvent(tx, { orgId: inbox.org_id, agentId: agent.id, type: 'conversation.started', data: await conversationEventData(tx, conversationId) });
    }
    // A retried delivery of a message already recorded adds nothing.
    if (!(await recordEmailMessage(tx, { messageId, conversationId, inboxId: inbox.id, direction: 'in' }))) return null;
    await insertMessages(tx, conversationId, [{ role: 'visitor', text }]);
    await touchVisitor(tx, conversationId);
    if (HANDOFF_REQUEST.test(text.toLowerCase())) await flagNeedsHuman(tx, conversationId);
    return { conversationId, eventId };
  });
  if (!started) return;
  const conversation = (await findConversationRecord(deps.sql, started.conversationId))!;
  if (started.eventId) {
    await startLifecycle(deps, conversation, agent);
  } else {
    await signalLifecycle(deps, conversation.id, 'activity');
  }
  if (conversation.mode === 'human') return;
  const replies = await agentTurn(deps, agent, conversation);
  await queueEmailReply(deps, conversation, replies.map((r) => r.id));
}

/**
 * Sends the reply made of these stored messages to the correspondent of an email conversation:
 * a workflow per reply (`email-reply:<first message id>`), so a mail server that is down is
 * retried, and a reply is never sent twice. Not an email conversation: nothing to send.
 */
export async function queueEmailReply(deps: StartDeps, conversation: { id: string; orgId: string; agentId: string; surface: string }, messageIds: string[]): Promise<void> {
  if (conversation.surface !== 'email' || messageIds.length === 0) return;
  await startWorkflow(deps, sendEmailReplyKind, sendEmailReplyKind.id(messageIds[0]!), [{ conversationId: conversation.id, messageIds }],
    { orgId: conversation.orgId, agentId: conversation.agentId, summary: `Email reply in conversation ${conversation.id}` });
}

/**
 * The send itself (the workflow's activity): the messages' text, from the inbox's address and
 * name, with In-Reply-To and References. Its Message-ID is fixed by the first message, so a retry
 * after a lost acknowledgement is the same message to the receiving server. False when the
 * conversation (or its inbox) is gone.
 */
export async function deliverEmailReply(deps: MailDeps, conversationId: string, messageIds: string[]): Promise<boolean> {
  const thread = await findEmailThread(deps.sql, conversationId);
  if (!thread) return false;
  const messages = (await listMessages(deps.sql, conversationId)).filter((m) => messageIds.includes(m.id));
  if (messages.length === 0) return false;
  const subject = /^re:/i.test(thread.subject) ? thread.subject : `Re: ${thread.subject || 'your message'}`;
  const domain = thread.address.split('@')[1] ?? 'localhost';
  const messageId = `${messageIds[0]}@${domain}`;
  await mailerOf(deps).send({
    from: { name: thread.senderName, address: thread.address }, to: thread.to, subject, text: messages.map((m) => m.text).join('\n\n'),
    inReplyTo: thread.lastInbound ?? undefined, references: thread.messageIds.filter((id) => id !== messageId), messageId,
  });
  await recordEmailMessage(deps.sql, { messageId, conversationId, inboxId: thread.inboxId, direction: 'out' });
  return true;
}
