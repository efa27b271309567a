import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import twilio from 'twilio';
import { eventually, startTestService, type TestService } from './helpers.ts';
import { callsOf, campaignReaches, eventsOf, orgWithNumber, startedCampaign } from './support/campaigns.ts';
import { workflowIds } from '../src/temporal/ids.ts';
import { orgWithAgent, type Api } from './support/orgs.ts';
import { expectProblem } from './support/problems.ts';
import { startTwilioWireServer, type TwilioWireServer } from './fixtures/twilio-wire-server.ts';
import { startReceiver, type Receiver } from './webhook-receiver.ts';
import { createTwilioCarrier } from '../src/telephony/twilio.ts';
import { CarrierError } from '../src/telephony/carrier.ts';
import { sandboxSigningToken } from '../src/telephony/webhook-urls.ts';
import { createSecretBox, loadSecretsKey } from '../src/crypto/secret-box.ts';
import { openStream, StreamedCall, streamUrlOf } from '../src/voice/sandbox-caller.ts';
import { createEspeak, createPocketsphinx, ttsVoiceOf } from '../src/voice/engines.ts';

const ACCOUNT = `AC${randomBytes(16).toString('hex')}`;
const TOKEN = randomBytes(16).toString('hex');
let wire: TwilioWireServer;
let svc: TestService;
let business: Receiver;
beforeAll(async () => {
  wire = await startTwilioWireServer(ACCOUNT, TOKEN);
  business = await startReceiver();
  // Private targets allowed: an agent's tool is the local receiver.
  svc = await startTestService({ CARRIER: 'twilio', TWILIO_ACCOUNT_SID: ACCOUNT, TWILIO_AUTH_TOKEN: TOKEN, TWILIO_API_BASE_URL: wire.url, ALLOW_PRIVATE_NETWORK_TARGETS: true });
});
afterAll(async () => { await svc?.stop(); await wire?.close(); await business?.close(); });

const N = '/api/v1/rest/phone-numbers';
const numbersPath = `/2010-04-01/Accounts/${ACCOUNT}/IncomingPhoneNumbers`;

async function state(api: Api) {
  return {
    credits: (await api.get('/api/v1/rest/credits?limit=100')).body,
    list: (await api.get(`${N}?include_released=true`)).body,
    carrier: [...wire.numbers.values()].map((n) => ({ ...n })),
  };
}

