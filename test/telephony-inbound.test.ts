import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import twilio from 'twilio';
import { eventually, startTestService, type TestService } from './helpers.ts';
import { orgWithAgent, type Api } from './support/orgs.ts';
import { listCarrierOperations } from '../src/db/carrier-operations.ts';

const AUTH_TOKEN = `tok_${randomBytes(12).toString('hex')}`;
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ CONVERSATION_INACTIVITY_SECONDS: 3600 }, { env: { TWILIO_AUTH_TOKEN: AUTH_TOKEN } });
});
afterAll(async () => { await svc?.stop(); });

const N = '/api/v1/rest/phone-numbers';
const VOICE = '/api/v1/carrier/twilio/voice';

/** Posts a form to a carrier webhook as Twilio does: form-encoded, signed with the auth token over the URL and the fields. */
async function carrier(path: string, params: Record<string, string>, opts: { token?: string | null } = {}) {
  const url = svc.url + path;
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (opts.token !== null) headers['x-twilio-signature'] = twilio.getExpectedTwilioSignature(opts.token ?? AUTH_TOKEN, url, params);
  const res = await fetch(url, { method: 'POST', headers, body: new URLSearchParams(params).toString() });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

const callSid = () => `CA${randomBytes(16).toString('hex')}`;

async function agentWithNumber(body: { name: string } & Record<string, unknown>) {
  const { name, ...config } = body;
  const org = await orgWithAgent(svc, name);
  if (Object.keys(config).length) {
    const patched = await org.api.patch(`/api/v1/rest/agents/${org.agent.id}`, config);
    expect(patched.status, patched.text).toBe(200);
  }
  const res = await org.api.post(N, { widget_id: org.agent.id, force: true });
  expect(res.status, res.text).toBe(201);
  return { ...org, number: res.body as Record<string, any> };
}

async function conversationsOf(api: Api, agentId: string) {
  return (await api.get(`/api/v1/rest/conversations?widget_id=${agentId}`)).body.data as Record<string, any>[];
}

async function eventTypes(orgId: string, conversationId: string): Promise<string[]> {
  const rows = await svc.sql<{ type: string }[]>`select type from events where org_id = ${orgId}
    and data::jsonb->'conversation'->>'id' = ${conversationId} order by created_at`;
  return rows.map((r) => r.type);
}

describe('inbound voice', () => {
  it('drives a full call: greeting, two turns, a matched transfer rule, hangup; a phone conversation with its events', async () => {
    const { api, agent, number, orgId } = await agentWithNumber({ name: 'Acme desk', greeting: 'Hello, you reached Acme. How can I help?', voice: 'ash' });
    const low = await api.post(`/api/v1/rest/agents/${agent.id}/transfer-rules`, {
      name: 'Sales', condition: 'Caller wants to buy something or asks about pricing', destination_phone: '+14155550100', priority: 1, transfer_type: 'cold',
    });
    expect(low.status, low.text).toBe(201);
    const rule = await api.post(`/api/v1/rest/agents/${agent.id}/transfer-rules`, {
      name: 'Billing desk', condition: 'Caller asks about a refund or an invoice', destination_phone: '+14155550199', destination_label: 'our billing team',
      priority: 10, transfer_type: 'cold', ring_timeout_seconds: 25,
    });
    expect(rule.status, rule.text).toBe(201);
    const sid = callSid();
    const base = { CallSid: sid, From: '+14155550142', To: number.phone_number, AccountSid: `AC${'0'.repeat(32)}` };
    const twimls: string[] = [];

    const start = await carrier(VOICE, { ...base, CallStatus: 'ringing' });
    expect(start.status).toBe(200);
    expect(start.type).toMatch(/^text\/xml/);
    twimls.push(start.text);
    expect(start.text).toContain('<Gather input="speech"');
    expect(start.text).toContain('Hello, you reached Acme. How can I help?');
    expect(start.text).toContain('voice="Polly.Matthew-Neural"');

    const turn1 = await carrier(VOICE, { ...base, CallStatus: 'in-progress', SpeechResult: 'What are your opening hours?', Confidence: '0.91' });
    twimls.push(turn1.text);
    expect(turn1.text).toMatch(/<Gather input="speech"[^>]*><Say [^>]*>[^<]+<\/Say>/);
    const turn2 = await carrier(VOICE, { ...base, CallStatus: 'in-progress', SpeechResult: 'Do you have a phone number I can write down?', Confidence: '0.88' });
    twimls.push(turn2.text);
    expect(turn2.text).toContain('<Gather input="speech"');
    expect(turn2.text).not.toContain('<Dial');

    // Both rules match ("pricing" and "refund"): the highest priority wins.
    const transfer = await carrier(VOICE, { ...base, CallStatus: 'in-progress', SpeechResult: 'I need a refund, and what is your pricing?', Confidence: '0.93' });
    twimls.push(transfer.text);
    // The dial's action hears a destination that does not answer (the rule's on_no_answer).
    expect(transfer.text).toContain('<Dial timeout="25" callerId="' + number.phone_number + '" action="' + svc.url + '/api/v1/carrier/twilio/voice/transfer?session=');
    expect(transfer.text).toMatch(/&amp;turn=1">\+14155550199<\/Dial>/);
    expect(transfer.text).toContain('Let me connect you with our billing team.');

    const [conversation] = await conversationsOf(api, agent.id);
    expect(conversation).toMatchObject({ surface: 'phone', status: 'active', page_url: null });
    const hangup = await carrier('/api/v1/carrier/twilio/voice/status', { ...base, CallStatus: 'completed', CallDuration: '42' });
    expect(hangup.status).toBe(204);

    const full = await eventually(async () => {
      const res = await api.get(`/api/v1/rest/conversations/${conversation!.id}`);
      return res.body.status === 'ended' && res.body.intent ? res.body : null;
    });
    expect(full.messages.map((m: any) => m.role)).toEqual(['agent', 'caller', 'agent', 'caller', 'agent', 'caller', 'agent', 'system']);
    expect(full.messages.at(-1).text).toBe('Transferred by rule "Billing desk" (cold) to +14155550199');
    expect(full.contact_id).toBeTruthy();
    const contact = (await api.get(`/api/v1/rest/contacts/${full.contact_id}`)).body;
    expect(contact.phone_e164).toBe('+14155550142');
    expect(await eventually(async () => {
      const types = await eventTypes(orgId, conversation!.id);
      return types.includes('conversation.evaluated') ? types : null;
    })).toEqual(['conversation.started', 'conversation.ended', 'conversation.evaluated']);
    const ops = await listCarrierOperations(svc.sql, { sid });
    expect(ops).toEqual([expect.objectContaining({ operation: 'transfer', target: '+14155550199', details: expect.objectContaining({ rule_name: 'Billing desk', transfer_type: 'cold' }) })]);
    console.log(`TwiML of one call from start to transfer:\n${twimls.join('\n')}`);
  });

  it('interruptions and responsiveness set the <Gather> turn-taking: bargeIn, speechTimeout and timeout; say-as for numbers and dates (issue 43)', async () => {
    const gatherOf = async (config: Record<string, unknown>) => {
      const { number } = await agentWithNumber({ name: 'Turns', ...config });
      const res = await carrier(VOICE, { CallSid: callSid(), From: '+14155550142', To: number.phone_number, AccountSid: `AC${'0'.repeat(32)}`, CallStatus: 'ringing' });
      expect(res.status).toBe(200);
      spoken = res.text;
      return /<Gather [^>]*>/.exec(res.text)![0];
    };
    let spoken = '';
    const patient = await gatherOf({ interruptions: 'wait', responsiveness: 'patient', greeting: 'Hi! Our new line is +1 415 555 0100 from 2026-05-01.' });
    // Phone numbers and dates are spoken as a person would say them (SSML say-as).
    expect(spoken).toContain('Hi! Our new line is <say-as interpret-as="telephone">+1 415 555 0100</say-as> from <say-as interpret-as="date" format="ymd">2026-05-01</say-as>.');
    expect(patient).toContain('bargeIn="false"');
    expect(patient).toContain('speechTimeout="3"');
    expect(patient).toContain('timeout="10"');
    const quick = await gatherOf({ interruptions: 'allow', responsiveness: 'quick' });
    expect(quick).toContain('bargeIn="true"');
    expect(quick).toContain('speechTimeout="1"');
    expect(quick).toContain('timeout="3"');
    const defaults = await gatherOf({});
    expect(defaults).toContain('bargeIn="true"');
    expect(defaults).toContain('speechTimeout="auto"');
    expect(defaults).toContain('timeout="5"');
  });

  it('phone_settings act on the call: recording, a pause before the greeting, recognition hints, model and filter, and a time limit (issue 43)', async () => {
    const settings = { record_calls: true, answer_delay_seconds: 2, speech_hints: ['Acme Turbo', 'Zephyr'], speech_model: 'phone_call', profanity_filter: false, max_call_minutes: 10 };
    const { api, agent, number } = await agentWithNumber({ name: 'Settings', greeting: 'Hello from Acme.', phone_settings: settings });
    expect(agent.id).toBeTruthy();
    const base = { CallSid: callSid(), From: '+14155550142', To: number.phone_number, AccountSid: `AC${'0'.repeat(32)}` };
    const start = await carrier(VOICE, { ...base, CallStatus: 'ringing' });
    expect(start.status).toBe(200);
    // Recording starts, then a pause, then the greeting inside the <Gather>.
    // The carrier posts the finished recording to the recording-status callback (test/voice-numbers.test.ts stores one).
    expect(start.text).toMatch(/<Response><Start><Recording track="both" channels="dual" recordingStatusCallback="[^"]+\/voice\/recording\?conversation=[0-9a-f-]{36}" [^>]*\/><\/Start><Pause length="2"\/><Gather [^>]*>/);
    const gather = /<Gather [^>]*>/.exec(start.text)![0];
    expect(gather).toContain('hints="Acme Turbo, Zephyr"');
    expect(gather).toContain('speechModel="phone_call"');
    expect(gather).toContain('profanityFilter="false"');

    // Every turn listens with the same hints; only the first answer records and pauses.
    const turn = await carrier(`${VOICE}?turn=1`, { ...base, CallStatus: 'in-progress', SpeechResult: 'Do you sell the Acme Turbo?' });
    expect(/<Gather [^>]*>/.exec(turn.text)![0]).toContain('hints="Acme Turbo, Zephyr"');
    expect(turn.text).not.toContain('<Start>');
    expect(turn.text).not.toContain('<Pause');

    // Ten minutes into the call, the next turn is a goodbye and the line is hung up.
    const [conversation] = await conversationsOf(api, agent.id);
    await svc.sql`update conversations set started_at = now() - interval '10 minutes 5 seconds' where id = ${conversation!.id}`;
    const late = await carrier(`${VOICE}?turn=2`, { ...base, CallStatus: 'in-progress', SpeechResult: 'And what about the Zephyr?' });
    expect(late.text).toContain('We have reached the time we have for this call. Thank you for calling. Goodbye.');
    expect(late.text).toMatch(/<Hangup\/><\/Response>$/);
    expect(late.text).not.toContain('<Gather');
    const transcript = (await api.get(`/api/v1/rest/conversations/${conversation!.id}`)).body.messages.map((m: any) => `${m.role}: ${m.text}`);
    expect(transcript.slice(-3)).toEqual([
      'caller: And what about the Zephyr?', 'agent: We have reached the time we have for this call. Thank you for calling. Goodbye.',
      'system: Call ended at its 10-minute limit (phone_settings.max_call_minutes)',
    ]);

    // Null removes a key: the call no longer records or pauses. A key's wrong value is 400 on that key and changes nothing.
    const removed = await api.patch(`/api/v1/rest/agents/${agent.id}`, { phone_settings: { record_calls: null, answer_delay_seconds: null } });
    expect(removed.body.phone_settings).toEqual({ speech_hints: ['Acme Turbo', 'Zephyr'], speech_model: 'phone_call', profanity_filter: false, max_call_minutes: 10 });
    const plain = await carrier(VOICE, { ...base, CallSid: callSid(), CallStatus: 'ringing' });
    expect(plain.text).toMatch(/^<\?xml[^>]*><Response><Gather /);
    for (const [bad, field] of [
      [{ max_call_minutes: 0 }, 'phone_settings.max_call_minutes'], [{ answer_delay_seconds: 11 }, 'phone_settings.answer_delay_seconds'],
      [{ speech_model: 'whisper' }, 'phone_settings.speech_model'], [{ record_calls: 'yes' }, 'phone_settings.record_calls'],
      [{ speech_hints: ['a,b'] }, 'phone_settings.speech_hints[0]'],
    ] as const) {
      const res = await api.patch(`/api/v1/rest/agents/${agent.id}`, { phone_settings: bad });
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.body.errors.map((e: any) => e.field), JSON.stringify(bad)).toContain(field);
    }
    expect((await api.get(`/api/v1/rest/agents/${agent.id}`)).body.phone_settings).toEqual(removed.body.phone_settings);
  });

  it('a bad or missing signature answers 403 and records nothing', async () => {
    const { api, agent, number } = await agentWithNumber({ name: 'Guarded' });
    const base = { CallSid: callSid(), From: '+14155550143', To: number.phone_number };
    expect((await carrier(VOICE, base, { token: null })).status).toBe(403);
    expect((await carrier(VOICE, base, { token: 'not-the-token' })).status).toBe(403);
    expect((await carrier('/api/v1/carrier/twilio/sms', { ...base, Body: 'hi' }, { token: 'wrong' })).status).toBe(403);
    expect((await carrier(`${VOICE}/transfer?session=${agent.id}&turn=2`, { ...base, DialCallStatus: 'no-answer' }, { token: 'wrong' })).status).toBe(403);
    expect(await conversationsOf(api, agent.id)).toEqual([]);
  });

  it('a disabled number, or one with voice or SMS off, answers politely and starts nothing', async () => {
    const { api, agent, number } = await agentWithNumber({ name: 'Closed' });
    expect((await api.patch(`${N}/${number.id}`, { voice_enabled: false })).status).toBe(200);
    const call = await carrier(VOICE, { CallSid: callSid(), From: '+14155550144', To: number.phone_number });
    expect(call.text).toContain('not taking calls');
    expect(call.text).toContain('<Hangup/>');
    expect((await api.patch(`${N}/${number.id}`, { voice_enabled: true, enabled: false })).status).toBe(200);
    expect((await carrier(VOICE, { CallSid: callSid(), From: '+14155550144', To: number.phone_number })).text).toContain('not taking calls');
    const sms = await carrier('/api/v1/carrier/twilio/sms', { MessageSid: 'SM1', From: '+14155550144', To: number.phone_number, Body: 'Hello?' });
    expect(sms.text).toContain('<Message>Thank you for your message. This number is not taking messages');
    expect(await conversationsOf(api, agent.id)).toEqual([]);
  });

  it('an agent paused during a call answers its next turn with a goodbye in TwiML (<Say> then <Hangup/>), not a problem', async () => {
    const { api, agent, number } = await agentWithNumber({ name: 'Pausing desk' });
    const base = { CallSid: callSid(), From: '+14155550145', To: number.phone_number };
    const start = await carrier(VOICE, { ...base, CallStatus: 'ringing' });
    expect(start.text).toContain('<Gather input="speech"');
    const [conversation] = await conversationsOf(api, agent.id);
    expect((await api.patch(`/api/v1/rest/agents/${agent.id}`, { status: 'paused' })).body.status).toBe('paused');
    const turn = await carrier(`${VOICE}?turn=1`, { ...base, CallStatus: 'in-progress', SpeechResult: 'What are your opening hours?' });
    expect(turn.status).toBe(200);
    expect(turn.type).toMatch(/^text\/xml/);
    expect(turn.text).toMatch(/^<\?xml[^>]*><Response><Say [^>]*>Thank you for calling\. We cannot continue this call right now\.[^<]*<\/Say><Hangup\/><\/Response>$/);
    // The agent said nothing more: the transcript holds only its greeting.
    const messages = (await api.get(`/api/v1/rest/conversations/${conversation!.id}`)).body.messages as { role: string }[];
    expect(messages.map((m) => m.role)).toEqual(['agent']);
  });

  it('warm and sip_refer transfers: conference with the brief, SIP dial over the trunk with its credentials', async () => {
    const { api, agent, number } = await agentWithNumber({ name: 'Transfers' });
    const trunk = await api.post('/api/v1/rest/sip-trunks', { label: 'PBX', sip_host: 'pbx.example.com:5061', sip_username: 'acme', password: 'trunk-secret-1' });
    await api.post(`/api/v1/rest/agents/${agent.id}/transfer-rules`, {
      name: 'Escalation', condition: 'Caller is angry or mentions a complaint', destination_phone: '+14155550188', transfer_type: 'warm',
      warm_brief: 'An upset caller about a complaint is waiting.', priority: 5,
    });
    await api.post(`/api/v1/rest/agents/${agent.id}/transfer-rules`, {
      name: 'PBX', condition: 'Caller asks for the technical support line', destination_phone: '+14155550177', transfer_type: 'sip_refer',
      sip_trunk_id: trunk.body.id, priority: 3,
    });
    const warmSid = callSid();
    // Carrier operations are kept by number, across its holders: other test files' campaigns dialled from
    // this sandbox number before this organization bought it. Only what happens from now on is this call's.
    const since = new Date().toISOString();
    await carrier(VOICE, { CallSid: warmSid, From: '+14155550145', To: number.phone_number });
    const warm = await carrier(VOICE, { CallSid: warmSid, From: '+14155550145', To: number.phone_number, SpeechResult: 'I want to make a complaint' });
    const conference = /<Conference[^>]*>(transfer-[0-9a-f-]+)<\/Conference>/.exec(warm.text)?.[1];
    expect(conference, warm.text).toBeTruthy();
    expect(warm.text).toContain('startConferenceOnEnter="false"');
    const placed = (await listCarrierOperations(svc.sql, { phoneNumber: number.phone_number })).find((o) => o.operation === 'call' && o.created_at >= since);
    expect(placed).toMatchObject({ target: '+14155550188' });
    const sessionId = conference!.slice('transfer-'.length);
    const destination = await carrier(`${VOICE}/warm?session=${sessionId}`, { CallSid: callSid(), From: number.phone_number, To: '+14155550188' });
    expect(destination.text).toContain('An upset caller about a complaint is waiting.');
    expect(destination.text).toContain(`startConferenceOnEnter="true"`);
    expect(destination.text).toContain(`>${conference}</Conference>`);

    const sipSid = callSid();
    await carrier(VOICE, { CallSid: sipSid, From: '+14155550146', To: number.phone_number });
    const sip = await carrier(VOICE, { CallSid: sipSid, From: '+14155550146', To: number.phone_number, SpeechResult: 'Give me the technical support line' });
    expect(sip.text).toContain('<Sip username="acme" password="trunk-secret-1">sip:+14155550177@pbx.example.com:5061</Sip>');
    console.log(`Warm transfer TwiML:\n${warm.text}\n${destination.text}\nSIP transfer TwiML:\n${sip.text}`);
  });
});

describe('the voice profile and the language act on the carrier voice (issue 43)', () => {
  /** The first TwiML of a call to an agent configured with `config` (and a voice profile made of `profile`). */
  async function firstTwiml(config: Record<string, unknown>, profile?: Record<string, unknown>) {
    const org = await orgWithAgent(svc, 'Voices');
    let profileId: string | undefined;
    if (profile) {
      const made = await org.api.post('/api/v1/rest/voice-profiles', { name: 'Desk voice', base_voice: 'ash', ...profile });
      expect(made.status, made.text).toBe(201);
      profileId = made.body.id;
    }
    const patched = await org.api.patch(`/api/v1/rest/agents/${org.agent.id}`, { ...config, ...(profileId ? { voice_profile_id: profileId } : {}) });
    expect(patched.status, patched.text).toBe(200);
    const number = (await org.api.post(N, { widget_id: org.agent.id, force: true })).body;
    const res = await carrier(VOICE, { CallSid: callSid(), From: '+14155550170', To: number.phone_number });
    expect(res.status).toBe(200);
    return { text: res.text, api: org.api, agentId: org.agent.id as string };
  }

  it('accent, pace, energy and formality choose the voice and its <prosody>; a foreign accent speaks inside <lang>', async () => {
    const british = await firstTwiml({ greeting: 'Good morning, Acme here.' }, { accent: 'british', pace: 'slow', energy: 'high', formality: 'formal' });
    // slow 85% + high energy 5 + formal -5 = 85%; high energy is loud. Polly's neural voices take no pitch.
    expect(british.text).toContain('<Say voice="Polly.Brian-Neural" language="en-GB"><prosody rate="85%" volume="loud">Good morning, Acme here.</prosody></Say>');
    expect(british.text).toContain('language="en-GB"><Say');
    const french = await firstTwiml({ greeting: 'Hello there.' }, { accent: 'french', pace: 'fast', energy: 'low', formality: 'casual' });
    expect(french.text).toContain('<Gather input="speech"');
    expect(french.text).toMatch(/bargeIn="true" language="en-US"><Say voice="Polly.Remi-Neural" language="fr-FR"><prosody rate="115%" volume="soft"><lang xml:lang="en-US">Hello there\.<\/lang><\/prosody><\/Say>/);
    // A profile with the default delivery changes nothing but the base voice.
    const plain = await firstTwiml({ greeting: 'Hi.' }, {});
    expect(plain.text).toContain('<Say voice="Polly.Matthew-Neural" language="en-US">Hi.</Say>');
    // formality also words the agent's own phrases: a formal profile's default greeting.
    const formal = await firstTwiml({}, { formality: 'formal' });
    expect(formal.text).toContain('>Hello. My name is Voices. How may I assist you today?</prosody></Say>');
  });

  it('languages beyond en-US and fr-FR take their carrier voices; a language the carrier cannot speak falls back to en-US', async () => {
    const cases: [string, string, string][] = [
      ['de', 'Polly.Vicki-Neural', 'de-DE'], ['pt-BR', 'Polly.Camila-Neural', 'pt-BR'], ['pt-PT', 'Polly.Ines-Neural', 'pt-PT'],
      ['es-MX', 'Polly.Mia-Neural', 'es-MX'], ['ja', 'Polly.Kazuha-Neural', 'ja-JP'], ['fr-CA', 'Polly.Gabrielle-Neural', 'fr-CA'], ['sw', 'Polly.Joanna-Neural', 'en-US'],
    ];
    for (const [language, voice, locale] of cases) {
      const { text } = await firstTwiml({ default_language: language, greeting: 'Hello.', voice: 'alloy' });
      expect(text, language).toContain(`bargeIn="true" language="${locale}"><Say voice="${voice}" language="${locale}">`);
    }
  });

  it('prices and times are spoken as a person says them; the transcript keeps the written form', async () => {
    const greeting = 'Plans start at $39.95 a month and we open at 9:00 am, closing at 17:30.';
    const { text, api, agentId } = await firstTwiml({ greeting });
    expect(text).toContain('>Plans start at 39 dollars 95 a month and we open at 9 a.m., closing at 5:30 p.m.</Say>');
    const [conversation] = await conversationsOf(api, agentId);
    const messages = (await api.get(`/api/v1/rest/conversations/${conversation!.id}`)).body.messages as { text: string }[];
    expect(messages[0]!.text).toBe(greeting);
  });
});

describe('transfers nobody answers (issue 43)', () => {
  /** The sandbox's test destination that rings and never answers (contract, "Sandbox carrier"). */
  const NO_ANSWER = '+15005550003';
  const unescape = (s: string) => s.replace(/&amp;/g, '&');
  const pathOf = (url: string) => { const u = new URL(unescape(url)); return u.pathname + u.search; };

  it('warm: the destination leg rings ring_timeout_seconds; not answered, the caller is back with the agent, who goes on', async () => {
    const { api, agent, number } = await agentWithNumber({ name: 'Warm desk' });
    const rule = await api.post(`/api/v1/rest/agents/${agent.id}/transfer-rules`, {
      name: 'Escalation', condition: 'Caller mentions a complaint', destination_phone: NO_ANSWER, destination_label: 'our manager',
      transfer_type: 'warm', warm_brief: 'A complaint is waiting.', ring_timeout_seconds: 12,
    });
    expect(rule.status, rule.text).toBe(201);
    expect(rule.body.on_no_answer).toBe('return_to_agent');
    const sid = callSid();
    const base = { CallSid: sid, From: '+14155550160', To: number.phone_number };
    const since = new Date().toISOString();
    await carrier(VOICE, base);
    const transfer = await carrier(`${VOICE}?turn=1`, { ...base, SpeechResult: 'I want to make a complaint' });
    expect(transfer.text).toContain('<Conference');
    const placed = (await listCarrierOperations(svc.sql, { phoneNumber: number.phone_number }))
      .find((o) => o.operation === 'call' && o.target === NO_ANSWER && o.created_at >= since);
    expect(placed?.details).toMatchObject({ timeout: 12, status_url: expect.stringContaining('?transfer=') });

    // The carrier reports the destination leg: rang out, never answered.
    const status = { CallSid: callSid(), From: number.phone_number, To: NO_ANSWER, CallStatus: 'no-answer' };
    expect((await carrier(pathOf(placed!.details.status_url as string), status)).status).toBe(204);
    const plays = async () => (await listCarrierOperations(svc.sql, { sid })).filter((o) => o.operation === 'play');
    const [play] = await plays();
    const twiml = play!.details.twiml as string;
    expect(twiml).toContain("Sorry, our manager is not available right now. I'm back with you: how else can I help?");
    expect(twiml).toMatch(/<Gather input="speech" action="[^"]*\/voice\?turn=2"/);
    // A retried callback plays nothing more.
    expect((await carrier(pathOf(placed!.details.status_url as string), status)).status).toBe(204);
    expect(await plays()).toHaveLength(1);

    // The caller talks to the agent again.
    const next = await carrier(`${VOICE}?turn=2`, { ...base, SpeechResult: 'What are your opening hours?' });
    expect(next.text).toContain('<Gather input="speech"');
    const [conversation] = await conversationsOf(api, agent.id);
    const messages = (await api.get(`/api/v1/rest/conversations/${conversation!.id}`)).body.messages as { role: string; text: string }[];
    expect(messages.map((m) => m.role)).toEqual(['agent', 'caller', 'agent', 'system', 'system', 'agent', 'caller', 'agent']);
    expect(messages[4]!.text).toBe(`No answer from ${NO_ANSWER} (no-answer): back to the agent`);
  });

  it('cold with on_no_answer voicemail: <Dial timeout action>, then the caller leaves a message, noted in the transcript', async () => {
    const { api, agent, number } = await agentWithNumber({ name: 'Cold desk' });
    const rule = await api.post(`/api/v1/rest/agents/${agent.id}/transfer-rules`, {
      name: 'Sales', condition: 'Caller wants a quote', destination_phone: NO_ANSWER, transfer_type: 'cold', ring_timeout_seconds: 10, on_no_answer: 'voicemail',
    });
    expect(rule.body).toMatchObject({ on_no_answer: 'voicemail' });
    const sid = callSid();
    const base = { CallSid: sid, From: '+14155550161', To: number.phone_number };
    await carrier(VOICE, base);
    const transfer = await carrier(`${VOICE}?turn=1`, { ...base, SpeechResult: 'I would like a quote please' });
    const dial = /<Dial timeout="10" callerId="[^"]+" action="([^"]+)">\+15005550003<\/Dial>/.exec(transfer.text);
    expect(dial, transfer.text).toBeTruthy();
    const fallback = await carrier(pathOf(dial![1]!), { ...base, DialCallStatus: 'no-answer' });
    expect(fallback.text).toContain('Sorry, Sales is not available right now. Please leave a message after the tone.');
    const record = /<Record action="([^"]+)"[^>]*maxLength="120"[^>]*playBeep="true"/.exec(fallback.text);
    expect(record, fallback.text).toBeTruthy();
    const done = await carrier(pathOf(record![1]!), { ...base, RecordingUrl: 'https://api.twilio.com/recordings/RE123', RecordingDuration: '14' });
    expect(done.text).toMatch(/your message has been recorded\. Goodbye\.<\/Say><Hangup\/>/);
    const [conversation] = await conversationsOf(api, agent.id);
    const messages = (await api.get(`/api/v1/rest/conversations/${conversation!.id}`)).body.messages as { role: string; text: string }[];
    expect(messages.at(-1)!.text).toBe('Voicemail left for Sales by rule "Sales" (14 s): https://api.twilio.com/recordings/RE123');
    // An answered destination ends the caller's call with the dial: nothing more plays.
    const sid2 = callSid();
    await carrier(VOICE, { ...base, CallSid: sid2 });
    const answered = await carrier(`${VOICE}?turn=1`, { ...base, CallSid: sid2, SpeechResult: 'I would like a quote please' });
    const action = /<Dial [^>]*action="([^"]+)"/.exec(answered.text)![1]!;
    expect((await carrier(pathOf(action), { ...base, CallSid: sid2, DialCallStatus: 'completed' })).text).toMatch(/<Response><Hangup\/><\/Response>/);
  });
});

