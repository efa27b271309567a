import { SMTPServer, type SMTPServerAddress } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';
import type { Logger } from 'pino';

/** The largest message the listener takes (SIZE extension and a hard stop while reading). */
export const MAX_MAIL_BYTES = 10 * 1024 * 1024;

/** A received message, reduced to what a conversation keeps: text, threading ids, attachments' names. */
export interface InboundMail {
  recipients: string[];
  from: string;
  fromName: string | null;
  subject: string;
  text: string;
  messageId: string | null;
  inReplyTo: string | null;
  references: string[];
  attachmentNames: string[];
}

export interface SmtpListener { port: number; close(): Promise<void> }

const unbracket = (id: string) => id.trim().replace(/^<|>$/g, '');

/**
 * The text a conversation records: the plain part, or the HTML part reduced to its text (never
 * rendered or run), minus the quoted earlier messages of a reply.
 */
function textOf(mail: ParsedMail): string {
  const raw = mail.text ?? (typeof mail.html === 'string' ? mail.html.replace(/<(script|style)[\s\S]*?<\/\1>/gi, ' ').replace(/<[^>]*>/g, ' ') : '');
  const lines: string[] = [];
  for (const line of raw.replace(/\r\n/g, '\n').split('\n')) {
    if (/^On .+ wrote:$/.test(line.trim()) || /^Le .+ a écrit ?:$/.test(line.trim())) break;
    if (line.startsWith('>')) continue;
    lines.push(line);
  }
  return lines.join('\n').replace(/[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim();
}

export function toInboundMail(mail: ParsedMail, recipients: string[]): InboundMail {
  const from = mail.from?.value[0];
  const refs = mail.references === undefined ? [] : Array.isArray(mail.references) ? mail.references : mail.references.split(/\s+/);
  return {
    recipients,
    from: (from?.address ?? '').toLowerCase(),
    fromName: from?.name || null,
    subject: mail.subject ?? '',
    text: textOf(mail),
    messageId: mail.messageId ? unbracket(mail.messageId) : null,
    inReplyTo: mail.inReplyTo ? unbracket(mail.inReplyTo) : null,
    references: refs.filter(Boolean).map(unbracket),
    attachmentNames: mail.attachments.map((a) => a.filename ?? 'attachment'),
  };
}

/**
 * Starts the inbound SMTP listener: `accepts(address)` decides at RCPT (others are refused with
 * 550), a message over 10 MB is refused with 552, and each accepted message goes to `deliver`.
 * No authentication (mail arrives from other servers); no STARTTLS certificate of our own.
 */
export async function startSmtpListener(opts: {
  port: number; host?: string | undefined; log: Logger;
  accepts(address: string): Promise<boolean>;
  deliver(mail: InboundMail): Promise<void>;
}): Promise<SmtpListener> {
  const server = new SMTPServer({
    authOptional: true, disabledCommands: ['AUTH', 'STARTTLS'], size: MAX_MAIL_BYTES, banner: 'Agent Management Service',
    logger: false,
    onRcptTo(address: SMTPServerAddress, _session, callback) {
      opts.accepts(address.address.toLowerCase()).then((ok) => {
        if (ok) return callback();
        const err = Object.assign(new Error(`no mailbox here for ${address.address}`), { responseCode: 550 });
        callback(err);
      }, (err: unknown) => callback(Object.assign(new Error('try again later'), { responseCode: 451, cause: err })));
    },
    onData(stream, session, callback) {
      const recipients = session.envelope.rcptTo.map((r) => r.address.toLowerCase());
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= MAX_MAIL_BYTES) chunks.push(chunk);
      });
      stream.on('end', () => {
        if (stream.sizeExceeded || size > MAX_MAIL_BYTES) {
          callback(Object.assign(new Error('message exceeds the 10 MB limit'), { responseCode: 552 }));
          return;
        }
        simpleParser(Buffer.concat(chunks), { skipHtmlToText: false })
          .then((parsed) => opts.deliver(toInboundMail(parsed, recipients)))
          .then(() => callback(), (err: unknown) => {
            opts.log.warn({ err }, 'inbound mail could not be recorded');
            callback(Object.assign(new Error('could not record the message, try again later'), { responseCode: 451 }));
          });
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  server.on('error', (err) => opts.log.warn({ err }, 'SMTP listener error'));
  const address = server.server.address();
  return {
    port: typeof address === 'object' && address ? address.port : opts.port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