describe('Twilio adapter (wire-protocol server)', () => {
  it('searches, buys with the webhooks, reconfigures SMS, releases: Basic auth and form bodies', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const search = await api.get(`${N}/search?country=US&area_code=212`);
    expect(search.status, search.text).toBe(200);
    expect(search.body.data).toHaveLength(5);
    expect(search.body.data[0]).toEqual({
      phone_number: '+12125550100', iso_country: 'US', number_type: 'local', locality: 'San Francisco', monthly_cost_cents: 115,
      capabilities: { voice: true, sms: true, mms: true },
    });
    expect(wire.requests.at(-1)).toMatchObject({ method: 'GET', query: { AreaCode: '212' }, authorized: true });

    const bought = await api.post(N, { widget_id: agent.id, area_code: '212' });
    expect(bought.status, bought.text).toBe(201);
    expect(bought.body).toMatchObject({ phone_number: '+12125550100', sms_enabled: true, voice_enabled: true });
    const create = wire.requests.find((r) => r.method === 'POST' && r.path === `${numbersPath}.json`)!;
    expect(create.form).toMatchObject({ PhoneNumber: '+12125550100', VoiceMethod: 'POST', SmsMethod: 'POST' });
    expect(create.form.VoiceUrl).toMatch(/\/api\/v1\/carrier\/twilio\/voice$/);
    expect(create.form.SmsUrl).toMatch(/\/api\/v1\/carrier\/twilio\/sms$/);
    expect(create.form.StatusCallback).toMatch(/\/api\/v1\/carrier\/twilio\/voice\/status$/);

    const off = await api.patch(`${N}/${bought.body.id}`, { sms_enabled: false });
    expect(off.body.sms_enabled).toBe(false);
    const [held] = [...wire.numbers.values()].filter((n) => n.phone_number === '+12125550100');
    expect(held!.sms_url).toBeNull();

    expect((await api.delete(`${N}/${bought.body.id}`)).status).toBe(204);
    expect(wire.requests.at(-1)).toMatchObject({ method: 'DELETE', path: `${numbersPath}/${held!.sid}.json`, authorized: true });
    expect([...wire.numbers.values()].some((n) => n.sid === held!.sid)).toBe(false);
  });

  it('a 4xx refusal (Twilio error body) is 502 carrier_error and changes nothing', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const before = await state(api);
    wire.failNext((r) => r.method === 'POST' && r.path === `${numbersPath}.json`, 400, 21452, 'No phone numbers found in area code');
    const refused = expectProblem(await api.post(N, { widget_id: agent.id, phone_number: '+13105550123' }), 502, 'carrier_error');
    expect(refused.detail).toContain('No phone numbers found in area code (code 21452)');
    expect(await state(api)).toEqual(before);

    const bought = await api.post(N, { widget_id: agent.id, phone_number: '+13105550124' });
    expect(bought.status).toBe(201);
    const mid = await state(api);
    wire.failNext((r) => r.method === 'POST' && r.path.startsWith(`${numbersPath}/`), 400, 21606, 'The phone number is not SMS-capable');
    await api.patch(`${N}/${bought.body.id}`, { sms_enabled: false }).then((r) => expectProblem(r, 502, 'carrier_error'));
    expect(await state(api)).toEqual(mid);
  });

  it('a 5xx answer and a wrong credential are 502 carrier_error; nothing changes', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const bought = (await api.post(N, { widget_id: agent.id, phone_number: '+13105550125' })).body;
    const before = await state(api);
    wire.failNext((r) => r.method === 'DELETE', 503, 20500, 'Service Unavailable');
    expectProblem(await api.delete(`${N}/${bought.id}`), 502, 'carrier_error');
    expect(await state(api)).toEqual(before);

    const wrong = createTwilioCarrier({ accountSid: ACCOUNT, authToken: 'not-the-token', apiBaseUrl: wire.url });
    const err = await wrong.search({ country: 'US', type: 'local' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CarrierError);
    expect(err).toMatchObject({ carrierStatus: 401, carrierCode: 20003 });
  });

  it('places a call, hangs it up and sends an SMS', async () => {
    const carrier = createTwilioCarrier({ accountSid: ACCOUNT, authToken: TOKEN, apiBaseUrl: wire.url });
    const call = await carrier.placeCall({ from: '+13105550125', to: '+14155550100', url: 'https://example.com/voice', statusUrl: 'https://example.com/status' });
    expect(call.sid).toMatch(/^CA[0-9a-f]{32}$/);
    expect(wire.requests.at(-1)!.form).toMatchObject({ From: '+13105550125', To: '+14155550100', Url: 'https://example.com/voice', StatusCallback: 'https://example.com/status' });
    // A retried dial finds this call (To, From, created since the attempt began) instead of placing another.
    const lookup = { from: '+13105550125', to: '+14155550100', url: 'https://example.com/voice', since: new Date(Date.now() - 5_000) };
    expect(await carrier.findPlacedCall(lookup)).toEqual({ sid: call.sid });
    expect(wire.requests.at(-1)).toMatchObject({ method: 'GET', path: `/2010-04-01/Accounts/${ACCOUNT}/Calls.json`, query: { To: '+14155550100', From: '+13105550125' } });
    expect(await carrier.findPlacedCall({ ...lookup, to: '+14155550199' })).toBeNull();
    expect(await carrier.findPlacedCall({ ...lookup, since: new Date(Date.now() + 3_600_000) })).toBeNull();
    await carrier.hangUp(call.sid);
    expect(wire.requests.at(-1)).toMatchObject({ path: `/2010-04-01/Accounts/${ACCOUNT}/Calls/${call.sid}.json`, form: { Status: 'completed' } });
    const sms = await carrier.sendSms({ from: '+13105550125', to: '+14155550100', body: 'Hello' });
    expect(sms.sid).toMatch(/^SM/);
    expect(wire.requests.at(-1)!.form).toMatchObject({ Body: 'Hello' });
  });
});