describe('inbound SMS', () => {
  it('a thread becomes one sms conversation; replies come in <Message>', async () => {
    const { api, agent, number, orgId } = await agentWithNumber({ name: 'Texter', greeting: 'Hi! This is Acme.' });
    const base = { From: '+14155550150', To: number.phone_number };
    const first = await carrier('/api/v1/carrier/twilio/sms', { ...base, MessageSid: 'SMa', Body: 'What are your opening hours?' });
    expect(first.status).toBe(200);
    expect(first.text).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?><Response><Message>Hi! This is Acme\./);
    const second = await carrier('/api/v1/carrier/twilio/sms', { ...base, MessageSid: 'SMb', Body: 'Thanks, and where are you located?' });
    expect(second.text).toContain('<Message>');
    const conversations = await conversationsOf(api, agent.id);
    expect(conversations).toHaveLength(1);
    expect(conversations[0]).toMatchObject({ surface: 'sms' });
    const full = (await api.get(`/api/v1/rest/conversations/${conversations[0]!.id}`)).body;
    expect(full.messages.map((m: any) => m.role)).toEqual(['agent', 'caller', 'agent', 'caller', 'agent']);
    expect(await eventTypes(orgId, conversations[0]!.id)).toEqual(['conversation.started']);
  });

  it('the first reply says the greeting once, and a long reply stays within three segments, cut at a sentence', async () => {
    const { api, agent, number } = await agentWithNumber({ name: 'Acme texts' });
    const hello = await carrier('/api/v1/carrier/twilio/sms', { From: '+14155550151', To: number.phone_number, MessageSid: 'SMhello', Body: 'Hello' });
    const text = /<Message>([\s\S]*)<\/Message>/.exec(hello.text)![1]!;
    expect(text.match(/How can I help you today\?/g)).toHaveLength(1);
    expect(text.match(/\b(Hi|Hello)\b/g)).toHaveLength(1);
    // A greeting many segments long (the first reply of a thread is the greeting and the answer): cut to three.
    const greeting = Array.from({ length: 12 }, (_, i) => `Store number ${i + 1} on Main Street opens at nine in the morning and closes at six.`).join(' ');
    expect((await api.patch(`/api/v1/rest/agents/${agent.id}`, { greeting })).status).toBe(200);
    const long = await carrier('/api/v1/carrier/twilio/sms', { From: '+14155550152', To: number.phone_number, MessageSid: 'SMlong', Body: 'Where are your stores?' });
    const reply = /<Message>([\s\S]*)<\/Message>/.exec(long.text)![1]!;
    expect(reply).toMatch(/^Store number 1 on Main Street/);
    expect(reply.length).toBeLessThanOrEqual(459);
    expect(reply).toMatch(/[.!?]$/);
    expect(reply.length).toBeGreaterThan(300);
    // The transcript keeps the agent's whole greeting.
    expect(await svc.sql`select 1 from conversation_messages m join conversations c on c.id = m.conversation_id
      where c.agent_id = ${agent.id} and m.role = 'agent' and m.text = ${greeting}`).toHaveLength(1);
  });
});

