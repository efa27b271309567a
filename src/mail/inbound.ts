import { SMTPServer, type SMTPServerAddress } from 'smtp-server';
import type { ParsedMail } from 'mailparser';
import type { Logger } from 'pino';
import { newWordsOf } from './reply-text.ts';

/** The largest message the listener takes (SIZE extension and a hard stop while reading). */
export const MAX_MAIL_BYTES = 10 * 1024 * 1024;

/** A received message, reduced to what a conversation keeps: text, threading ids, attachments' names. */
export interface InboundMail {
  recipients: string[];
  /** The envelope sender (MAIL FROM), lower case; '' for the null sender `<>` of bounces and other notifications. */
  envelopeFrom: string;
  /** Why this is machine mail never to be answered (the header or sender that says so), or null for a person's mail. */
  automated: string | null;
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

/** NUL is the one character PostgreSQL text cannot hold; a decoded header or part may carry it (`=00`, an encoded word). */
const clean = (text: string) => text.replace(/\0/g, '');

/** A refusal the SMTP client sees as its reply (code and text). */
const smtpError = (responseCode: number, message: string) => Object.assign(new Error(message), { responseCode });

const headerText = (mail: ParsedMail, name: string): string | null => {
  const value = mail.headers.get(name);
  if (value === undefined || value === null) return null;
  return typeof value === 'string' ? value : typeof value === 'object' && 'value' in value ? String(value.value) : String(value);
};

/**
 * Machine mail (RFC 3834 and the headers auto-responders, list servers and bounces carry), which a
 * help desk records but never answers: answering it is how mail loops start. The answer names why.
 */
function automatedBy(mail: ParsedMail, envelopeFrom: string): string | null {
  const autoSubmitted = headerText(mail, 'auto-submitted')?.split(';')[0]!.trim().toLowerCase();
  if (autoSubmitted && autoSubmitted !== 'no') return `Auto-Submitted: ${autoSubmitted}`;
  const precedence = headerText(mail, 'precedence')?.trim().toLowerCase();
  if (precedence && ['bulk', 'list', 'junk'].includes(precedence)) return `Precedence: ${precedence}`;
  // mailparser folds List-* headers into one `list` object: the raw header lines say what was there.
  const present = new Set(mail.headerLines.map((h) => h.key.toLowerCase()));
  for (const name of ['X-Autoreply', 'X-Autorespond', 'List-Id', 'List-Unsubscribe']) {
    if (present.has(name.toLowerCase())) return `${name} header`;
  }
  const contentType = mail.headers.get('content-type') as { value?: string } | undefined;
  if (contentType?.value?.toLowerCase() === 'multipart/report') return 'a delivery or read report (multipart/report)';
  if (envelopeFrom === '') return 'the null sender (MAIL FROM:<>)';
  const local = (mail.from?.value[0]?.address ?? '').split('@')[0]!.toLowerCase();
  if (local === 'mailer-daemon' || local === 'postmaster') return `from ${local}`;
  return null;
}

/**
 * The text a conversation records: the plain part, or the HTML part reduced to its text (never
 * rendered or run), minus the quoted earlier messages, signatures, sign-offs and footers (reply-text.ts).
 */
function textOf(mail: ParsedMail): string {
  const raw = mail.text ?? (typeof mail.html === 'string' ? mail.html.replace(/<(script|style)[\s\S]*?<\/\1>/gi, ' ').replace(/<[^>]*>/g, ' ') : '');
  return raw.trim() ? newWordsOf(raw) : '';
}

export function toInboundMail(mail: ParsedMail, recipients: string[], envelopeFrom = ''): InboundMail {
  const from = mail.from?.value[0];
  const refs = mail.references === undefined ? [] : Array.isArray(mail.references) ? mail.references : mail.references.split(/\s+/);
  return {
    recipients,
    envelopeFrom: envelopeFrom.toLowerCase(),
    automated: automatedBy(mail, envelopeFrom),
    from: clean(from?.address ?? '').toLowerCase(),
    fromName: from?.name ? clean(from.name) || null : null,
    subject: clean(mail.subject ?? ''),
    text: clean(textOf(mail)),
    messageId: mail.messageId ? clean(unbracket(mail.messageId)) || null : null,
    inReplyTo: mail.inReplyTo ? clean(unbracket(mail.inReplyTo)) || null : null,
    references: refs.filter(Boolean).map((r) => clean(unbracket(r))).filter(Boolean),
    attachmentNames: mail.attachments.map((a) => clean(a.filename ?? '') || 'attachment'),
  };
}

/**
 * Whether a failure to record a message will happen again however often the sender retries: the
 * database refused the data itself (SQLSTATE class 22, data exception, or 54, a limit exceeded).
 * Anything else (the database or Temporal unreachable, a serialization conflict) is transient.
 */
function permanentFailure(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^(22|54)[0-9A-Z]{3}$/.test(code);
}

/**
 * Starts the inbound SMTP listener: `accepts(address)` decides at RCPT (others are refused with
 * 550), a message over 10 MB is refused with 552, and each accepted message goes to `deliver`.
 * Mail it will never take (NUL bytes in the raw message, a MIME structure the parser refuses, data
 * the database refuses) is refused for good with 554; only transient failures answer 451, so the
 * sending server retries exactly what may succeed later. `allowConnection` and `allowMessage` are
 * the per-address limits (421 at the greeting, 450 at MAIL FROM, as mail servers answer).
 * No authentication (mail arrives from other servers); no STARTTLS certificate of our own.
 */
export async function startSmtpListener(opts: {
  port: number; host?: string | undefined; log: Logger;
  /** Connections held at once, all clients together; past it, 421. */
  maxClients?: number | undefined;
  allowConnection?(remoteAddress: string): boolean;
  allowMessage?(remoteAddress: string): boolean;
  accepts(address: string): Promise<boolean>;
  deliver(mail: InboundMail): Promise<void>;
}): Promise<SmtpListener> {
  const server = new SMTPServer({
    authOptional: true, disabledCommands: ['AUTH', 'STARTTLS'], size: MAX_MAIL_BYTES, banner: 'Agent Management Service',
    logger: false, disableReverseLookup: true,
    ...(opts.maxClients ? { maxClients: opts.maxClients } : {}),
    onConnect(session, callback) {
      if (opts.allowConnection && !opts.allowConnection(session.remoteAddress)) {
        opts.log.info({ remoteAddress: session.remoteAddress }, 'SMTP connection refused: too many from this address');
        return callback(smtpError(421, `too many connections from ${session.remoteAddress}, try again later`));
      }
      callback();
    },
    onMailFrom(_address, session, callback) {
      if (opts.allowMessage && !opts.allowMessage(session.remoteAddress)) {
        return callback(smtpError(450, `too much mail from ${session.remoteAddress}, try again later`));
      }
      callback();
    },
    onRcptTo(address: SMTPServerAddress, _session, callback) {
      opts.accepts(address.address.toLowerCase()).then((ok) => {
        if (ok) return callback();
        callback(smtpError(550, `no mailbox here for ${address.address}`));
      }, (err: unknown) => callback(Object.assign(smtpError(451, 'try again later'), { cause: err })));
    },
    onData(stream, session, callback) {
      const recipients = session.envelope.rcptTo.map((r) => r.address.toLowerCase());
      const envelopeFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= MAX_MAIL_BYTES) chunks.push(chunk);
      });
      stream.on('end', () => {
        if (stream.sizeExceeded || size > MAX_MAIL_BYTES) {
          callback(smtpError(552, 'message exceeds the 10 MB limit'));
          return;
        }
        const raw = Buffer.concat(chunks);
        // RFC 5321/5322 allow no NUL in a message (this listener offers no BINARYMIME).
        if (raw.includes(0)) {
          callback(smtpError(554, 'the message contains NUL bytes'));
          return;
        }
        // mailparser (and its character sets) is loaded with the first message, not at start: it was about 20 MiB of an idle process (issue 48).
        import('mailparser').then(({ simpleParser }) => simpleParser(raw, { skipHtmlToText: false })).then(
          (parsed) => opts.deliver(toInboundMail(parsed, recipients, envelopeFrom)).then(() => callback(), (err: unknown) => {
            if (permanentFailure(err)) {
              opts.log.info({ err }, 'inbound mail refused: its content cannot be recorded');
              return callback(smtpError(554, 'the message cannot be recorded'));
            }
            opts.log.warn({ err }, 'inbound mail could not be recorded');
            callback(smtpError(451, 'could not record the message, try again later'));
          }),
          (err: unknown) => {
            opts.log.info({ err }, 'inbound mail refused: it cannot be parsed');
            callback(smtpError(554, 'the message cannot be parsed (malformed or too deeply nested MIME)'));
          },
        );
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
