import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import twilio from 'twilio';
import { call, startTestService, type TestService } from './helpers.ts';
import { keyWith, newAgent, newOrg, type Api } from './support/orgs.ts';
import { listCarrierOperations } from '../src/db/carrier-operations.ts';

// The live inbox meets the carrier: a person asked for by a transfer rule on a text surface, or by a
// visitor while members watch the inbox; an SMS thread in the inbox, answered by a member through the
// carrier; and the sandbox carrier's own signing token, so inbound texts and calls can be simulated
// without a Twilio account. This service runs the sandbox carrier without TWILIO_AUTH_TOKEN.

const REST = '/api/v1/rest';
const PUBLIC = '/api/v1/public/widgets';
const SMS = '/api/v1/carrier/twilio/sms';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ CONVERSATION_INACTIVITY_SECONDS: 3600 });
});
afterAll(async () => { await svc?.stop(); });

/** An organization with an agent, its admin client, and a member's user token (`ut_`). */
async function team(agentBody: Record<string, unknown> = { name: 'Front desk' }) {
  const org = await newOrg(svc);
  const agent = await newAgent(org.api, agentBody);
  const email = `dana.${randomBytes(3).toString('hex')}@example.com`;
  const member = await keyWith(svc, org.api, ['conversations.read', 'conversations.write'], { user_email: email });
  return { ...org, agent, member: member.api, email };
}

async function visit(agent: Record<string, any>) {
  const started = await call(svc.url, 'POST', `${PUBLIC}/${agent.public_key}/conversations`, { body: { page_url: 'https://example.com/' } });
  expect(started.status, started.text).toBe(201);
  const id = started.body.conversation_id as string;
  const headers = { 'x-visitor-token': started.body.visitor_token as string };
  return {
    id,
    say: async (text: string) => {
      const res = await call(svc.url, 'POST', `${PUBLIC}/${agent.public_key}/conversations/${id}/messages`, { body: { text }, headers });
      expect(res.status, res.text).toBe(200);
      return (res.body.messages as { role: string; text: string }[]).map((m) => m.text).join('\n');
    },
    poll: async () => (await call(svc.url, 'GET', `${PUBLIC}/${agent.public_key}/conversations/${id}/messages`, { headers })).body.messages as { role: string; text: string }[],
  };
}

/** Posts a form to a carrier webhook as Twilio does, signed with `key` (none: unsigned). */
async function carrier(path: string, params: Record<string, string>, key: string | null) {
  const url = svc.url + path;
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (key !== null) headers['x-twilio-signature'] = twilio.getExpectedTwilioSignature(key, url, params);
  const res = await fetch(url, { method: 'POST', headers, body: new URLSearchParams(params).toString() });
  return { status: res.status, text: await res.text() };
}

const liveRow = async (member: Api, id: string) => (await member.get(`${REST}/conversations/live`)).body.data.find((c: any) => c.id === id);

async function buyNumber(api: Api, agentId: string): Promise<string> {
  const res = await api.post(`${REST}/phone-numbers`, { widget_id: agentId, force: true });
  expect(res.status, res.text).toBe(201);
  return res.body.phone_number as string;
}

