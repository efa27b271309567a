import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startTestService, type TestService } from './helpers.ts';
import { expectFieldError } from './support/problems.ts';
import { CAMPAIGNS, callsOf, campaignReaches, createCampaign, eventsOf, orgWithNumber, startedCampaign } from './support/campaigns.ts';
import type { Api } from './support/orgs.ts';

// Answered at once; the sandbox callee has a few seconds to play its lines (its turns stop when the agent says goodbye).
let svc: TestService;
beforeAll(async () => { svc = await startTestService({ SANDBOX_RING_SECONDS: 0, SANDBOX_CALL_SECONDS: 4 }); });
afterAll(async () => { await svc?.stop(); });

const C = CAMPAIGNS;
const OBJECTIVE = 'to confirm your appointment tomorrow';

/** An organization whose agent (with its number) works for Acme Dental. */
async function dentalOrg() {
  const org = await orgWithNumber(svc);
  const patched = await org.api.patch(`/api/v1/rest/agents/${org.agent.id}`, { config_variables: { business_name: 'Acme Dental' } });
  expect(patched.status, patched.text).toBe(200);
  return org;
}

async function transcript(api: Api, conversationId: string): Promise<{ role: string; text: string }[]> {
  const res = await api.get(`/api/v1/rest/conversations/${conversationId}`);
  expect(res.status, res.text).toBe(200);
  return res.body.messages.map((m: any) => ({ role: m.role, text: m.text }));
}

/** Runs a one-number campaign to its end; its one call. */
async function callOnce(api: Api, widgetId: string, to: string, extra: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const campaign = await startedCampaign(api, { widget_id: widgetId, to_numbers: [to], objective: OBJECTIVE, ...extra });
  await campaignReaches(api, campaign.id, 'completed');
  const [call] = await callsOf(api, campaign.id);
  return call!;
}

describe('campaign objective and opening line (API)', () => {
  it('stores objective, opening_line, voicemail_behavior and voicemail_message; null by default; PATCH in draft; bad values are 400', async () => {
    const { api, agent } = await orgWithNumber(svc);
    const plain = await createCampaign(api, { widget_id: agent.id, to_numbers: ['+14155550101'] });
    expect(plain).toMatchObject({ objective: null, opening_line: null, voicemail_behavior: null, voicemail_message: null });
    const made = await createCampaign(api, {
      widget_id: agent.id, to_numbers: ['+14155550101'], objective: OBJECTIVE, opening_line: 'Hi {{first_name}}, this is {{agent_name}}.',
      voicemail_behavior: 'hang_up',
    });
    expect(made).toMatchObject({ objective: OBJECTIVE, opening_line: 'Hi {{first_name}}, this is {{agent_name}}.', voicemail_behavior: 'hang_up', voicemail_message: null });
    const patched = await api.patch(`${C}/${made.id}`, { voicemail_behavior: 'leave_message', voicemail_message: 'Please call us back.', opening_line: null });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ objective: OBJECTIVE, opening_line: null, voicemail_behavior: 'leave_message', voicemail_message: 'Please call us back.' });
    const base = { name: 'X', widget_id: agent.id, to_numbers: ['+14155550101'], max_duration_seconds: 60 };
    expectFieldError(await api.post(C, { ...base, objective: '' }), 'objective');
    expectFieldError(await api.post(C, { ...base, objective: 'x'.repeat(501) }), 'objective');
    expectFieldError(await api.post(C, { ...base, voicemail_behavior: 'sing' }), 'voicemail_behavior');
    expectFieldError(await api.patch(`${C}/${made.id}`, { opening_line: '   ' }), 'opening_line');
    expect((await api.get(`${C}/${made.id}`)).body).toEqual(patched.body);
    // The OpenAPI document and the MCP tools take them from the same schema.
    const doc = (await api.get('/api/v1/openapi.json')).body;
    const text = JSON.stringify(doc);
    for (const field of ['objective', 'opening_line', 'voicemail_message', 'callback_at']) expect(text).toContain(`"${field}"`);
  });
});