const SMS = '/api/v1/carrier/twilio/sms';
const STATUS = '/api/v1/carrier/twilio/voice/status';

/** Where a TwiML answer's <Gather> posts next, as a path of this service. */
function gatherPath(twiml: string): string {
  const action = /<Gather [^>]*action="([^"]+)"/.exec(twiml)![1]!.replace(/&amp;/g, '&');
  const url = new URL(action);
  return url.pathname + url.search;
}

async function transcriptOf(api: Api, agentId: string) {
  const conversations = await conversationsOf(api, agentId);
  expect(conversations).toHaveLength(1);
  return (await api.get(`/api/v1/rest/conversations/${conversations[0]!.id}`)).body as Record<string, any>;
}

describe('carrier webhooks are played once (issue 40, D19)', () => {
  it('a retried or replayed text (same MessageSid) gets the first reply again and adds no message, agent turn or event', async () => {
    const { api, agent, number, orgId } = await agentWithNumber({ name: 'Replayed texts', greeting: 'Hello from A' });
    const messageSid = `SM${randomBytes(16).toString('hex')}`;
    const text = { From: '+14155557001', To: number.phone_number, MessageSid: messageSid, Body: 'What are your opening hours?' };
    const answers: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await carrier(SMS, text);
      expect(res.status).toBe(200);
      answers.push(res.text);
    }
    expect(answers[0]).toContain('Hello from A');
    expect(answers[1]).toBe(answers[0]);
    expect(answers[2]).toBe(answers[0]);
    const once = await transcriptOf(api, agent.id);
    expect(once.messages.map((m: any) => m.role)).toEqual(['agent', 'caller', 'agent']);
    expect(await eventTypes(orgId, once.id)).toEqual(['conversation.started']);
    // The answer kept for a retry is sealed at rest, like every other secret-bearing value.
    const [receipt] = await svc.sql<{ answer: string }[]>`select answer from carrier_webhook_receipts where channel = 'sms' and receipt_key = ${messageSid}`;
    expect(receipt!.answer).toMatch(/^v1:/);
    expect(receipt!.answer).not.toContain('Hello from A');
    // Another message of the thread is played.
    const next = await carrier(SMS, { ...text, MessageSid: `SM${randomBytes(16).toString('hex')}`, Body: 'And on Sundays?' });
    expect(next.text).toContain('<Message>');
    expect((await transcriptOf(api, agent.id)).messages.map((m: any) => m.role)).toEqual(['agent', 'caller', 'agent', 'caller', 'agent']);
  });

  it('a call\'s requests are numbered in the <Gather> action: a replayed turn or first request gets the same TwiML and plays nothing again', async () => {
    const { api, agent, number, orgId } = await agentWithNumber({ name: 'Replayed calls', greeting: 'Hello, you reached Replay.' });
    const base = { CallSid: callSid(), From: '+14155557002', To: number.phone_number };
    const start = await carrier(VOICE, { ...base, CallStatus: 'ringing' });
    expect(start.status).toBe(200);
    expect(gatherPath(start.text)).toBe(`${VOICE}?turn=1`);
    const turn = { ...base, CallStatus: 'in-progress', SpeechResult: 'What are your hours?' };
    const first = await carrier(gatherPath(start.text), turn);
    const again = await carrier(gatherPath(start.text), turn);
    expect(first.text).toContain('<Say');
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(gatherPath(first.text)).toBe(`${VOICE}?turn=2`);
    // The call's first request again (a carrier retry): the same greeting, and no second conversation.
    expect((await carrier(VOICE, { ...base, CallStatus: 'ringing' })).text).toBe(start.text);
    // The same words at the next turn are a new turn.
    const second = await carrier(gatherPath(first.text), turn);
    expect(gatherPath(second.text)).toBe(`${VOICE}?turn=3`);
    // A turn posted to the bare webhook URL (no turn number) is known by its words: replayed, it plays nothing either.
    const bare = { ...base, CallStatus: 'in-progress', SpeechResult: 'Do you have parking?' };
    const bare1 = await carrier(VOICE, bare);
    expect((await carrier(VOICE, bare)).text).toBe(bare1.text);
    const full = await transcriptOf(api, agent.id);
    expect(full.messages.map((m: any) => m.role)).toEqual(['agent', 'caller', 'agent', 'caller', 'agent', 'caller', 'agent']);
    expect(full.messages.filter((m: any) => m.text === 'Do you have parking?')).toHaveLength(1);
    expect(await eventTypes(orgId, full.id)).toEqual(['conversation.started']);
  });
});

