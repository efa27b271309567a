import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import twilio from 'twilio';
import { startTestService, type TestService } from './helpers.ts';
import { orgWithAgent, type Api } from './support/orgs.ts';
import { spokenLines } from '../src/simulations/turns.ts';
import { createScriptedCaller } from '../src/runtime/caller.ts';

const AUTH_TOKEN = `tok_${randomBytes(12).toString('hex')}`;
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ CONVERSATION_INACTIVITY_SECONDS: 3600 }, { env: { TWILIO_AUTH_TOKEN: AUTH_TOKEN } });
});
afterAll(async () => { await svc?.stop(); });

const R = '/api/v1/rest';
const VOICE = '/api/v1/carrier/twilio/voice';
/** The transfer rule's destination, used by no other test: any carrier operation toward it would be this file's. */
const DESTINATION = '+14155550163';
const GREETING = 'Hello, you reached Acme. How can I help?';

/** Posts to the voice webhook as Twilio does (form-encoded, signed): the TwiML a real call would get. */
async function voiceWebhook(params: Record<string, string>): Promise<string> {
  const url = svc.url + VOICE;
  const res = await fetch(url, {
    method: 'POST', body: new URLSearchParams(params).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': twilio.getExpectedTwilioSignature(AUTH_TOKEN, url, params) },
  });
  expect(res.status).toBe(200);
  return res.text();
}

async function stepToEnd(api: Api, id: string, limit = 20) {
  const steps = [];
  for (let i = 0; i < limit; i++) {
    const res = await api.post(`${R}/simulations/${id}/step`, {});
    expect(res.status, res.text).toBe(200);
    steps.push(res.body);
    if (res.body.done) break;
  }
  return steps;
}

/**
 * An agent answering calls on a sandbox number, with a warm transfer rule for refunds. Sandbox numbers are
 * the same for every organization asking the same area: each agent here has an area of its own, so a call
 * to its number reaches it and the carrier operations of that number are this file's.
 */
async function agentWithNumber(areaCode: string) {
  const org = await orgWithAgent(svc, 'Acme desk');
  expect((await org.api.patch(`${R}/agents/${org.agent.id}`, { greeting: GREETING })).status).toBe(200);
  const bought = await org.api.post(`${R}/phone-numbers`, { widget_id: org.agent.id, area_code: areaCode, force: true });
  expect(bought.status, bought.text).toBe(201);
  const rule = await org.api.post(`${R}/agents/${org.agent.id}/transfer-rules`, {
    name: 'Billing desk', condition: 'Caller asks about a refund or an invoice', destination_phone: DESTINATION,
    destination_label: 'our billing team', priority: 10, transfer_type: 'warm', warm_brief: 'A caller about a refund is waiting.',
  });
  expect(rule.status, rule.text).toBe(201);
  return { ...org, number: bought.body as { phone_number: string } };
}