describe('the sandbox carrier\'s signing token', () => {
  it('signs inbound webhooks when no TWILIO_AUTH_TOKEN is set; unsigned or wrongly signed requests stay 403 and record nothing', async () => {
    expect(svc.config.CARRIER).toBe('sandbox');
    expect(svc.config.TWILIO_AUTH_TOKEN).toBeUndefined();
    // The installation's own (issue 40, D22), derived from its secrets key: the value earlier versions published opens nothing.
    expect(svc.config.SANDBOX_SIGNING_TOKEN).toBeUndefined();
    expect(svc.carrierSigningToken).toMatch(/^sbx_[A-Za-z0-9_-]{43}$/);
    const { api, agent } = await team({ name: 'Sandbox desk' });
    const ours = await buyNumber(api, agent.id);
    const params = { MessageSid: `SM${randomBytes(16).toString('hex')}`, From: '+14155550161', To: ours, Body: 'Are you open on Sundays?' };

    expect((await carrier(SMS, params, null)).status).toBe(403);
    expect((await carrier(SMS, params, 'not-the-sandbox-token')).status).toBe(403);
    expect((await carrier(SMS, params, 'sandbox-signing-token')).status).toBe(403);
    expect((await carrier('/api/v1/carrier/twilio/voice', { CallSid: `CA${randomBytes(16).toString('hex')}`, From: '+14155550161', To: ours }, null)).status).toBe(403);
    expect((await api.get(`${REST}/conversations?widget_id=${agent.id}`)).body.data).toEqual([]);

    const signed = await carrier(SMS, params, svc.carrierSigningToken);
    expect(signed.status, signed.text).toBe(200);
    expect(signed.text).toContain('<Message>');
    const voice = await carrier('/api/v1/carrier/twilio/voice', { CallSid: `CA${randomBytes(16).toString('hex')}`, From: '+14155550162', To: ours }, svc.carrierSigningToken);
    expect(voice.status, voice.text).toBe(200);
    expect(voice.text).toContain('<Gather input="speech"');
    const surfaces = (await api.get(`${REST}/conversations?widget_id=${agent.id}`)).body.data.map((c: any) => c.surface).sort();
    expect(surfaces).toEqual(['phone', 'sms']);
  });
});

describe('SMS in the live inbox', () => {
  it('an inbound text shows in GET /conversations/live; a member takes over and the reply goes out as an SMS through the carrier', async () => {
    const { api, agent, member, email } = await team({ name: 'Text desk' });
    const ours = await buyNumber(api, agent.id);
    const texter = `+1415555${String(Math.floor(Math.random() * 9000) + 1000)}`;
    const first = await carrier(SMS, { MessageSid: 'SM1', From: texter, To: ours, Body: 'Do you repair road bikes?' }, svc.carrierSigningToken);
    expect(first.status, first.text).toBe(200);
    const conversationId = (await api.get(`${REST}/conversations?widget_id=${agent.id}`)).body.data[0].id as string;

    const row = await liveRow(member, conversationId);
    expect(row).toMatchObject({ surface: 'sms', status: 'active', mode: 'agent', presence: 'online', unread_count: 1, needs_human: false });
    expect(row.last_message.role).toBe('agent');

    const taken = await member.post(`${REST}/conversations/${conversationId}/advisor`, { action: 'take_over' });
    expect(taken.status, taken.text).toBe(200);
    const before = (await listCarrierOperations(svc.sql, { phoneNumber: ours })).filter((op) => op.operation === 'sms');
    expect(before).toEqual([]);
    const replied = await member.post(`${REST}/conversations/${conversationId}/advisor`, { action: 'reply', text: 'Hi, Dana from the workshop here: yes we do.' });
    expect(replied.status, replied.text).toBe(200);
    const texted = (await listCarrierOperations(svc.sql, { phoneNumber: ours })).filter((op) => op.operation === 'sms');
    expect(texted).toHaveLength(1);
    expect(texted[0]).toMatchObject({ carrier: 'sandbox', phone_number: ours, target: texter, details: { body: 'Hi, Dana from the workshop here: yes we do.' } });

    // The texter's next message reaches the member, not the agent: no reply in <Message>.
    const next = await carrier(SMS, { MessageSid: 'SM2', From: texter, To: ours, Body: 'Great, can I come today?' }, svc.carrierSigningToken);
    expect(next.text).not.toContain('<Message>');
    const transcript = (await api.get(`${REST}/conversations/${conversationId}`)).body.messages.map((m: any) => [m.role, m.text]);
    expect(transcript.slice(-3)).toEqual([
      ['system', `${email.split('@')[0]} joined the conversation`],
      ['human_agent', 'Hi, Dana from the workshop here: yes we do.'],
      ['caller', 'Great, can I come today?'],
    ]);
  });
});