/** Posts a raw form body as Twilio would, signed over the fields as the service reads them. */
async function rawCarrier(path: string, body: string) {
  const url = svc.url + path;
  const signed = Object.fromEntries(new URLSearchParams(body));
  const res = await fetch(url, {
    method: 'POST', body,
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': twilio.getExpectedTwilioSignature(AUTH_TOKEN, url, signed) },
  });
  return { status: res.status, type: res.headers.get('content-type'), body: await res.json().catch(() => null) as Record<string, any> | null };
}

describe('carrier webhook fields are text PostgreSQL can hold (issue 40, D20)', () => {
  it('a NUL or a byte sequence that is not UTF-8 in any field is 400 naming the field, and records nothing', async () => {
    const { api, agent, number } = await agentWithNumber({ name: 'Odd bytes' });
    const to = encodeURIComponent(number.phone_number);
    const cases: [string, string, string, string][] = [
      [SMS, `MessageSid=SM${randomBytes(16).toString('hex')}&From=%2B14155557002&To=${to}&Body=a%00b`, 'Body', 'invalid_characters'],
      [SMS, `MessageSid=SM${randomBytes(16).toString('hex')}&From=%2B1415%005557002&To=${to}&Body=hi`, 'From', 'invalid_characters'],
      [SMS, `MessageSid=SM${randomBytes(16).toString('hex')}&From=%2B14155557002&To=${to}%00&Body=hi`, 'To', 'invalid_characters'],
      [SMS, `MessageSid=SM${randomBytes(16).toString('hex')}&From=%2B14155557002&To=${to}&Body=%FF`, 'Body', 'invalid_encoding'],
      [SMS, `MessageSid=SM${randomBytes(16).toString('hex')}&From=%2B14155557002&To=${to}&Body=%ED%A0%80`, 'Body', 'invalid_encoding'],
      [VOICE, `CallSid=${callSid()}&From=%2B14155557002&To=${to}&SpeechResult=a%00b`, 'SpeechResult', 'invalid_characters'],
      [VOICE, `CallSid=CA%00${randomBytes(4).toString('hex')}&From=%2B14155557002&To=${to}`, 'CallSid', 'invalid_characters'],
      [STATUS, `CallSid=${callSid()}&From=%2B14155557002&To=${to}&CallStatus=completed%00`, 'CallStatus', 'invalid_characters'],
    ];
    for (const [path, body, field, code] of cases) {
      const res = await rawCarrier(path, body);
      expect(res.status, body).toBe(400);
      expect(res.type).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({ code: 'validation_error', errors: [expect.objectContaining({ field, code })] });
    }
    // A NUL in a field name is refused too, under `body`.
    expect((await rawCarrier(SMS, `To=${to}&Bo%00dy=hi`)).body).toMatchObject({ errors: [expect.objectContaining({ field: 'body', code: 'invalid_characters' })] });
    expect(await conversationsOf(api, agent.id)).toEqual([]);
  });
});

