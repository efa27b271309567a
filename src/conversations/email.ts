import { createHash } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { findAgent } from '../db/agents.ts';
import { recordContactConversation } from '../db/contacts.ts';
import { findConversationRecord, insertConversation, insertMessages, listMessages } from '../db/conversations.ts';
import {
  emailMessageKnown, findEmailThread, findInboxByAddress, findThreadConversation, recordEmailMessage, setConversationEmail, setEmailDelivery, takeAutoReply,
} from '../db/email-inboxes.ts';
import { touchVisitor } from '../db/live-inbox.ts';
import { createMailer, type Mailer } from '../mail/outbound.ts';
import type { InboundMail } from '../mail/inbound.ts';
import { framedReply } from '../mail/reply-text.ts';
import { HANDOFF_REQUEST } from '../runtime/signals.ts';
import { sendEmailReplyKind } from '../../workflows/send-email-reply.ts';
import { startWorkflow, type StartDeps } from '../temporal/start.ts';
import { flagNeedsHuman } from '../db/live-inbox.ts';
import { requestPerson } from '../assignments/index.ts';
import { addSystemMessage, agentTurn, emitConversationEvent, signalLifecycle, startLifecycle, type ConversationDeps } from './lifecycle.ts';

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

/** The transcript's note on mail that reached a paused agent. */
const PAUSED_NOTE = 'The agent is paused: recorded, not answered';

/** Thrown inside the recording transaction when the message is already known (a concurrent redelivery): rolls it back. */
class Redelivery extends Error {}

/**
 * A message without a Message-ID still gets a stable one, made of what identifies it, so a redelivery
 * of it is recognised too.
 */
function messageIdOf(mail: InboundMail): string {
  if (mail.messageId) return mail.messageId;
  const digest = createHash('sha256').update(JSON.stringify([mail.from, mail.subject, mail.text, mail.inReplyTo, mail.references])).digest('hex');
  return `${digest.slice(0, 32)}@inbound.invalid`;
}

async function receiveInInbox(deps: ConversationDeps & { mailer?: Mailer }, inbox: { id: string; org_id: string; widget_id: string }, mail: InboundMail): Promise<void> {
  const agent = await findAgent(deps.sql, inbox.org_id, inbox.widget_id);
  if (!agent || !mail.from) return;
  const messageId = messageIdOf(mail);
  // A redelivery (the sending server lost our 250) adds nothing: no conversation, no message, no event.
  if (await emailMessageKnown(deps.sql, inbox.id, messageId)) return;
  const thread = await findThreadConversation(deps.sql, inbox.id, [mail.inReplyTo, ...mail.references].filter((v): v is string => !!v));
  const automated = mail.automated ?? (await findInboxByAddress(deps.sql, mail.from) ? `from ${mail.from}, an inbox of this service` : null);
  // Machine mail outside a live thread (a bounce, a newsletter, an auto-reply to nothing of ours) starts nothing.
  if (automated && thread?.status !== 'active') {
    deps.log.info({ inboxId: inbox.id, reason: automated }, 'automatic mail outside a conversation: not recorded');
    return;
  }
  const text = [mail.text || '(no text)', mail.attachmentNames.length ? `[attachments: ${mail.attachmentNames.join(', ')}]` : '']
    .filter(Boolean).join('\n');
  let started: { conversationId: string; eventId: string | null };
  try {
    started = await deps.sql.begin(async (tx) => {
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
        eventId = await emitConversationEvent(tx, { orgId: inbox.org_id, agentId: agent.id, type: 'conversation.started', conversationId });
      }
      // The same message delivered twice at once: the second waits on the first's key, then undoes everything it did.
      if (!(await recordEmailMessage(tx, { messageId, conversationId, inboxId: inbox.id, direction: 'in' }))) throw new Redelivery();
      await insertMessages(tx, conversationId, [{ role: 'visitor', text }]);
      if (automated) {
        await addSystemMessage(tx, conversationId, `Automatic mail (${automated}): recorded, not answered`);
        return { conversationId, eventId };
      }
      // A paused agent answers nothing (issue 43): the mail is kept for the team, noted, and not answered.
      if (agent.status === 'paused') await addSystemMessage(tx, conversationId, PAUSED_NOTE);
      await touchVisitor(tx, conversationId);
      if (HANDOFF_REQUEST.test(text.toLowerCase())) await flagNeedsHuman(tx, conversationId);
      return { conversationId, eventId };
    });
  } catch (err) {
    if (err instanceof Redelivery) return;
    throw err;
  }
  const conversation = (await findConversationRecord(deps.sql, started.conversationId))!;
  // Machine mail neither answers nor keeps the conversation alive: an auto-responder cannot hold it open.
  if (automated) return;
  if (HANDOFF_REQUEST.test(text.toLowerCase())) await requestPerson(deps, conversation);
  if (started.eventId) {
    await startLifecycle(deps, conversation, agent);
  } else {
    await signalLifecycle(deps, conversation.id, 'activity');
  }
  if (conversation.mode === 'human' || agent.status === 'paused') return;
  if (!(await mayAnswer(deps, { inboxId: inbox.id, correspondent: mail.from, conversationId: conversation.id }))) return;
  const replies = await agentTurn(deps, agent, conversation);
  await queueEmailReply(deps, conversation, replies.map((r) => r.id));
}