describe('inbound webhooks with CARRIER=twilio', () => {
  it('verify against TWILIO_AUTH_TOKEN only: the sandbox\'s published token and an unsigned request are 403', async () => {
    const url = `${svc.url}/api/v1/carrier/twilio/sms`;
    const params = { From: '+14155550142', To: '+14155559999', Body: 'Hello', MessageSid: `SM${randomBytes(16).toString('hex')}` };
    const post = (headers: Record<string, string>) => fetch(url, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(params).toString(),
    });
    const sign = (key: string) => ({ 'x-twilio-signature': twilio.getExpectedTwilioSignature(key, url, params) });
    expect((await post(sign(sandboxSigningToken(createSecretBox(await loadSecretsKey(svc.config)))))).status).toBe(403);
    expect((await post(sign('sandbox-signing-token'))).status).toBe(403);
    expect((await post({})).status).toBe(403);
    const signed = await post(sign(TOKEN));
    expect(signed.status).toBe(200);
    // No number of ours: a polite answer, nothing started.
    expect(await signed.text()).toContain('<Message>');
  });
});

/** An organization whose agent has a number of area code `area`: the wire server's five candidates of the default one are shared with every other test. */
async function orgWithNumberIn(area: string) {
  const org = await orgWithAgent(svc, 'Outbound');
  const bought = await org.api.post(N, { widget_id: org.agent.id, area_code: area });
  expect(bought.status, bought.text).toBe(201);
  return { ...org, number: bought.body as Record<string, any> };
}