describe('a call\'s requests must come for the call\'s own number (issue 40, I11)', () => {
  it('a signed turn or status with one organization\'s CallSid and another\'s number is 404 and changes nothing', async () => {
    const a = await agentWithNumber({ name: 'Org A desk', greeting: 'Hello from A' });
    const b = await agentWithNumber({ name: 'Org B desk', greeting: 'Hello from B' });
    const base = { CallSid: callSid(), From: '+14155557003', To: a.number.phone_number };
    const start = await carrier(VOICE, base);
    expect(start.text).toContain('Hello from A');
    const crossed = { ...base, To: b.number.phone_number, SpeechResult: 'What are your hours?' };
    for (const path of [gatherPath(start.text), VOICE]) {
      const res = await carrier(path, crossed);
      expect(res.status).toBe(404);
      expect(res.type).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(res.text)).toMatchObject({ code: 'not_found' });
    }
    expect((await carrier(STATUS, { ...base, To: b.number.phone_number, CallStatus: 'completed' })).status).toBe(404);
    const transcript = await transcriptOf(a.api, a.agent.id);
    expect(transcript).toMatchObject({ status: 'active' });
    expect(transcript.messages.map((m: any) => m.role)).toEqual(['agent']);
    expect(await conversationsOf(b.api, b.agent.id)).toEqual([]);
    // The call's own number still drives it.
    expect((await carrier(gatherPath(start.text), { ...crossed, To: a.number.phone_number })).text).toContain('<Say');
  });
});
