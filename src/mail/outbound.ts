import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Transporter } from 'nodemailer';
import type { Config } from '../config.ts';
import { newId } from '../ids.ts';
import { spoolDirOf, spoolFileName } from './spool.ts';

/**
 * Outbound mail, for every part of the service that sends it (email inboxes' replies; reports can
 * share it): through SMTP_URL, or without it as `.eml` files under DATA_DIR/mail/ (a local
 * deployment sends nothing, and the files show exactly what would have gone out).
 */

export interface OutgoingMail {
  from: { name: string; address: string };
  /** One address, or several (a report's recipients): one message to all of them. */
  to: string | string[];
  subject: string;
  text: string;
  /** Files attached to the message (a report's artifact). */
  attachments?: { filename: string; content: Buffer; contentType: string }[] | undefined;
  /** Threading: the message answered (without angle brackets) and the thread's earlier ids. */
  inReplyTo?: string | undefined;
  references?: string[] | undefined;
  /** Our own id for the message (without angle brackets); generated when absent. */
  messageId?: string | undefined;
  /** The organization the message is sent for: without SMTP_URL its `.eml` file is named for it (retention and erase find it, `spool.ts`). */
  orgId?: string | undefined;
  /**
   * An automatic reply (an agent's answer): `Auto-Submitted: auto-replied` (RFC 3834) and
   * `X-Auto-Response-Suppress: All`, so auto-responders, vacation replies and list servers do not
   * answer it (no `Precedence`, which RFC 3834 discourages). A person's mail carries neither.
   */
  autoReply?: boolean | undefined;
}

export interface Mailer {
  /** Sends one message; answers its Message-ID (without angle brackets), and the `.eml` file it was written to without SMTP_URL. */
  send(mail: OutgoingMail): Promise<{ messageId: string; file?: string }>;
}

const bracket = (id: string) => `<${id}>`;

/**
 * Loads nodemailer ahead of a message that is coming (a report run's aggregate step, once its figures
 * are in): the first message of a process then does not wait for the module. Idle still does not hold it.
 */
export async function warmMailer(): Promise<void> {
  await import('nodemailer');
}

/** A mailer for the configuration: SMTP when SMTP_URL is set, else .eml files. */
export function createMailer(config: Pick<Config, 'SMTP_URL' | 'DATA_DIR'>): Mailer {
  // nodemailer is loaded with the first message, not at start (issue 48: what idle does not need stays unloaded).
  let transport: Promise<Transporter> | undefined;
  const transportOf = () => transport ??= import('nodemailer').then(({ default: nodemailer }) => (config.SMTP_URL
    ? nodemailer.createTransport(config.SMTP_URL)
    : nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' })));
  return {
    async send(mail) {
      const domain = mail.from.address.split('@')[1] ?? 'localhost';
      const messageId = mail.messageId ?? `${newId()}@${domain}`;
      const info = await (await transportOf()).sendMail({
        from: { name: mail.from.name, address: mail.from.address }, to: mail.to, subject: mail.subject, text: mail.text,
        messageId: bracket(messageId),
        ...(mail.attachments?.length ? { attachments: mail.attachments } : {}),
        ...(mail.inReplyTo ? { inReplyTo: bracket(mail.inReplyTo) } : {}),
        ...(mail.references?.length ? { references: mail.references.map(bracket) } : {}),
        ...(mail.autoReply ? { headers: { 'Auto-Submitted': 'auto-replied', 'X-Auto-Response-Suppress': 'All' } } : {}),
      });
      if (!config.SMTP_URL) {
        const dir = spoolDirOf(config);
        await mkdir(dir, { recursive: true });
        const file = join(dir, spoolFileName(Date.now(), mail.orgId, messageId));
        await writeFile(file, (info as { message: Buffer }).message);
        return { messageId, file };
      }
      return { messageId };
    },
  };
}