/**
 * The hourly caps on automatic replies (per thread, per correspondent of the inbox), which end a loop
 * with an auto-responder that ignores Auto-Submitted. Past one, the mail stays recorded, the agent is
 * silent, and the conversation is flagged for a person in the live inbox (noted once an hour).
 */
async function mayAnswer(deps: Pick<ConversationDeps, 'sql' | 'config' | 'log' | 'temporal'>, input: { inboxId: string; correspondent: string; conversationId: string }): Promise<boolean> {
  const refusal = await takeAutoReply(deps.sql, {
    ...input, perThread: deps.config.EMAIL_AUTO_REPLIES_PER_THREAD_PER_HOUR, perSender: deps.config.EMAIL_AUTO_REPLIES_PER_SENDER_PER_HOUR,
  });
  if (!refusal) return true;
  const note = refusal === 'thread_cap'
    ? `Automatic replies paused: the agent answered this thread ${deps.config.EMAIL_AUTO_REPLIES_PER_THREAD_PER_HOUR} times in the last hour; a member of the team is asked to reply`
    : `Automatic replies paused: the agent answered ${input.correspondent} ${deps.config.EMAIL_AUTO_REPLIES_PER_SENDER_PER_HOUR} times in the last hour; a member of the team is asked to reply`;
  deps.log.info({ conversationId: input.conversationId, refusal }, 'email auto-reply cap reached: not answered');
  await deps.sql.begin(async (tx) => {
    const recent = await listMessages(tx, input.conversationId);
    const hourAgo = Date.now() - 3600_000;
    if (!recent.some((m) => m.role === 'system' && m.text === note && Date.parse(m.ts) > hourAgo)) await addSystemMessage(tx, input.conversationId, note);
    await flagNeedsHuman(tx, input.conversationId);
  });
  const conversation = await findConversationRecord(deps.sql, input.conversationId);
  if (conversation) await requestPerson(deps, conversation);
  return false;
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
  await recordEmailMessage(deps.sql, { messageId, conversationId, inboxId: thread.inboxId, direction: 'out' });
  const automatic = messages.every((m) => m.role === 'agent');
  const body = messages.map((m) => m.text).join('\n\n');
  // The agent writes as a person would (issue 43): a salutation and a closing; a member's mail is sent as written.
  const text = automatic ? framedReply({ body, firstName: thread.firstName, senderName: thread.senderName, language: thread.language }) : body;
  try {
    await mailerOf(deps).send({
      from: { name: thread.senderName, address: thread.address }, to: thread.to, subject, text,
      inReplyTo: thread.lastInbound ?? undefined, references: thread.messageIds.filter((id) => id !== messageId), messageId, orgId: thread.orgId,
      // The agent's answer is an automatic reply (RFC 3834); a member's is a person's mail and says nothing.
      autoReply: automatic,
    });
  } catch (err) {
    const code = (err as { responseCode?: unknown }).responseCode;
    // 4xx and connection failures are the retry policy's; a 5xx will be refused again however often it is sent.
    if (typeof code !== 'number' || code < 500) throw err;
    const error = `${thread.to}: ${(err as Error).message}`.slice(0, 1000);
    await deps.sql.begin(async (tx) => {
      await setEmailDelivery(tx, { inboxId: thread.inboxId, messageId, status: 'rejected', error });
      await addSystemMessage(tx, conversationId, `The reply could not be delivered: the mail server refused it (${error}); it will not be retried`);
    });
    throw ApplicationFailure.nonRetryable(`the mail server refused the reply to ${error}`, 'mail_rejected');
  }
  await setEmailDelivery(deps.sql, { inboxId: thread.inboxId, messageId, status: 'sent' });
  return true;
}
