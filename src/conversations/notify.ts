import { ApplicationFailure } from '@temporalio/common';
import type { Config } from '../config.ts';
import type { Db } from '../db/index.ts';
import { findAgent } from '../db/agents.ts';
import { findConversationRecord, openCaptured } from '../db/conversations.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import { activeNumbersOfAgent } from '../db/phone-numbers.ts';
import { createMailer, type Mailer } from '../mail/outbound.ts';
import { publicBaseUrl } from '../telephony/webhook-urls.ts';
import type { Agent } from '../schemas/agents.ts';
import { createCarrier } from '../telephony/index.ts';
import type { Carrier } from '../telephony/carrier.ts';
import { startWorkflow, type StartDeps } from '../temporal/start.ts';
import { notifyBusinessKind } from '../../workflows/notify-business.ts';

/**
 * The business told of a conversation (issue 43): `notification_email` gets a mail (SMTP_URL, or an
 * `.eml` file without it) and `notification_phone` a text from the agent's active number, when a
 * visitor asks for a person, when a lead's data is captured (the data_schema complete), or when a
 * transfer fails. Each is a workflow (`notify:<conversation>:<reason>`, once per conversation and
 * reason) whose activities retry the mail and the text apart, so neither is lost nor sent twice.
 */

export const NOTIFICATION_REASONS = ['handoff_requested', 'lead_captured', 'transfer_failed'] as const;
export type NotificationReason = (typeof NOTIFICATION_REASONS)[number];

const WHAT: Record<NotificationReason, string> = {
  handoff_requested: 'A visitor asked to talk to a person',
  lead_captured: 'A lead\'s details were captured',
  transfer_failed: 'A call transfer failed',
};

/** Starts the notification of `reason` for a real conversation of an agent with somewhere to notify; a second start is a no-op. */
export async function queueBusinessNotification(deps: StartDeps, agent: Pick<Agent, 'notification_email' | 'notification_phone' | 'name'>,
  conversation: { id: string; orgId: string; agentId: string; isSimulated: boolean }, reason: NotificationReason): Promise<void> {
  if (conversation.isSimulated || (!agent.notification_email && !agent.notification_phone)) return;
  await startWorkflow(deps, notifyBusinessKind, notifyBusinessKind.id(conversation.id, reason), [{ conversationId: conversation.id, reason }],
    { orgId: conversation.orgId, agentId: conversation.agentId, summary: `Notify the business of agent ${agent.name}: ${reason} in conversation ${conversation.id}` });
}

/** `secrets` opens the captured data (sealed at rest, issue 47) the notification lists. */
export interface NotifyDeps { sql: Db; config: Config; secrets: SecretBox; mailer?: Mailer; carrier?: Carrier }

async function subjectOf(deps: NotifyDeps, conversationId: string, reason: NotificationReason) {
  const conversation = await findConversationRecord(deps.sql, conversationId);
  if (!conversation) return null;
  const agent = await findAgent(deps.sql, conversation.orgId, conversation.agentId);
  if (!agent) return null;
  const data = Object.entries(openCaptured(deps.secrets, conversation.id, conversation.captured)).map(([k, v]) => `${k}: ${String(v)}`);
  const text = [
    `${WHAT[reason]} (agent ${agent.name}, ${conversation.surface} conversation ${conversation.id}).`,
    ...(data.length ? ['', 'Captured:', ...data] : []),
  ].join('\n');
  return { conversation, agent, text };
}

/** The mail of a notification; false when there is nowhere to send it (no address, or the conversation is gone). Same Message-ID on a retry. */
export async function mailBusinessNotification(deps: NotifyDeps, input: { conversationId: string; reason: NotificationReason }): Promise<boolean> {
  const found = await subjectOf(deps, input.conversationId, input.reason);
  if (!found?.agent.notification_email) return false;
  const domain = new URL(publicBaseUrl(deps.config)).hostname || 'localhost';
  try {
    await (deps.mailer ?? createMailer(deps.config)).send({
      from: { name: found.agent.name, address: `notifications@${domain}` }, to: found.agent.notification_email,
      subject: `${WHAT[input.reason]}: ${found.agent.name}`, text: found.text, autoReply: true,
      messageId: `notify-${input.conversationId}-${input.reason}@${domain}`, orgId: found.conversation.orgId,
    });
  } catch (err) {
    const code = (err as { responseCode?: number }).responseCode;
    if (code && code >= 500) throw ApplicationFailure.nonRetryable(`the mail server refused the notification: ${(err as Error).message}`, 'mail_rejected');
    throw err;
  }
  return true;
}

/** The text of a notification, from the agent's active number; false when there is no phone to notify or no number to text from. */
export async function textBusinessNotification(deps: NotifyDeps, input: { conversationId: string; reason: NotificationReason }): Promise<boolean> {
  const found = await subjectOf(deps, input.conversationId, input.reason);
  if (!found?.agent.notification_phone) return false;
  const [number] = await activeNumbersOfAgent(deps.sql, found.agent.id);
  if (!number) return false;
  const carrier = deps.carrier ?? createCarrier(deps.config, deps.sql);
  await carrier.sendSms({ from: number.phone_number, to: found.agent.notification_phone, body: found.text.slice(0, 600) });
  return true;
}