describe('a transfer rule on a text surface', () => {
  it('web: the visitor is told a team member will join, the transcript names the rule once, and the inbox flags needs_human', async () => {
    const { api, agent, member, orgId } = await team({ name: 'Billing desk' });
    const rule = await api.post(`${REST}/agents/${agent.id}/transfer-rules`, {
      name: 'Billing', condition: 'Visitor asks about a refund or an invoice', destination_phone: '+14155550199', transfer_type: 'cold',
    });
    expect(rule.status, rule.text).toBe(201);
    const v = await visit(agent);
    expect((await liveRow(member, v.id)).needs_human).toBe(false);

    const reply = await v.say('I was charged twice, I need a refund');
    expect(reply).toMatch(/connecting you with a member of our team/);
    expect(await liveRow(member, v.id)).toMatchObject({ needs_human: true, mode: 'agent' });
    await v.say('Still waiting for the refund');
    const system = (await v.poll()).filter((m) => m.role === 'system').map((m) => m.text);
    expect(system).toEqual(['Transfer rule "Billing" matched: a member of the team is asked to join']);
    // The inbox hears of it on the live stream, as a message of the conversation.
    const [event] = await svc.sql<{ type: string; data: any }[]>`select type, data from live_events
      where org_id = ${orgId} and conversation_id = ${v.id} and data->'message'->>'role' = 'system'`;
    expect(event).toMatchObject({ type: 'message', data: { conversation_id: v.id, message: { role: 'system' } } });
    const detail = (await api.get(`${REST}/conversations/${v.id}`)).body;
    expect(detail.tool_calls.map((t: any) => t.name)).toContain('transfer_rule_matched');
  });

  it('sms: the rule flags the thread for the inbox and the texter is told in <Message>', async () => {
    const { api, agent, member } = await team({ name: 'Texts' });
    expect((await api.post(`${REST}/agents/${agent.id}/transfer-rules`, {
      name: 'Invoices', condition: 'Caller asks about an invoice', destination_phone: '+14155550198', transfer_type: 'cold',
    })).status).toBe(201);
    const ours = await buyNumber(api, agent.id);
    const sent = await carrier(SMS, { MessageSid: 'SM9', From: '+14155550177', To: ours, Body: 'My invoice is wrong' }, svc.carrierSigningToken);
    expect(sent.text).toMatch(/<Message>[^<]*connecting you with a member of our team/);
    const id = (await api.get(`${REST}/conversations?widget_id=${agent.id}`)).body.data[0].id as string;
    expect(await liveRow(member, id)).toMatchObject({ surface: 'sms', needs_human: true });
  });
});

describe('a staffed inbox', () => {
  it('a visitor asking for a person is promised one while a member watches the inbox, and told no one is available otherwise', async () => {
    const { api, agent, member, orgId } = await team({ name: 'Small shop' });
    // Nobody has looked at the inbox: no transfer rule, no live chat alerts, no person to promise.
    const alone = await visit(agent);
    expect(await alone.say('Can I talk to a human?')).toMatch(/no one from our team is available/);

    // An org key reading the inbox is not a person watching it.
    expect((await api.get(`${REST}/conversations/live`)).status).toBe(200);
    const stillAlone = await visit(agent);
    expect(await stillAlone.say('Can I talk to a human?')).toMatch(/no one from our team is available/);

    // A member opens the live inbox: now a person can join.
    expect((await member.get(`${REST}/conversations/live`)).status).toBe(200);
    const v = await visit(agent);
    const reply = await v.say('Can I talk to a human?');
    expect(reply).not.toMatch(/no one/);
    expect(reply).toMatch(/connecting you with a member of our team/);
    expect(await liveRow(member, v.id)).toMatchObject({ needs_human: true });

    // Long after the member's last look, the inbox is unstaffed again.
    await svc.sql`update members set live_inbox_seen_at = now() - interval '11 minutes' where org_id = ${orgId}`;
    const late = await visit(agent);
    expect(await late.say('Can I talk to a human?')).toMatch(/no one from our team is available/);
  });
});
