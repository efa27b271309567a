import { createServer } from 'node:net';
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

/** A local SMTP sink: what the service sends out, parsed. */
async function startSink() {
  const received: ParsedMail[] = [];
  const server = new SMTPServer({
    authOptional: true, disabledCommands: ['AUTH', 'STARTTLS'], logger: false,
    onData(stream, _session, callback) {
      simpleParser(stream).then((mail) => { received.push(mail); callback(); }, callback);
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as { port: number };
  return { received, port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

let svc: TestService;
let sink: Awaited<ReturnType<typeof startSink>>;
let smtpPort: number;
beforeAll(async () => {
  sink = await startSink();
  smtpPort = await freePort();
  svc = await startTestService({ SMTP_LISTEN_PORT: smtpPort, HOST: '127.0.0.1', SMTP_URL: `smtp://127.0.0.1:${sink.port}` });
  expect(svc.smtpPort).toBe(smtpPort);
});
afterAll(async () => {
  await svc?.stop();
  await sink?.close();
});

/** A real SMTP client, as another mail server would deliver to us. */
const mta = () => nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true });

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
