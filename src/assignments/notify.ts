import { ApplicationFailure } from '@temporalio/common';
import type { Config } from '../config.ts';
import type { Sql } from '../db/index.ts';
import { findAgent } from '../db/agents.ts';
import { insertNotice, lockWaiting, memberForNotice, membersToTell } from '../db/assignments.ts';
import { activeNumbersOfAgent } from '../db/phone-numbers.ts';
import { createMailer, type Mailer } from '../mail/outbound.ts';
import { DEFAULT_PREFERENCES, type NotificationPreferences } from '../schemas/members.ts';
import { createCarrier } from '../telephony/index.ts';
import type { Carrier } from '../telephony/carrier.ts';
import { publicBaseUrl } from '../telephony/webhook-urls.ts';

/**
 * Members told of an assignment or a waiting conversation (issue 45), each as their preferences say:
 * a `notification` event on the live stream (which /inbox turns into a badge, a tone and a browser
 * notification), a mail (SMTP_URL, or an .eml file), and an SMS from the agent's active number.
 */

export interface NoticeInput { conversationId: string; kind: 'assigned' | 'waiting'; memberId: string | null; key: string }
export interface NoticeDeps { sql: Sql; config: Config; mailer?: Mailer; carrier?: Carrier }

const prefsOf = (p: Partial<NotificationPreferences>): NotificationPreferences => ({ ...DEFAULT_PREFERENCES, ...p });

/** Tells the members concerned; answers how many were told. Retried as a whole: the mail's Message-ID is fixed per notice and member. */
export async function notifyMembers(deps: NoticeDeps, input: NoticeInput): Promise<number> {
  const c = await deps.sql.begin((tx) => lockWaiting(tx, input.conversationId));
  if (!c || c.status !== 'active' || c.mode === 'human') return 0;
  const agent = await findAgent(deps.sql, c.orgId, c.agentId);
  if (!agent) return 0;
  const targets = input.memberId
    ? [await memberForNotice(deps.sql, input.memberId)].filter((m) => m !== null)
    : await membersToTell(deps.sql, { orgId: c.orgId, agentId: c.agentId, teamId: c.teamId });
  const wanted = targets.filter((m) => prefsOf(m.prefs)[input.kind]);
  const subject = input.kind === 'assigned' ? `A conversation was assigned to you (${agent.name})` : `A conversation waits for a person (${agent.name})`;
  const link = `${publicBaseUrl(deps.config)}/inbox#${c.id}`;
  const text = `${subject}: ${c.surface} conversation ${c.id}.\n\nOpen it: ${link}`;
  for (const m of wanted) {
    const prefs = prefsOf(m.prefs);
    // Written once per notice and member (a retried activity finds it).
    await insertNotice(deps.sql, c.orgId, c.id, {
      conversation_id: c.id, widget_id: c.agentId, kind: input.kind, member_id: m.id, member_email: m.email, key: input.key,
      text: subject, sound: prefs.sound, browser: prefs.browser,
    });
    if (prefs.email) await mail(deps, c.orgId, m.email, subject, text, `notice-${input.key}-${m.id}`);
    if (prefs.sms && m.phone) await textMember(deps, c.agentId, m.phone, `${subject}. ${link}`);
  }
  return wanted.length;
}

async function mail(deps: NoticeDeps, orgId: string, to: string, subject: string, text: string, id: string): Promise<void> {
  const domain = new URL(publicBaseUrl(deps.config)).hostname || 'localhost';
  try {
    await (deps.mailer ?? createMailer(deps.config)).send({
      from: { name: 'Agent inbox', address: `notifications@${domain}` }, to, subject, text, autoReply: true, messageId: `${id}@${domain}`, orgId,
    });
  } catch (err) {
    const code = (err as { responseCode?: number }).responseCode;
    if (code && code >= 500) throw ApplicationFailure.nonRetryable(`the mail server refused the notice: ${(err as Error).message}`, 'mail_rejected');
    throw err;
  }
}

/** Texts the member from the agent's active number; nothing when the agent has none. */
async function textMember(deps: NoticeDeps, agentId: string, phone: string, body: string): Promise<void> {
  const [number] = await activeNumbersOfAgent(deps.sql, agentId);
  if (!number) return;
  await (deps.carrier ?? createCarrier(deps.config, deps.sql)).sendSms({ from: number.phone_number, to: phone, body: body.slice(0, 600) });
}
