import { connect, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import nodemailer from 'nodemailer';
import { SMTPServer } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailer } from '../src/mail/outbound.ts';
import { workflowIds } from '../src/temporal/index.ts';
import { Worker } from '@temporalio/worker';
import { eventually, startTestService, workflowBundle, type TestService } from './helpers.ts';
import { keyWith, newAgent, newOrg } from './support/orgs.ts';

const REST = '/api/v1/rest';

/** A port free right now, for a listener that cannot take port 0 (0 turns the SMTP listener off). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The domain the sink relays back to the service's own listener, as the Internet would deliver to its MX. */
const LOOP_DOMAIN = 'loop.example.com';

/**
 * A local SMTP server standing in for the rest of the world: it keeps what the service sends out,
 * parsed, and by recipient: `dead-*` is refused for good at RCPT (550), `grey-*` once for now (451,
 * greylisting), `autoresponder-*` answers every mail in its thread with no Auto-Submitted or other
 * header (a naive auto-responder), and mail for LOOP_DOMAIN is relayed to the service's listener.
 * It relays and answers before its own 250, so once a send has finished, what it caused has too.
 */
async function startSink() {
  const received: ParsedMail[] = [];
  const rcptAttempts = new Map<string, number>();
  const server = new SMTPServer({
    authOptional: true, disabledCommands: ['AUTH', 'STARTTLS'], logger: false, disableReverseLookup: true,
    onRcptTo(address, _session, callback) {
      const to = address.address.toLowerCase();
      const attempts = (rcptAttempts.get(to) ?? 0) + 1;
      rcptAttempts.set(to, attempts);
      if (to.startsWith('dead-')) return callback(Object.assign(new Error('5.1.1 no such user'), { responseCode: 550 }));
      if (to.startsWith('grey-') && attempts === 1) return callback(Object.assign(new Error('4.7.1 greylisted, try again later'), { responseCode: 451 }));
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks);
        const recipients = session.envelope.rcptTo.map((r) => r.address.toLowerCase());
        const envelopeFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        simpleParser(raw).then(async (mail) => {
          received.push(mail);
          const relayed = recipients.filter((to) => to.endsWith(`@${LOOP_DOMAIN}`));
          if (relayed.length) await mta().sendMail({ envelope: { from: envelopeFrom, to: relayed }, raw });
          for (const to of recipients.filter((r) => r.startsWith('autoresponder-'))) {
            await mta().sendMail({
              from: to, to: mail.from!.value[0]!.address, subject: `Re: ${mail.subject}`, text: 'Thank you for your message. We will get back to you.',
              inReplyTo: mail.messageId, references: [mail.messageId!],
            });
          }
        }).then(() => callback(), (err: Error) => callback(err));
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as { port: number };
  return { received, rcptAttempts, port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

let svc: TestService;
let sink: Awaited<ReturnType<typeof startSink>>;
let smtpPort: number;
beforeAll(async () => {
  sink = await startSink();
  smtpPort = await freePort();
  svc = await startTestService({
    SMTP_LISTEN_PORT: smtpPort, HOST: '127.0.0.1', SMTP_URL: `smtp://127.0.0.1:${sink.port}`,
    // Every test here sends from 127.0.0.1: the per-address limits have a test of their own below.
    SMTP_CONNECTIONS_PER_MINUTE: 100_000, SMTP_MESSAGES_PER_MINUTE: 100_000,
    // Small caps, so the loop tests reach them in a few messages.
    EMAIL_AUTO_REPLIES_PER_THREAD_PER_HOUR: 3, EMAIL_AUTO_REPLIES_PER_SENDER_PER_HOUR: 4,
  });
  expect(svc.smtpPort).toBe(smtpPort);
});
afterAll(async () => {
  await svc?.stop();
  await sink?.close();
});

/** A real SMTP client, as another mail server would deliver to us. */
const mta = () => nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true });

/**
 * Waits until the mail exchange of these organizations has come to rest: awaits the reply workflow of
 * every agent and member message of their email conversations, again and again, until a pass finds
 * none new. Each reply's send ends only after the receiving side (the sink, and through it our own
 * listener) answered 250, and our listener answers only once the mail is recorded and its own reply
 * started, so a pass with nothing new means nothing more will come. A loop that never rests fails.
 */
async function mailSettled(orgIds: string[], maxRounds = 40): Promise<number> {
  const awaited = new Set<string>();
  for (let round = 0; round < maxRounds; round++) {
    const rows = await svc.sql<{ id: string }[]>`select m.id from conversation_messages m join conversations c on c.id = m.conversation_id
      where c.org_id = any(${orgIds}::uuid[]) and c.surface = 'email' and m.role in ('agent', 'human_agent') order by m.id`;
    const fresh = rows.filter((r) => !awaited.has(r.id));
    if (fresh.length === 0) return awaited.size;
    for (const { id } of fresh) {
      awaited.add(id);
      // A turn's later messages have no workflow of their own (not found); a refused reply fails: both are done.
      await svc.temporal.workflow.getHandle(workflowIds.emailReply(id)).result().catch(() => undefined);
    }
  }
  throw new Error(`the mail exchange did not come to rest after ${maxRounds} rounds`);
}

const repliesTo = (address: string) => sink.received.filter((m) => m.to && !Array.isArray(m.to) && m.to.value[0]?.address === address);

describe('the email channel', () => {
  it('threads a correspondence into one email conversation, matched to a contact, with threaded replies from the inbox', async () => {
    const { api, orgId } = await newOrg(svc);
    const agent = await newAgent(api, 'Mail desk');
    const address = `help-${Date.now()}@mail.example.com`;
    const inbox = await api.post(`${REST}/email-inboxes`, { widget_id: agent.id, address, sender_name: 'Acme Support' });
    expect(inbox.status, inbox.text).toBe(201);
    const from = `carol.${Date.now()}@example.org`;

    // Mail for an address no inbox holds is refused at RCPT.
    const refused = await mta().sendMail({ from, to: `nobody-${Date.now()}@mail.example.com`, subject: 'x', text: 'x' }).catch((e: unknown) => e);
    expect((refused as { responseCode?: number }).responseCode).toBe(550);

    const first = await mta().sendMail({
      from: { name: 'Carol', address: from.toUpperCase() }, to: address.toUpperCase(), subject: 'Opening hours',
      text: 'Hello, what are your opening hours?', messageId: `<first.${Date.now()}@example.org>`,
      attachments: [{ filename: 'invoice.pdf', content: Buffer.from('%PDF-1.4 not really') }],
    });
    const reply1 = await eventually(async () => repliesTo(from)[0]);
    expect(reply1.from!.value[0]).toEqual({ name: 'Acme Support', address });
    expect(reply1.subject).toBe('Re: Opening hours');
    expect(reply1.inReplyTo).toBe(first.messageId);
    expect(reply1.references).toContain(first.messageId);
    expect(reply1.text!.trim().length).toBeGreaterThan(0);
    // The agent's answer is an automatic reply (RFC 3834): auto-responders must not answer it.
    expect(reply1.headers.get('auto-submitted')).toBe('auto-replied');
    expect(reply1.headers.get('x-auto-response-suppress')).toBe('All');
    expect(reply1.headers.has('precedence')).toBe(false);

    const [conversation] = await svc.sql<any[]>`select id, surface, contact_id, status from conversations where org_id = ${orgId}`;
    expect(conversation).toMatchObject({ surface: 'email', status: 'active' });
    const detail = await api.get(`${REST}/conversations/${conversation.id}`);
    expect(detail.body.messages[0]).toMatchObject({ role: 'visitor', text: 'Hello, what are your opening hours?\n[attachments: invoice.pdf]' });
    expect(detail.body.messages[1].role).toBe('agent');
    // The reply went out through its own workflow, keyed by the agent's message, whose id is in the Message-ID.
    const agentMessage = detail.body.messages[1].id;
    expect(reply1.messageId).toBe(`<${agentMessage}@mail.example.com>`);
    const sending = svc.temporal.workflow.getHandle(workflowIds.emailReply(agentMessage));
    expect(await sending.result()).toBe(true);
    for await (const replayed of Worker.runReplayHistories({ workflowBundle: await workflowBundle() }, [{ workflowId: sending.workflowId, history: await sending.fetchHistory() }])) {
      expect(replayed.error, String(replayed.error)).toBeUndefined();
    }
    const contact = (await api.get(`${REST}/contacts/${conversation.contact_id}`)).body;
    expect(contact.email_lower).toBe(from);

    // A reply to our reply lands in the same conversation.
    await mta().sendMail({
      from, to: address, subject: 'Re: Opening hours', text: 'Thanks! And on Sundays?\n\nOn Monday, Acme wrote:\n> earlier text',
      inReplyTo: reply1.messageId, references: [first.messageId, reply1.messageId!],
    });
    const reply2 = await eventually(async () => repliesTo(from)[1]);
    expect(reply2.inReplyTo).not.toBe(first.messageId);
    expect(reply2.references).toEqual(expect.arrayContaining([first.messageId, reply1.messageId]));
    const rows = await svc.sql<any[]>`select id from conversations where org_id = ${orgId}`;
    expect(rows).toHaveLength(1);
    const visitorTexts = (await api.get(`${REST}/conversations/${conversation.id}`)).body.messages.filter((m: any) => m.role === 'visitor').map((m: any) => m.text);
    expect(visitorTexts[1]).toBe('Thanks! And on Sundays?');

    // A member takes the email conversation over: the agent is silent, the member's reply goes out by mail.
    const member = await keyWith(svc, api, ['conversations.read', 'conversations.write'], { user_email: 'frank@example.com' });
    const live = await member.api.get(`${REST}/conversations/live`);
    expect(live.body.data.map((c: any) => [c.id, c.surface])).toContainEqual([conversation.id, 'email']);
    expect((await member.api.post(`${REST}/conversations/${conversation.id}/advisor`, { action: 'take_over' })).status).toBe(200);
    await mta().sendMail({ from, to: address, subject: 'Re: Opening hours', text: 'Can a person answer?', inReplyTo: reply2.messageId });
    await eventually(async () => (await api.get(`${REST}/conversations/${conversation.id}`)).body.messages.some((m: any) => m.text === 'Can a person answer?'));
    const replied = await member.api.post(`${REST}/conversations/${conversation.id}/advisor`, { action: 'reply', text: 'Frank here: we open at 10 on Sundays.' });
    expect(replied.status, replied.text).toBe(200);
    const human = await eventually(async () => repliesTo(from).find((m) => m.text?.includes('Frank here')));
    expect(human.from!.value[0]!.address).toBe(address);
    // A member's reply is a person's mail, not an automatic one.
    expect(human.headers.has('auto-submitted')).toBe(false);
    expect(human.headers.has('x-auto-response-suppress')).toBe(false);
    // Exactly two agent replies went out: none after the take-over.
    expect(repliesTo(from)).toHaveLength(3);
  }, 60_000);

  it('a transfer rule met by a mail flags it for the live inbox, and the correspondent is told a team member will join', async () => {
    const { api, orgId } = await newOrg(svc);
    const agent = await newAgent(api, 'Mail billing');
    expect((await api.post(`${REST}/agents/${agent.id}/transfer-rules`, {
      name: 'Billing', condition: 'Customer asks about a refund or an invoice', destination_phone: '+14155550199', transfer_type: 'cold',
    })).status).toBe(201);
    const address = `billing-${Date.now()}@mail.example.com`;
    expect((await api.post(`${REST}/email-inboxes`, { widget_id: agent.id, address, sender_name: 'Acme Billing' })).status).toBe(201);
    const from = `erin.${Date.now()}@example.org`;
    await mta().sendMail({ from, to: address, subject: 'Double charge', text: 'Please refund the second charge on my invoice.' });
    const reply = await eventually(async () => repliesTo(from)[0]);
    expect(reply.text).toMatch(/connecting you with a member of our team/);
    const [conversation] = await svc.sql<{ id: string; needs_human: boolean }[]>`select id, needs_human from conversations where org_id = ${orgId}`;
    expect(conversation!.needs_human).toBe(true);
    const live = (await api.get(`${REST}/conversations/live`)).body.data.find((c: any) => c.id === conversation!.id);
    expect(live).toMatchObject({ surface: 'email', needs_human: true });
    const system = (await api.get(`${REST}/conversations/${conversation!.id}`)).body.messages.filter((m: any) => m.role === 'system').map((m: any) => m.text);
    expect(system).toEqual(['Transfer rule "Billing" matched: a member of the team is asked to join']);
  }, 60_000);

  it('refuses a message over 10 MB and never keeps HTML markup or scripts', async () => {
    const { api, orgId } = await newOrg(svc);
    const agent = await newAgent(api, 'Mail desk');
    const address = `big-${Date.now()}@mail.example.com`;
    expect((await api.post(`${REST}/email-inboxes`, { widget_id: agent.id, address, sender_name: 'Support' })).status).toBe(201);

    const big = await mta().sendMail({
      from: 'dan@example.org', to: address, subject: 'Huge', text: 'see attachment',
      attachments: [{ filename: 'huge.bin', content: Buffer.alloc(10 * 1024 * 1024 + 1024, 7) }],
    }).catch((e: unknown) => e);
    expect((big as { responseCode?: number }).responseCode).toBe(552);
    expect(await svc.sql`select id from conversations where org_id = ${orgId}`).toHaveLength(0);

    await mta().sendMail({ from: 'dan@example.org', to: address, subject: 'Html', html: '<p>Hello <b>there</b></p><script>alert(1)</script>' });
    const [row] = await eventually(async () => {
      const found = await svc.sql<any[]>`select m.text from conversation_messages m join conversations c on c.id = m.conversation_id
        where c.org_id = ${orgId} and m.role = 'visitor'`;
      return found.length ? found : null;
    });
    expect(row.text).toContain('Hello');
    expect(row.text).not.toMatch(/<|alert/);
  }, 60_000);
});

/** An organization with an agent and an inbox at `address`. */
async function inboxAt(address: string, name = 'Mail desk') {
  const { api, orgId } = await newOrg(svc);
  const agent = await newAgent(api, name);
  const inbox = await api.post(`${REST}/email-inboxes`, { widget_id: agent.id, address, sender_name: 'Support' });
  expect(inbox.status, inbox.text).toBe(201);
  return { api, orgId, agent };
}

const messagesOf = async (orgId: string) => svc.sql<{ conversation_id: string; role: string; text: string }[]>`
  select m.conversation_id, m.role, m.text from conversation_messages m join conversations c on c.id = m.conversation_id
  where c.org_id = ${orgId} order by m.ts, m.id`;

const unique = () => `${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;

describe('redelivered mail (issue 40, D13)', () => {
  it('a message delivered three times over SMTP makes one conversation, one message, one conversation.started and one reply', async () => {
    const address = `dup-${unique()}@mail.example.com`;
    const { orgId } = await inboxAt(address);
    const from = `dora.${unique()}@example.org`;
    const first = { from, to: address, subject: 'Parking', text: 'Is there parking nearby?', messageId: `<dup.${unique()}@example.org>` };
    for (let i = 0; i < 3; i++) expect((await mta().sendMail(first)).response).toMatch(/^250/);

    const conversations = await svc.sql<{ id: string; status: string }[]>`select id, status from conversations where org_id = ${orgId}`;
    expect(conversations).toHaveLength(1);
    const started = await svc.sql`select id from events where org_id = ${orgId} and type = 'conversation.started'`;
    expect(started).toHaveLength(1);
    expect((await messagesOf(orgId)).map((m) => m.role)).toEqual(['visitor', 'agent']);
    await mailSettled([orgId]);
    expect(repliesTo(from)).toHaveLength(1);

    // A reply in the thread, delivered twice, adds one message and one answer.
    const reply = repliesTo(from)[0]!;
    const followUp = { from, to: address, subject: 'Re: Parking', text: 'And is it free?', inReplyTo: reply.messageId, messageId: `<dup2.${unique()}@example.org>` };
    expect((await mta().sendMail(followUp)).response).toMatch(/^250/);
    expect((await mta().sendMail(followUp)).response).toMatch(/^250/);
    await mailSettled([orgId]);
    expect((await messagesOf(orgId)).map((m) => m.role)).toEqual(['visitor', 'agent', 'visitor', 'agent']);
    expect(await svc.sql`select id from conversations where org_id = ${orgId}`).toHaveLength(1);
    expect(repliesTo(from)).toHaveLength(2);
  }, 60_000);
});

describe('mail loops (issue 40, D14)', () => {
  it('machine mail is never answered: outside a thread it starts nothing, inside one it is recorded and noted', async () => {
    const address = `machine-${unique()}@mail.example.com`;
    const { orgId } = await inboxAt(address);
    const from = `eve.${unique()}@example.org`;
    // Each of these would start a conversation if it were a person's mail.
    await mta().sendMail({ from, to: address, subject: 'Newsletter', text: 'Our news', headers: { Precedence: 'bulk' } });
    await mta().sendMail({ from, to: address, subject: 'Digest', text: 'List mail', headers: { 'List-Id': '<news.example.org>' } });
    await mta().sendMail({ from, to: address, subject: 'Away', text: 'I am away', headers: { 'Auto-Submitted': 'auto-replied' } });
    await mta().sendMail({ from, to: address, subject: 'Away', text: 'I am away', headers: { 'X-Autoreply': 'yes' } });
    await mta().sendMail({ envelope: { from: '', to: [address] }, from: `mailer-daemon@example.org`, to: address, subject: 'Undelivered', text: 'Bounce' });
    await mta().sendMail({ from: `postmaster@example.org`, to: address, subject: 'Undelivered', text: 'Bounce' });
    expect(await svc.sql`select id from conversations where org_id = ${orgId}`).toHaveLength(0);

    // `Auto-Submitted: no` is a person's mail.
    await mta().sendMail({ from, to: address, subject: 'Opening hours', text: 'When do you open?', headers: { 'Auto-Submitted': 'no' } });
    await mailSettled([orgId]);
    const reply = repliesTo(from)[0]!;
    // An out-of-office answer to our reply stays in the thread, and the agent is silent.
    await mta().sendMail({
      from, to: address, subject: 'Automatic reply: Re: Opening hours', text: 'I am out of the office until Monday.',
      inReplyTo: reply.messageId, headers: { 'Auto-Submitted': 'auto-replied' },
    });
    await mailSettled([orgId]);
    const messages = await messagesOf(orgId);
    expect(messages.map((m) => [m.role, m.text])).toEqual([
      ['visitor', 'When do you open?'], ['agent', expect.any(String)], ['visitor', 'I am out of the office until Monday.'],
      ['system', 'Automatic mail (Auto-Submitted: auto-replied): recorded, not answered'],
    ]);
    expect(repliesTo(from)).toHaveLength(1);
  }, 60_000);

  it('a paused agent answers no mail: the mail is recorded and noted; once resumed, it answers again', async () => {
    const address = `paused-${unique()}@mail.example.com`;
    const { api, orgId, agent } = await inboxAt(address);
    expect((await api.patch(`${REST}/agents/${agent.id}`, { status: 'paused' })).body.status).toBe('paused');
    const from = `pia.${unique()}@example.org`;
    // Our listener answers 250 only once the mail is recorded (and a reply, had there been one, started).
    await mta().sendMail({ from, to: address, subject: 'Opening hours', text: 'When do you open?' });
    await mailSettled([orgId]);
    expect((await messagesOf(orgId)).map((m) => [m.role, m.text])).toEqual([
      ['visitor', 'When do you open?'], ['system', 'The agent is paused: recorded, not answered'],
    ]);
    expect(repliesTo(from)).toHaveLength(0);
    expect((await api.patch(`${REST}/agents/${agent.id}`, { status: 'active' })).body.status).toBe('active');
    await mta().sendMail({ from, to: address, subject: 'Opening hours', text: 'Are you open on Sundays?' });
    await mailSettled([orgId]);
    expect(repliesTo(from)).toHaveLength(1);
  }, 60_000);

  it('the agent reads a mail without its sign-off, signature, footers and quote, and answers with a salutation, a closing and the thread\'s subject', async () => {
    const address = `manners-${unique()}@mail.example.com`;
    const { api, orgId } = await inboxAt(address);
    const from = `mia.${unique()}@example.org`;
    const first = await mta().sendMail({
      from: { name: 'Mia Jones', address: from }, to: address, subject: 'Sunday delivery', text: [
        'Hi,', '', 'Do you deliver on Sundays?', '', 'Thanks,', 'Mia', '', '-- ', 'Mia Jones', 'Head of Operations, Jones & Co', '+1 555 0100', '',
        'Sent from my iPhone', '', 'CONFIDENTIALITY NOTICE: This e-mail is intended solely for the addressee. If you have received this e-mail in error, please delete it.',
      ].join('\n'),
    });
    await mailSettled([orgId]);
    const [visitor] = (await messagesOf(orgId)).filter((m) => m.role === 'visitor');
    expect(visitor!.text).toBe('Hi,\n\nDo you deliver on Sundays?');
    const reply = repliesTo(from)[0]!;
    expect(reply.subject).toBe('Re: Sunday delivery');
    expect(reply.text!.trim()).toMatch(/^Hello,\n\n[\s\S]+\n\nBest regards,\nSupport$/);
    // The transcript keeps the agent's words; the mail dresses them.
    const agentText = (await messagesOf(orgId)).find((m) => m.role === 'agent')!.text;
    expect(reply.text!.trim()).toBe(`Hello,\n\n${agentText.trim()}\n\nBest regards,\nSupport`);

    // Her contact named: the salutation says her name. A reply quoting ours keeps the thread's subject.
    const [contact] = await svc.sql<{ contact_id: string }[]>`select contact_id from conversations where org_id = ${orgId}`;
    expect((await api.patch(`${REST}/contacts/${contact!.contact_id}`, { first_name: 'Mia' })).status).toBe(200);
    await mta().sendMail({
      from, to: address, subject: 'Re: Sunday delivery (urgent)', inReplyTo: reply.messageId, references: [first.messageId, reply.messageId!],
      text: `And on Saturdays?\n\nOn Mon, Dec 1, 2026 at 10:00 AM Support <${address}> wrote:\n> ${agentText.split('\n')[0]}\n\nBest,\nMia`,
    });
    await mailSettled([orgId]);
    expect((await messagesOf(orgId)).filter((m) => m.role === 'visitor').map((m) => m.text)).toEqual(['Hi,\n\nDo you deliver on Sundays?', 'And on Saturdays?']);
    const second = repliesTo(from)[1]!;
    expect(second.subject).toBe('Re: Sunday delivery');
    expect(second.text!.trim()).toMatch(/^Hello Mia,\n\n[\s\S]+\n\nBest regards,\nSupport$/);
  }, 60_000);

  it('two inboxes of the service mailing each other (through its own listener) come to rest at once', async () => {
    const a = `support-a-${unique()}@${LOOP_DOMAIN}`;
    const b = `support-b-${unique()}@${LOOP_DOMAIN}`;
    const orgA = await inboxAt(a, 'Desk A');
    const orgB = await inboxAt(b, 'Desk B');
    // A forged first message from B to A, as the probe sent: every reply goes out through the sink, which
    // delivers mail for LOOP_DOMAIN back to the service's listener.
    await mta().sendMail({ from: b, to: a, subject: 'Hello', text: 'Hello, what are your opening hours?' });
    const replies = await mailSettled([orgA.orgId, orgB.orgId]);
    expect(replies).toBeLessThanOrEqual(2);
    expect(sink.received.filter((m) => [a, b].includes((m.to as { value: { address: string }[] } | undefined)?.value[0]?.address ?? '')).length)
      .toBeLessThanOrEqual(2);
  }, 60_000);

  it('an auto-responder that ignores Auto-Submitted gets at most EMAIL_AUTO_REPLIES_PER_THREAD_PER_HOUR answers, then a person is asked', async () => {
    const address = `desk-${unique()}@mail.example.com`;
    const { orgId } = await inboxAt(address);
    const responder = `autoresponder-${unique()}@example.org`;
    await mta().sendMail({ from: responder, to: address, subject: 'Question', text: 'Do you ship abroad?' });
    const cap = svc.config.EMAIL_AUTO_REPLIES_PER_THREAD_PER_HOUR;
    expect(await mailSettled([orgId])).toBe(cap);

    expect(repliesTo(responder)).toHaveLength(cap);
    const conversations = await svc.sql<{ id: string; needs_human: boolean }[]>`select id, needs_human from conversations where org_id = ${orgId}`;
    expect(conversations).toHaveLength(1);
    expect(conversations[0]!.needs_human).toBe(true);
    const messages = await messagesOf(orgId);
    expect(messages.filter((m) => m.role === 'agent')).toHaveLength(cap);
    // The first mail and one auto-answer per reply, all recorded.
    expect(messages.filter((m) => m.role === 'visitor')).toHaveLength(cap + 1);
    expect(messages.filter((m) => m.role === 'system').map((m) => m.text)).toContain(
      `Automatic replies paused: the agent answered this thread ${cap} times in the last hour; a member of the team is asked to reply`);
    const counted = await svc.sql`select id from email_auto_replies where conversation_id = ${conversations[0]!.id}`;
    expect(counted).toHaveLength(cap);
  }, 90_000);

  it('a correspondent opening new threads gets at most EMAIL_AUTO_REPLIES_PER_SENDER_PER_HOUR answers in all', async () => {
    const address = `threads-${unique()}@mail.example.com`;
    const { orgId } = await inboxAt(address);
    const from = `gus.${unique()}@example.org`;
    const cap = svc.config.EMAIL_AUTO_REPLIES_PER_SENDER_PER_HOUR;
    // An auto-responder that never threads starts a new conversation with every mail.
    for (let i = 0; i <= cap; i++) await mta().sendMail({ from, to: address, subject: `Ticket ${i}`, text: `Question number ${i}` });
    expect(await mailSettled([orgId])).toBe(cap);
    expect(repliesTo(from)).toHaveLength(cap);
    const flagged = await svc.sql<{ id: string }[]>`select id from conversations where org_id = ${orgId} and needs_human`;
    expect(flagged).toHaveLength(1);
    const messages = await messagesOf(orgId);
    expect(messages.filter((m) => m.conversation_id === flagged[0]!.id).map((m) => [m.role, m.text])).toEqual([
      ['visitor', `Question number ${cap}`],
      ['system', `Automatic replies paused: the agent answered ${from} ${cap} times in the last hour; a member of the team is asked to reply`],
    ]);
  }, 90_000);
});

describe('mail that will never be taken, and replies that will never arrive (issue 40, D23)', () => {
  const refusal = (err: unknown) => (err as { responseCode?: number }).responseCode;

  it('answers 554, not 451, to NUL bytes and to MIME nested too deep; a NUL that only decoding reveals is dropped', async () => {
    const address = `nul-${unique()}@mail.example.com`;
    const { orgId } = await inboxAt(address);
    const from = `fay.${unique()}@example.org`;
    const head = `From: ${from}\r\nTo: ${address}\r\nSubject: Nul\r\nMessage-ID: <nul.${unique()}@example.org>\r\n`;
    const nul = await mta().sendMail({ envelope: { from, to: [address] }, raw: Buffer.from(`${head}\r\nbefore\0after\r\n`) }).catch((e: unknown) => e);
    expect(refusal(nul)).toBe(554);

    let body = 'deep';
    for (let depth = 0; depth < 2000; depth++) body = `Content-Type: multipart/mixed; boundary="b${depth}"\r\n\r\n--b${depth}\r\n${body}\r\n--b${depth}--`;
    const deep = await mta().sendMail({
      envelope: { from, to: [address] }, raw: Buffer.from(`From: ${from}\r\nTo: ${address}\r\nSubject: Deep\r\nMIME-Version: 1.0\r\n${body}\r\n`),
    }).catch((e: unknown) => e);
    expect(refusal(deep)).toBe(554);
    expect(await svc.sql`select id from conversations where org_id = ${orgId}`).toHaveLength(0);

    // Encoded NULs (an encoded-word subject, a quoted-printable body) are valid mail: taken, without the NULs.
    const encoded = await mta().sendMail({
      envelope: { from, to: [address] },
      raw: Buffer.from(`From: ${from}\r\nTo: ${address}\r\nSubject: =?utf-8?Q?Hel=00lo?=\r\nMIME-Version: 1.0\r\n`
        + 'Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nbe=00fore\r\n'),
    });
    expect(encoded.response).toMatch(/^250/);
    expect((await messagesOf(orgId))[0]).toMatchObject({ role: 'visitor', text: 'before' });
    const [conversation] = await svc.sql<{ email_subject: string }[]>`select email_subject from conversations where org_id = ${orgId}`;
    expect(conversation!.email_subject).toBe('Hello');
  }, 60_000);

  it('a reply the remote server refuses with 550 is not retried and is recorded; a 451 is retried until delivered', async () => {
    const address = `bounce-${unique()}@mail.example.com`;
    const { orgId } = await inboxAt(address);
    const dead = `dead-${unique()}@example.org`;
    await mta().sendMail({ from: dead, to: address, subject: 'Hi', text: 'What are your prices?' });
    const [agentMessage] = (await svc.sql<{ id: string }[]>`select m.id from conversation_messages m join conversations c on c.id = m.conversation_id
      where c.org_id = ${orgId} and m.role = 'agent' order by m.ts, m.id`);
    const failure = await svc.temporal.workflow.getHandle(workflowIds.emailReply(agentMessage!.id)).result().catch((e: unknown) => e);
    expect((failure as { cause?: { cause?: { type?: string; nonRetryable?: boolean } } }).cause?.cause).toMatchObject({ type: 'mail_rejected', nonRetryable: true });
    expect(sink.rcptAttempts.get(dead)).toBe(1);
    const [out] = await svc.sql<{ delivery_status: string; delivery_error: string }[]>`
      select e.delivery_status, e.delivery_error from email_messages e join conversations c on c.id = e.conversation_id
      where c.org_id = ${orgId} and e.direction = 'out'`;
    expect(out).toMatchObject({ delivery_status: 'rejected', delivery_error: expect.stringContaining('550') });
    const system = (await messagesOf(orgId)).filter((m) => m.role === 'system').map((m) => m.text);
    expect(system).toEqual([expect.stringMatching(/^The reply could not be delivered: the mail server refused it \(dead-.*550.*\); it will not be retried$/)]);

    // Greylisting (451 at the first attempt) is transient: the retry delivers it.
    const grey = `grey-${unique()}@example.org`;
    await mta().sendMail({ from: grey, to: address, subject: 'Hi', text: 'Do you deliver?' });
    await mailSettled([orgId]);
    expect(repliesTo(grey)).toHaveLength(1);
    expect(sink.rcptAttempts.get(grey)).toBe(2);
  }, 90_000);
});

/** A bare SMTP session over a socket: the greeting, then one reply per command (multi-line replies joined). */
async function smtpSession(port: number) {
  const socket = connect(port, '127.0.0.1');
  let buffer = '';
  const waiting: ((reply: string) => void)[] = [];
  const replies: string[] = [];
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    // A reply ends with a line whose code is followed by a space (RFC 5321 4.2.1).
    for (let m = /^(?:\d{3}-[^\n]*\n)*\d{3}(?: [^\n]*)?\r?\n/.exec(buffer); m; m = /^(?:\d{3}-[^\n]*\n)*\d{3}(?: [^\n]*)?\r?\n/.exec(buffer)) {
      buffer = buffer.slice(m[0].length);
      const next = waiting.shift();
      if (next) next(m[0]); else replies.push(m[0]);
    }
  });
  const reply = () => new Promise<string>((resolve) => {
    const ready = replies.shift();
    if (ready !== undefined) resolve(ready); else waiting.push(resolve);
  });
  const greeting = await reply();
  return {
    greeting,
    async command(line: string) { socket.write(`${line}\r\n`); return reply(); },
    close: () => socket.destroy(),
  };
}

describe('per-address limits of the SMTP listener (issue 40, D22)', () => {
  it('answers 450 past SMTP_MESSAGES_PER_MINUTE and 421 past SMTP_CONNECTIONS_PER_MINUTE from one address', async () => {
    const port = await freePort();
    const limited = await startTestService({ SMTP_LISTEN_PORT: port, HOST: '127.0.0.1', SMTP_CONNECTIONS_PER_MINUTE: 3, SMTP_MESSAGES_PER_MINUTE: 2 }, { worker: false });
    try {
      const first = await smtpSession(port);
      expect(first.greeting).toMatch(/^220 /);
      expect(await first.command('EHLO probe.example.org')).toMatch(/^250/);
      expect(await first.command('MAIL FROM:<one@example.org>')).toMatch(/^250 /);
      expect(await first.command('RSET')).toMatch(/^250 /);
      expect(await first.command('MAIL FROM:<two@example.org>')).toMatch(/^250 /);
      expect(await first.command('RSET')).toMatch(/^250 /);
      // The third message of the minute is deferred, as mail servers defer (the sender retries later).
      expect(await first.command('MAIL FROM:<three@example.org>')).toMatch(/^450 too much mail from/);
      first.close();

      const second = await smtpSession(port);
      const third = await smtpSession(port);
      expect([second.greeting, third.greeting]).toEqual([expect.stringMatching(/^220 /), expect.stringMatching(/^220 /)]);
      const fourth = await smtpSession(port);
      expect(fourth.greeting).toMatch(/^421 too many connections from/);
      for (const session of [second, third, fourth]) session.close();
    } finally {
      await limited.stop();
    }
  }, 60_000);
});

describe('outbound mail without SMTP_URL', () => {
  it('writes each message as an .eml file under DATA_DIR/mail/, with its threading headers', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ams-mail-'));
    const sent = await createMailer({ DATA_DIR: dir }).send({
      from: { name: 'Acme Support', address: 'help@acme.example' }, to: 'carol@example.org', subject: 'Re: Hours', text: 'We open at 9.',
      inReplyTo: 'first@example.org', references: ['first@example.org'],
    });
    const files = await readdir(join(dir, 'mail'));
    expect(files).toHaveLength(1);
    const eml = await readFile(join(dir, 'mail', files[0]!), 'utf8');
    const parsed = await simpleParser(eml);
    expect(parsed.messageId).toBe(`<${sent.messageId}>`);
    expect(parsed.inReplyTo).toBe('<first@example.org>');
    expect(parsed.from!.value[0]).toEqual({ name: 'Acme Support', address: 'help@acme.example' });
    expect(parsed.text!.trim()).toBe('We open at 9.');
  });
});