describe('phone simulations', () => {
  it('an agent with a number: the turns run through the voice webhook\'s TwiML (voice_path twiml) and say what a call would hear', async () => {
    const { api, agent, number } = await agentWithNumber('563');
    const made = await api.post(`${R}/simulations`, { opponent_widget_id: agent.id, scenario_text: 'Ask about the opening hours.', surface: 'phone', max_turns: 4 });
    expect(made.status, made.text).toBe(201);
    expect(made.body).toMatchObject({ surface: 'phone', voice_path: 'twiml' });
    const steps = await stepToEnd(api, made.body.id);
    expect(steps.at(-1).done).toBe(true);
    const run = (await api.get(`${R}/simulations/${made.body.id}`)).body;
    expect(run).toMatchObject({ status: 'completed', voice_path: 'twiml' });
    expect(run.messages[0]).toMatchObject({ role: 'agent', text: GREETING });
    expect(run.messages[1].role).toBe('caller');
    const agentWords = steps[0].turns.filter((m: any) => m.role === 'agent');
    expect(steps[0].turns[0]).toMatchObject({ role: 'caller', text: run.messages[1].text });

    // A real call to the number, saying the simulated caller's first line, hears the same greeting and the same answer.
    const call = { CallSid: `CA${randomBytes(16).toString('hex')}`, From: '+14155550142', To: number.phone_number };
    expect(spokenLines(await voiceWebhook({ ...call, CallStatus: 'ringing' })).lines).toEqual([GREETING]);
    const heard = spokenLines(await voiceWebhook({ ...call, CallStatus: 'in-progress', SpeechResult: run.messages[1].text }));
    expect(heard.dials).toBe(false);
    expect(heard.lines.length).toBeGreaterThan(0);
    expect(agentWords.map((m: any) => m.text)).toEqual(heard.lines);
  }, 120_000);

  it('a caller line matching a transfer rule ends the run with the announcement and a system note; no carrier call is placed', async () => {
    const { api, agent, number } = await agentWithNumber('564');
    const made = await api.post(`${R}/simulations`, {
      opponent_widget_id: agent.id, scenario_text: 'Ask for a refund of your last invoice.', surface: 'phone', tool_mode: 'sandbox', max_turns: 5,
    });
    expect(made.body.voice_path).toBe('twiml');
    const steps = await stepToEnd(api, made.body.id);
    expect(steps).toHaveLength(1);
    expect(steps[0].done).toBe(true);
    expect(steps[0].turns.map((m: any) => m.role)).toEqual(['caller', 'agent', 'system']);
    expect(steps[0].turns[1].text).toBe('Let me connect you with our billing team. Please hold.');
    expect(steps[0].turns[2].text).toBe(`Transferred by rule "Billing desk" (warm) to ${DESTINATION}`);
    expect(steps[0].simulation).toMatchObject({ status: 'completed', turn_count: 1, voice_path: 'twiml' });
    // Neither the transfer (recorded by the sandbox on a real call) nor the warm destination's call was placed.
    const towardDestination = await svc.sql<{ operation: string }[]>`select operation from carrier_operations where target = ${DESTINATION}`;
    expect(towardDestination).toEqual([]);

    // The same line on a real call does hand over: the sandbox records the transfer and the warm destination's call.
    const call = { CallSid: `CA${randomBytes(16).toString('hex')}`, From: '+14155550142', To: number.phone_number };
    await voiceWebhook({ ...call, CallStatus: 'ringing' });
    expect(spokenLines(await voiceWebhook({ ...call, CallStatus: 'in-progress', SpeechResult: steps[0].turns[0].text })).dials).toBe(true);
    const placed = await svc.sql<{ operation: string }[]>`select operation from carrier_operations where target = ${DESTINATION} order by operation`;
    expect(placed.map((o) => o.operation)).toEqual(['call', 'transfer']);
  }, 120_000);

  it('an agent whose calls stream: the turns are spoken through the sandbox\'s streamed caller (voice_path stream), each side\'s words as the other heard them', async () => {
    const { api, agent, number } = await agentWithNumber('565');
    expect((await api.patch(`${R}/agents/${agent.id}`, { phone_settings: { voice_mode: 'stream' } })).status).toBe(200);
    const scenario = 'Ask about the opening hours.';
    const made = await api.post(`${R}/simulations`, { opponent_widget_id: agent.id, scenario_text: scenario, surface: 'phone', max_turns: 1 });
    expect(made.status, made.text).toBe(201);
    expect(made.body).toMatchObject({ surface: 'phone', voice_path: 'stream' });
    const steps = await stepToEnd(api, made.body.id);
    expect(steps.at(-1).done).toBe(true);
    const run = (await api.get(`${R}/simulations/${made.body.id}`)).body;
    expect(run).toMatchObject({ status: 'completed', voice_path: 'stream', turn_count: 1 });
    // The greeting is stored when the call is answered, as on a streamed call; then each turn is what each side heard.
    expect(run.messages[0]).toMatchObject({ role: 'agent', text: GREETING });
    const turn1 = steps[0].turns;
    expect(turn1[0].role).toBe('caller');
    expect(turn1.slice(1).length).toBeGreaterThan(0);
    expect(turn1.slice(1).every((m: any) => m.role === 'agent')).toBe(true);
    // Recognized speech, not the written lines: the recognizer's lower-case words, no punctuation.
    for (const m of turn1) expect(m.text).toMatch(/^[a-z' ]+$|^\(nothing recognized\)$/);
    // The caller's line (the built-in caller's opening) came through the recognizer recognizably.
    const line = createScriptedCaller({ goal: scenario, maxTurns: 1 }).opening().toLowerCase();
    expect(turn1[0].text.split(' ').filter((w: string) => w.length > 2 && line.includes(w)).length).toBeGreaterThan(0);

    // The number's own voice_mode wins: a number kept on <Gather> gives a TwiML run of the same agent.
    expect((await api.patch(`${R}/phone-numbers/${(number as any).id}`, { voice_mode: 'turn' })).status).toBe(200);
    const turnRun = await api.post(`${R}/simulations`, { opponent_widget_id: agent.id, scenario_text: scenario, surface: 'phone', max_turns: 1 });
    expect(turnRun.body.voice_path).toBe('twiml');
  }, 120_000);

  it('an agent without a number plays the same turns as text (voice_path text); a web run has none', async () => {
    const { api, agent } = await orgWithAgent(svc, 'No line');
    const phone = await api.post(`${R}/simulations`, { opponent_widget_id: agent.id, scenario_text: 'Ask about the opening hours.', surface: 'phone', max_turns: 2 });
    expect(phone.body).toMatchObject({ surface: 'phone', voice_path: 'text' });
    const steps = await stepToEnd(api, phone.body.id);
    expect(steps.at(-1).simulation).toMatchObject({ status: 'completed', voice_path: 'text' });
    const web = await api.post(`${R}/simulations`, { opponent_widget_id: agent.id, scenario_text: 'Ask about the opening hours.', max_turns: 1 });
    expect(web.body).toMatchObject({ surface: 'web', voice_path: null });
  }, 120_000);
});