describe('a campaign call: the agent knows it placed the call (sandbox callee)', () => {
  it('opens with who calls, for whom and why; "who is this?" gets that answer; "not interested" ends it politely: outcome not_interested', async () => {
    const { api, agent, orgId } = await dentalOrg();
    const call = await callOnce(api, agent.id, '+15005550005');
    expect(call).toMatchObject({ status: 'completed', outcome: 'not_interested', callback_at: null });
    const messages = await transcript(api, call.conversation_id);
    expect(messages).toEqual([
      { role: 'agent', text: `Hello, this is ${agent.name} from Acme Dental. I'm calling ${OBJECTIVE}. Do you have a moment?` },
      { role: 'caller', text: 'Who is this?' },
      { role: 'agent', text: `This is ${agent.name} from Acme Dental. I'm calling ${OBJECTIVE}. Do you have a moment?` },
      { role: 'caller', text: 'Sorry, I am not interested.' },
      { role: 'agent', text: 'I understand. Thank you for your time, and have a good day. Goodbye.' },
    ]);
    const ended = (await eventsOf(svc, orgId)).filter((e) => e.type === 'campaign_call.ended');
    expect(ended.map((e) => e.data.call.outcome)).toEqual(['not_interested']);
  });

  it('"take me off your list": goodbye, the callee is do-not-call (never dialed again), outcome do_not_call in the event', async () => {
    const { api, agent, orgId } = await dentalOrg();
    const call = await callOnce(api, agent.id, '+15005550006');
    expect(call).toMatchObject({ status: 'completed', outcome: 'do_not_call' });
    const messages = await transcript(api, call.conversation_id);
    expect(messages[2]!.text).toContain('from Acme Dental');
    expect(messages.at(-1)).toEqual({ role: 'agent', text: 'Of course. I have taken your number off our list, and we will not call you again. Goodbye.' });
    const contacts = (await api.get('/api/v1/rest/contacts?search=5005550006')).body.data;
    expect(contacts).toHaveLength(1);
    expect(contacts[0]).toMatchObject({ phone_e164: '+15005550006', do_not_call: true });
    const ended = (await eventsOf(svc, orgId)).filter((e) => e.type === 'campaign_call.ended');
    expect(ended.map((e) => e.data.call.outcome)).toEqual(['do_not_call']);
    // The next campaign does not dial it.
    const again = await startedCampaign(api, { widget_id: agent.id, to_numbers: ['+15005550006'] });
    await campaignReaches(api, again.id, 'completed');
    expect((await callsOf(api, again.id))[0]).toMatchObject({ status: 'canceled', ended_reason: 'blocked', outcome: null });
  });

  it('"call me back at 5": a retry is queued for 17:00 on the callee\'s clock, through the campaign\'s queue; outcome callback_requested', async () => {
    const { api, agent } = await dentalOrg();
    const campaign = await startedCampaign(api, { widget_id: agent.id, to_numbers: ['+15005550007'], objective: OBJECTIVE, timezone: 'America/New_York' });
    // The retry is queued when the first call ends: wait for it, bounded.
    const calls = await eventually(async () => {
      const all = await callsOf(api, campaign.id);
      return all.length === 2 ? all : null;
    }, 60_000, 200);
    const [first, retry] = calls;
    expect(first).toMatchObject({ status: 'completed', outcome: 'callback_requested' });
    const at = new Date(first!.callback_at);
    const local = new Intl.DateTimeFormat('en-US', { timeZone: 'America/New_York', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(at);
    expect(local).toBe('17:00');
    // The next 17:00 after the call asked for it: after its end, and no more than a day later.
    const asked = new Date(first!.ended_at).getTime();
    expect(at.getTime()).toBeGreaterThan(asked);
    expect(at.getTime() - asked).toBeLessThanOrEqual(86_400_000);
    expect(retry).toMatchObject({ status: 'queued', attempt: 2, previous_call_id: first!.id, to_number: '+15005550007' });
    const messages = await transcript(api, first!.conversation_id);
    expect(messages.at(-1)!.text).toBe('Of course, I will call you back at 5 PM. Thank you, goodbye.');
    // The campaign waits for it (running), and a cancel ends it.
    expect((await api.get(`${C}/${campaign.id}`)).body.status).toBe('running');
    expect((await api.post(`${C}/${campaign.id}/cancel`)).status).toBe(200);
    await campaignReaches(api, campaign.id, 'canceled');
  });

  it('a French callee gets French answers; the opening line template renders the contact\'s and the agent\'s variables', async () => {
    const { api, agent } = await dentalOrg();
    const fr = await callOnce(api, agent.id, '+15005550008');
    expect(fr.outcome).toBe('not_interested');
    const messages = await transcript(api, fr.conversation_id);
    expect(messages[2]!.text).toBe(`Ici ${agent.name} de Acme Dental. Je vous appelle au sujet de ${OBJECTIVE}. Avez-vous un instant ?`);
    expect(messages.at(-1)!.text).toBe('Je comprends. Merci de votre temps, et bonne journée. Au revoir.');

    const contact = await api.post('/api/v1/rest/contacts', { phone_e164: '+14155550142', first_name: 'Ana' });
    expect(contact.status, contact.text).toBe(201);
    const campaign = await startedCampaign(api, {
      widget_id: agent.id, contact_ids: [contact.body.id], objective: OBJECTIVE, opening_line: 'Hi {{first_name}}, {{agent_name}} from {{business_name}} here.',
    });
    await campaignReaches(api, campaign.id, 'completed');
    const [call] = await callsOf(api, campaign.id);
    expect(call).toMatchObject({ status: 'completed', outcome: 'reached' });
    const lines = await transcript(api, call!.conversation_id);
    expect(lines[0]).toEqual({ role: 'agent', text: `Hi Ana, ${agent.name} from Acme Dental here.` });
    // The built-in callee asks who is calling: it hears who, for whom and why; nothing spoken holds a URL or a source line.
    expect(lines[1]!.role).toBe('caller');
    expect(lines[2]!.text).toContain(`This is ${agent.name} from Acme Dental. I'm calling ${OBJECTIVE}.`);
    for (const m of lines.filter((l) => l.role === 'agent')) expect(m.text).not.toMatch(/https?:|Source:/);

    // Called by number (no contact_ids): the contact that holds the number is the one its opening line names and its
    // conversation is linked to, counted once.
    const byNumber = await api.post('/api/v1/rest/contacts', { phone_e164: '+14155550143', first_name: 'Bea' });
    expect(byNumber.status, byNumber.text).toBe(201);
    const numbered = await startedCampaign(api, {
      widget_id: agent.id, to_numbers: ['+14155550143'], objective: OBJECTIVE, opening_line: 'Hi {{first_name}}, {{agent_name}} from {{business_name}} here.',
    });
    await campaignReaches(api, numbered.id, 'completed');
    const [numberedCall] = await callsOf(api, numbered.id);
    expect((await transcript(api, numberedCall!.conversation_id))[0]).toEqual({ role: 'agent', text: `Hi Bea, ${agent.name} from Acme Dental here.` });
    expect((await api.get(`/api/v1/rest/conversations/${numberedCall!.conversation_id}`)).body.contact_id).toBe(byNumber.body.id);
    expect((await api.get(`/api/v1/rest/contacts/${byNumber.body.id}`)).body.conversation_count).toBe(1);
  });
});

describe('answering machines (sandbox number +15005550004)', () => {
  it('leave_message (the agent\'s default): the message, rendered, after the beep; outcome voicemail_left; hang_up: outcome voicemail_hung_up', async () => {
    const { api, agent } = await dentalOrg();
    const left = await callOnce(api, agent.id, '+15005550004', { voicemail_message: 'Hi, {{agent_name}} from {{business_name}} here: please call us back.' });
    expect(left).toMatchObject({ status: 'completed', outcome: 'voicemail_left' });
    const messages = await transcript(api, left.conversation_id);
    expect(messages.map((m) => m.role)).toEqual(['agent', 'agent']);
    expect(messages[1]!.text).toBe(`Hi, ${agent.name} from Acme Dental here: please call us back.`);
    const played = await svc.sql<{ twiml: string }[]>`select details->>'twiml' as twiml from carrier_operations
      where operation = 'play' and details->>'sid' = ${left.call_sid}`;
    expect(played).toHaveLength(1);
    expect(played[0]!.twiml).toContain('please call us back.</Say><Hangup/>');

    const hungUp = await callOnce(api, agent.id, '+15005550004', { voicemail_behavior: 'hang_up' });
    expect(hungUp).toMatchObject({ status: 'completed', outcome: 'voicemail_hung_up' });
    expect(await svc.sql`select 1 from carrier_operations where operation = 'hangup' and details->>'sid' = ${hungUp.call_sid}`).toHaveLength(1);
    expect((await transcript(api, hungUp.conversation_id)).map((m) => m.role)).toEqual(['agent']);
    // Every placed campaign call asked for answering-machine detection.
    expect(await svc.sql`select 1 from carrier_operations where operation = 'call' and details->>'sid' = ${hungUp.call_sid} and details->>'amd' = 'true'`).toHaveLength(1);
  });
});