describe('campaign calls with CARRIER=twilio', () => {
  it('an answered call is the agent\'s phone conversation: greeting in <Gather>, a turn, then ended and evaluated with the call', async () => {
    const { api, agent, orgId, number } = await orgWithNumber(svc);
    const callee = '+14155550177';
    const campaign = await startedCampaign(api, { widget_id: agent.id, to_numbers: [callee], max_duration_seconds: 600 });
    const placed = await eventually(async () => [...wire.calls.values()].find((c) => c.to === callee && c.from === number.phone_number) ?? null, 120_000, 100);
    const [call] = await callsOf(api, campaign.id);
    expect(placed.url).toContain(`campaign_call=${call!.id}`);
    const form = { CallSid: placed.sid as string, AccountSid: ACCOUNT, From: number.phone_number as string, To: callee, Direction: 'outbound-api' };
    const status = (CallStatus: string) => wire.webhook(svc.url, placed.status_callback, { ...form, CallStatus });
    expect((await status('ringing')).status).toBe(204);
    expect((await status('in-progress')).status).toBe(204);
    // Twilio asks for the answered call's TwiML: the agent greets and listens.
    const answered = await wire.webhook(svc.url, placed.url, { ...form, CallStatus: 'in-progress' });
    expect(answered.status).toBe(200);
    expect(answered.text).toContain('<Gather');
    const gatherAction = /action="([^"]+)"/.exec(answered.text)![1]!.replace(/&amp;/g, '&');
    const turn = await wire.webhook(svc.url, gatherAction, { ...form, CallStatus: 'in-progress', SpeechResult: 'Hello, who is calling?' });
    expect(turn.status).toBe(200);
    expect(turn.text).toContain('<Say');
    const live = (await callsOf(api, campaign.id))[0]!;
    expect(live).toMatchObject({ status: 'in_progress', call_sid: placed.sid });
    expect(live.conversation_id).toBeTruthy();
    expect((await status('completed')).status).toBe(204);
    await campaignReaches(api, campaign.id, 'completed', 120_000);
    const ended = (await callsOf(api, campaign.id))[0]!;
    expect(ended).toMatchObject({ status: 'completed', ended_reason: 'carrier', conversation_id: live.conversation_id });
    const conversation = (await api.get(`/api/v1/rest/conversations/${live.conversation_id}`)).body;
    expect(conversation).toMatchObject({ surface: 'phone', widget_id: agent.id, status: 'ended' });
    expect(conversation.messages.map((m: any) => m.role)).toEqual(['agent', 'caller', 'agent']);
    expect(conversation.messages[1].text).toBe('Hello, who is calling?');
    const events = await eventually(async () => {
      const all = (await eventsOf(svc, orgId)).filter((e) => e.data.conversation?.id === live.conversation_id).map((e) => e.type);
      return all.includes('conversation.evaluated') ? all : null;
    }, 120_000, 200);
    expect(events).toEqual(['conversation.started', 'conversation.ended', 'conversation.evaluated']);
    // The call's conversation has no lifecycle workflow of its own: the call's workflow ended and evaluated it.
    await expect(svc.temporal.workflow.getHandle(workflowIds.conversation(live.conversation_id)).describe()).rejects.toThrow();
    // A late request for this call finds no live session: a hangup, and no new conversation.
    const after = await wire.webhook(svc.url, gatherAction, { ...form, CallStatus: 'completed', SpeechResult: 'Still there?' });
    expect(after.text).toContain('<Hangup/>');
    expect((await eventsOf(svc, orgId)).filter((e) => e.type === 'conversation.started')).toHaveLength(1);
  }, 240_000);

  it('answering-machine detection on campaign calls; a machine gets the voicemail message; "not interested" is said goodbye to and hung up (issue 43)', async () => {
    const { api, agent, number } = await orgWithNumber(svc);
    const machine = '+14155550179';
    const person = '+14155550180';
    const campaign = await startedCampaign(api, { widget_id: agent.id, to_numbers: [machine, person], objective: 'about your renewal', voicemail_message: 'Please call us back.' });
    const placedTo = (to: string) => eventually(async () => [...wire.calls.values()].find((c) => c.to === to && c.from === number.phone_number) ?? null, 120_000, 100);
    const [m, p] = [await placedTo(machine), await placedTo(person)];
    const create = wire.requests.find((r) => r.method === 'POST' && r.path.endsWith('/Calls.json') && r.form.To === machine)!;
    expect(create.form).toMatchObject({ MachineDetection: 'DetectMessageEnd', AsyncAmd: 'true', AsyncAmdStatusCallbackMethod: 'POST' });
    expect(create.form.AsyncAmdStatusCallback).toMatch(/\/api\/v1\/carrier\/twilio\/voice\/amd\?campaign_call=/);
    const formOf = (placed: any, to: string) => ({ CallSid: placed.sid as string, AccountSid: ACCOUNT, From: number.phone_number as string, To: to, Direction: 'outbound-api' });

    // The machine: answered, greeted, then detection says machine_end_beep: the message is played and the line hung up.
    const mf = formOf(m, machine);
    expect((await wire.webhook(svc.url, m.status_callback, { ...mf, CallStatus: 'in-progress' })).status).toBe(204);
    expect((await wire.webhook(svc.url, m.url, { ...mf, CallStatus: 'in-progress' })).text).toContain('about your renewal');
    expect((await wire.webhook(svc.url, create.form.AsyncAmdStatusCallback!, { ...mf, AnsweredBy: 'machine_end_beep' })).status).toBe(204);
    const update = wire.requests.find((r) => r.method === 'POST' && r.path.endsWith(`/Calls/${m.sid}.json`))!;
    expect(update.form.Twiml).toContain('<Say');
    expect(update.form.Twiml).toContain('Please call us back.</Say><Hangup/>');
    // Replayed: nothing played twice.
    expect((await wire.webhook(svc.url, create.form.AsyncAmdStatusCallback!, { ...mf, AnsweredBy: 'machine_end_beep' })).status).toBe(204);
    expect(wire.requests.filter((r) => r.method === 'POST' && r.path.endsWith(`/Calls/${m.sid}.json`))).toHaveLength(1);
    expect((await wire.webhook(svc.url, m.status_callback, { ...mf, CallStatus: 'completed' })).status).toBe(204);

    // The person: "not interested" gets a goodbye and a hangup, no <Gather>.
    const pf = formOf(p, person);
    expect((await wire.webhook(svc.url, p.status_callback, { ...pf, CallStatus: 'in-progress' })).status).toBe(204);
    const answered = await wire.webhook(svc.url, p.url, { ...pf, CallStatus: 'in-progress' });
    const gatherAction = /action="([^"]+)"/.exec(answered.text)![1]!.replace(/&amp;/g, '&');
    expect((await wire.webhook(svc.url, create.form.AsyncAmdStatusCallback!.replace(/campaign_call=[^&]+/, `campaign_call=${/campaign_call=([^&]+)/.exec(p.url)![1]}`), { ...pf, AnsweredBy: 'human' })).status).toBe(204);
    const turn = await wire.webhook(svc.url, gatherAction, { ...pf, CallStatus: 'in-progress', SpeechResult: "No thanks, I'm not interested." });
    expect(turn.text).toContain('Goodbye.</Say><Hangup/>');
    expect(turn.text).not.toContain('<Gather');
    expect((await wire.webhook(svc.url, p.status_callback, { ...pf, CallStatus: 'completed' })).status).toBe(204);
    await campaignReaches(api, campaign.id, 'completed', 120_000);
    const outcomes = Object.fromEntries((await callsOf(api, campaign.id)).map((c) => [c.to_number, c.outcome]));
    expect(outcomes).toEqual({ [machine]: 'voicemail_left', [person]: 'not_interested' });
  }, 240_000);

  it('the agent\'s tools are called during an answered call (no conversation workflow owns its conversation: the call is made in process)', async () => {
    const { api, agent, number } = await orgWithNumber(svc);
    expect((await api.patch(`/api/v1/rest/agents/${agent.id}`, { data_schema: [{ name: 'email', type: 'email', required: true }] })).status).toBe(200);
    const url = business.url({ headers: { 'content-type': 'application/json' }, body: '{"lead_id":"L-7"}' });
    const tool = await api.post(`/api/v1/rest/agents/${agent.id}/tools`, { name: 'create_lead', url, call_on: 'data_captured' });
    expect(tool.status, tool.text).toBe(201);
    const callee = '+14155550178';
    const campaign = await startedCampaign(api, { widget_id: agent.id, to_numbers: [callee], max_duration_seconds: 600 });
    const placed = await eventually(async () => [...wire.calls.values()].find((c) => c.to === callee && c.from === number.phone_number) ?? null, 120_000, 100);
    const form = { CallSid: placed.sid as string, AccountSid: ACCOUNT, From: number.phone_number as string, To: callee, Direction: 'outbound-api' };
    expect((await wire.webhook(svc.url, placed.status_callback, { ...form, CallStatus: 'in-progress' })).status).toBe(204);
    const answered = await wire.webhook(svc.url, placed.url, { ...form, CallStatus: 'in-progress' });
    const gatherAction = /action="([^"]+)"/.exec(answered.text)![1]!.replace(/&amp;/g, '&');
    const turn = await wire.webhook(svc.url, gatherAction, { ...form, CallStatus: 'in-progress', SpeechResult: 'Sure, my email is jane@example.org' });
    expect(turn.status).toBe(200);
    const got = business.received(url);
    expect(got).toHaveLength(1);
    expect(JSON.parse(got[0]!.body)).toEqual({ email: 'jane@example.org' });
    const conversationId = (await callsOf(api, campaign.id))[0]!.conversation_id as string;
    const conversation = (await api.get(`/api/v1/rest/conversations/${conversationId}`)).body;
    expect(conversation.tool_calls.filter((c: any) => c.name === 'create_lead')).toEqual([
      { name: 'create_lead', args: { email: 'jane@example.org' }, ts: expect.any(String), status: 'ok', duration_ms: expect.any(Number) },
    ]);
    expect((await wire.webhook(svc.url, placed.status_callback, { ...form, CallStatus: 'completed' })).status).toBe(204);
    await campaignReaches(api, campaign.id, 'completed', 120_000);
  }, 240_000);

  it('a recorded campaign call (record_calls, turn by turn): Twilio records it, the recording is downloaded with Basic auth, kept, and deleted at Twilio (issue 44)', async () => {
    const { api, agent, number } = await orgWithNumberIn('646');
    expect((await api.patch(`/api/v1/rest/agents/${agent.id}`, { phone_settings: { record_calls: true } })).status).toBe(200);
    const callee = '+14155550182';
    const campaign = await startedCampaign(api, { widget_id: agent.id, to_numbers: [callee], max_duration_seconds: 600 });
    const placed = await eventually(async () => [...wire.calls.values()].find((c) => c.to === callee && c.from === number.phone_number) ?? null, 120_000, 100);
    const form = { CallSid: placed.sid as string, AccountSid: ACCOUNT, From: number.phone_number as string, To: callee, Direction: 'outbound-api' };
    expect((await wire.webhook(svc.url, placed.status_callback, { ...form, CallStatus: 'in-progress' })).status).toBe(204);
    const answered = await wire.webhook(svc.url, placed.url, { ...form, CallStatus: 'in-progress' });
    expect(answered.text).toContain('<Gather');
    const callback = /<Start><Recording [^>]*recordingStatusCallback="([^"]+)"/.exec(answered.text)![1]!;
    expect((await wire.webhook(svc.url, placed.status_callback, { ...form, CallStatus: 'completed' })).status).toBe(204);
    // After the call, Twilio posts the finished recording.
    const wav = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVE'), Buffer.alloc(200, 1)]);
    const held = wire.addRecording(wav);
    const ready = await wire.webhook(svc.url, callback, { ...form, RecordingSid: held.sid, RecordingUrl: held.url, RecordingStatus: 'completed', RecordingDuration: '3' });
    expect(ready.status, ready.text).toBe(204);
    expect(wire.requests.find((r) => r.method === 'GET' && r.path.endsWith(`/Recordings/${held.sid}.wav`))).toMatchObject({ authorized: true });
    expect(wire.recordings.has(held.sid)).toBe(false);
    const conversationId = (await callsOf(api, campaign.id))[0]!.conversation_id as string;
    expect((await api.get(`/api/v1/rest/conversations/${conversationId}`)).body.has_recording).toBe(true);
    const download = await api.get(`/api/v1/rest/conversations/${conversationId}/recording`);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('audio/wav');
    await campaignReaches(api, campaign.id, 'completed', 120_000);
  }, 240_000);

  it('a campaign call on a number set to voice_mode stream is streamed (issue 44): <Connect><Stream>, the opening spoken as audio, ended and evaluated with the call', async () => {
    const { api, orgId, agent, number } = await orgWithNumberIn('917');
    expect((await api.patch(`${N}/${number.id}`, { voice_mode: 'stream' })).body.voice_mode).toBe('stream');
    const callee = '+14155550181';
    const campaign = await startedCampaign(api, { widget_id: agent.id, to_numbers: [callee], max_duration_seconds: 600, objective: 'about your renewal' });
    const placed = await eventually(async () => [...wire.calls.values()].find((c) => c.to === callee && c.from === number.phone_number) ?? null, 120_000, 100);
    const form = { CallSid: placed.sid as string, AccountSid: ACCOUNT, From: number.phone_number as string, To: callee, Direction: 'outbound-api' };
    expect((await wire.webhook(svc.url, placed.status_callback, { ...form, CallStatus: 'in-progress' })).status).toBe(204);
    const answered = await wire.webhook(svc.url, placed.url, { ...form, CallStatus: 'in-progress' });
    expect(answered.text).not.toContain('<Gather');
    const url = streamUrlOf(answered.text);
    expect(url).toMatch(/^ws:\/\/.*\/api\/v1\/carrier\/twilio\/voice\/stream\/vst_/);
    // The carrier's side of the stream: the callee hears the agent's opening as μ-law frames.
    const callee_ = new StreamedCall(await openStream(url!), { tts: createEspeak(), stt: createPocketsphinx(), voice: ttsVoiceOf('en', null) }, placed.sid as string);
    callee_.start();
    const opening = await callee_.nextReply();
    expect(opening.frames.length).toBeGreaterThan(10);
    await callee_.hangUp();
    expect((await wire.webhook(svc.url, placed.status_callback, { ...form, CallStatus: 'completed' })).status).toBe(204);
    await campaignReaches(api, campaign.id, 'completed', 120_000);
    const call = (await callsOf(api, campaign.id))[0]!;
    const conversation = (await api.get(`/api/v1/rest/conversations/${call.conversation_id}`)).body;
    expect(conversation).toMatchObject({ surface: 'phone', status: 'ended' });
    expect(conversation.messages[0]).toMatchObject({ role: 'agent' });
    expect(conversation.messages[0].text).toContain('renewal');
    expect(conversation.messages.at(-1)).toMatchObject({ role: 'system', text: 'Call ended: the caller hung up' });
    const events = await eventually(async () => {
      const all = (await eventsOf(svc, orgId)).filter((e) => e.data.conversation?.id === call.conversation_id).map((e) => e.type);
      return all.includes('conversation.evaluated') ? all : null;
    }, 120_000, 200);
    expect(events.filter((t) => t === 'conversation.ended')).toHaveLength(1);
  }, 240_000);
});
