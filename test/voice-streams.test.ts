import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { eventually, startTestService, type TestService } from './helpers.ts';
import { orgWithAgent, type Api } from './support/orgs.ts';
import { listCarrierOperations } from '../src/db/carrier-operations.ts';
import { newCallSid, openStream, placeStreamedCall, ringNumber, streamUrlOf, type StreamedCall } from '../src/voice/sandbox-caller.ts';
import { parseWav } from '../src/voice/audio.ts';
import { spawnSync } from 'node:child_process';
import { ESPEAK_NG, POCKETSPHINX } from '../src/voice/engines.ts';

// Streamed calls (issue 44) through the sandbox's streamed caller: the real service, PostgreSQL, Temporal,
// pocketsphinx and espeak-ng (installed by scripts/ensure-voice-engines.mjs).
const AUTH_TOKEN = `tok_${randomBytes(12).toString('hex')}`;
let svc: TestService;
let dataDir: string;
const calls: StreamedCall[] = [];

beforeAll(async () => {
  // npm test and CI install them (scripts/ensure-voice-engines.mjs).
  for (const engine of [ESPEAK_NG, POCKETSPHINX]) {
    expect(spawnSync('sh', ['-c', `command -v ${engine}`]).status, `${engine} must be installed (scripts/ensure-voice-engines.mjs)`).toBe(0);
  }
  dataDir = await mkdtemp(join(tmpdir(), 'ams-voice-'));
  svc = await startTestService({ CONVERSATION_INACTIVITY_SECONDS: 3600, DATA_DIR: dataDir }, { env: { TWILIO_AUTH_TOKEN: AUTH_TOKEN } });
});
afterAll(async () => {
  for (const call of calls) call.drop();
  await svc?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

const GREETING = 'Hello, you reached Acme. How can I help you today?';

/** An agent answering streamed calls on a number of its own. */
async function streamedAgent(config: Record<string, unknown> = {}, phoneSettings: Record<string, unknown> = {}) {
  const org = await orgWithAgent(svc, 'Acme voice desk');
  const patched = await org.api.patch(`/api/v1/rest/agents/${org.agent.id}`, { greeting: GREETING, ...config, phone_settings: { voice_mode: 'stream', ...phoneSettings } });
  expect(patched.status, patched.text).toBe(200);
  const bought = await org.api.post('/api/v1/rest/phone-numbers', { widget_id: org.agent.id, force: true });
  expect(bought.status, bought.text).toBe(201);
  return { ...org, number: (bought.body as { phone_number: string }).phone_number };
}

async function call(to: string): Promise<StreamedCall> {
  const placed = await placeStreamedCall({ baseUrl: svc.url, signingToken: AUTH_TOKEN, to });
  calls.push(placed);
  return placed;
}

async function onlyConversation(api: Api, agentId: string): Promise<Record<string, any>> {
  const list = (await api.get(`/api/v1/rest/conversations?widget_id=${agentId}`)).body.data as Record<string, any>[];
  expect(list).toHaveLength(1);
  return (await api.get(`/api/v1/rest/conversations/${list[0]!.id}`)).body as Record<string, any>;
}

async function endedConversation(api: Api, agentId: string): Promise<Record<string, any>> {
  return eventually(async () => {
    const c = await onlyConversation(api, agentId);
    return c.status === 'ended' ? c : null;
  });
}

// Each call plays in real time (20 ms frames) and runs two speech engines: minutes on a loaded machine, not seconds.
describe('streamed calls', { timeout: 240_000 }, () => {
  it('answers with <Connect><Stream>; a question is answered with audio, the turn\'s timings and the recording are kept, and go with the conversation', async () => {
    const { api, agent, number, token, orgId } = await streamedAgent({}, { record_calls: true, recording_consent: 'This call is recorded.' });
    const caller = await call(number);
    const greeting = await caller.nextReply();
    expect(greeting.frames.length).toBeGreaterThan(25);
    expect(greeting.frames.every((f) => f.length === 160)).toBe(true);
    const reply = caller.nextReply();
    await caller.say('What are your opening hours?');
    const answer = await reply;
    expect(answer.frames.length).toBeGreaterThan(10);
    expect((await caller.transcribe(answer.frames)).length).toBeGreaterThan(0);
    await caller.hangUp();
    const conversation = await endedConversation(api, agent.id);
    expect(conversation.surface).toBe('phone');
    const roles = conversation.messages.map((m: any) => m.role);
    expect(roles.slice(0, 4)).toEqual(['agent', 'agent', 'caller', 'agent']);
    expect(conversation.messages.slice(0, 2).map((m: any) => m.text).sort()).toEqual([GREETING, 'This call is recorded.'].sort());
    expect(conversation.messages[2].text.length).toBeGreaterThan(0);
    expect(conversation.messages.at(-1)).toMatchObject({ role: 'system', text: 'Call ended: the caller hung up' });
    expect(conversation.voice_turns).toHaveLength(1);
    const [turn] = conversation.voice_turns;
    expect(turn).toMatchObject({ turn: 1, interrupted: false });
    // The order of the marks: end of speech, transcript, reply, first audio byte.
    const at = (k: string) => Date.parse(turn[k]);
    expect(at('transcript_at')).toBeGreaterThanOrEqual(at('speech_ended_at'));
    expect(at('reply_at')).toBeGreaterThanOrEqual(at('transcript_at'));
    expect(at('first_audio_at')).toBeGreaterThanOrEqual(at('reply_at'));
    expect(turn.latency_ms).toBe(at('first_audio_at') - at('speech_ended_at'));
    expect(conversation.has_recording).toBe(true);

    const latency = await api.get(`/api/v1/rest/agents/${agent.id}/voice-latency`);
    expect(latency.status, latency.text).toBe(200);
    expect(latency.body).toMatchObject({ turns: 1, p50_ms: turn.latency_ms, p95_ms: turn.latency_ms });

    const recording = await fetch(`${svc.url}/api/v1/rest/conversations/${conversation.id}/recording`, { headers: { authorization: `Bearer ${token}` } });
    expect(recording.status).toBe(200);
    expect(recording.headers.get('content-type')).toBe('audio/wav');
    const wav = parseWav(Buffer.from(await recording.arrayBuffer()));
    expect(wav.rate).toBe(8000);
    // Both sides: at least the greeting, the question and the answer.
    expect(wav.samples.length).toBeGreaterThan(greeting.frames.length * 160 + answer.frames.length * 160);
    const blob = join(dataDir, 'blobs', 'recordings', orgId, agent.id, `${conversation.id}.wav`);
    expect((await stat(blob)).size).toBeGreaterThan(44);
    const other = await orgWithAgent(svc, 'Elsewhere');
    expect((await other.api.get(`/api/v1/rest/conversations/${conversation.id}/recording`)).status).toBe(404);

    expect((await api.delete(`/api/v1/rest/conversations/${conversation.id}`)).status).toBe(204);
    expect((await api.get(`/api/v1/rest/conversations/${conversation.id}/recording`)).status).toBe(404);
    await expect(stat(blob)).rejects.toMatchObject({ code: 'ENOENT' });

  });

  it('an interruption clears the agent\'s speech, and the transcript keeps what was heard', async () => {
    const long = 'Hello, you reached Acme. We sell garden tools and kitchen knives. Our shop is open every day. How can I help you today?';
    const { api, agent, number } = await streamedAgent({ greeting: long, interruptions: 'allow' });
    const caller = await call(number);
    const cleared = new Promise<void>((resolve) => caller.once('clear', () => resolve()));
    await caller.nextAudio();
    await caller.say('Hello there');
    await cleared;
    await caller.hangUp();
    const conversation = await endedConversation(api, agent.id);
    const notes = conversation.messages.filter((m: any) => m.role === 'system').map((m: any) => m.text);
    expect(notes).toContain('The caller interrupted the agent; the transcript keeps what was heard');
    // What was heard of the greeting: none of it, or its first sentences, never the whole.
    const first = conversation.messages[0];
    if (first.role === 'agent') {
      expect(long.startsWith(first.text)).toBe(true);
      expect(first.text.length).toBeLessThan(long.length);
    }
  });

  it('with interruptions: wait, the caller speaking over the agent clears nothing', async () => {
    const { api, agent, number } = await streamedAgent({ greeting: 'Hello, you reached Acme. How can I help you today?', interruptions: 'wait' });
    const caller = await call(number);
    let clears = 0;
    caller.on('clear', () => { clears++; });
    await caller.nextAudio();
    const reply = caller.nextReply();
    await caller.say('Hello there');
    await reply;
    await caller.hangUp();
    const conversation = await endedConversation(api, agent.id);
    expect(clears).toBe(0);
    expect(conversation.messages[0]).toMatchObject({ role: 'agent', text: 'Hello, you reached Acme. How can I help you today?' });
  });

  it('max_call_minutes cuts a streamed call: the goodbye is said, the line hung up, the call\'s end noted', async () => {
    const { api, agent, number } = await streamedAgent({ greeting: 'Hello.' }, { max_call_minutes: 1 });
    const caller = await call(number);
    await caller.nextReply();
    const goodbye = caller.nextReply();
    // A minute of the call's audio, sent ahead of real time.
    caller.fastForward(61);
    expect((await goodbye).frames.length).toBeGreaterThan(10);
    await caller.closed;
    const conversation = await endedConversation(api, agent.id);
    expect(conversation.messages.slice(-2)).toEqual([
      expect.objectContaining({ role: 'agent', text: 'We have reached the time we have for this call. Thank you for calling. Goodbye.' }),
      expect.objectContaining({ role: 'system', text: 'Call ended at its 1-minute limit (phone_settings.max_call_minutes)' }),
    ]);
    const ops = await listCarrierOperations(svc.sql, { sid: caller.callSid });
    expect(ops.map((o) => o.operation)).toContain('hangup');
  });

  it('a transfer from a streamed call still dials: the carrier gets the announcement and <Dial>', async () => {
    const { api, agent, number } = await streamedAgent({ greeting: 'Hello.' });
    const rule = await api.post(`/api/v1/rest/agents/${agent.id}/transfer-rules`, {
      name: 'Bookings', condition: 'Caller asks about an appointment tomorrow', destination_phone: '+14155550177', priority: 5, transfer_type: 'cold',
    });
    expect(rule.status, rule.text).toBe(201);
    const caller = await call(number);
    await caller.nextReply();
    await caller.say('What time do you open tomorrow');
    const closed = await caller.closed;
    expect(closed.reason).toBe('transferred');
    const ops = await listCarrierOperations(svc.sql, { sid: caller.callSid });
    const play = ops.find((o) => o.operation === 'play');
    expect(String(play?.details.twiml)).toContain('+14155550177</Dial>');
    expect(ops.map((o) => o.operation)).toContain('transfer');
    const conversation = await onlyConversation(api, agent.id);
    expect(conversation.messages.at(-1)).toMatchObject({ role: 'system', text: 'Transferred by rule "Bookings" (cold) to +14155550177' });
  });

  it('a WebSocket lost mid-call ends the call cleanly, with the reason recorded', async () => {
    const { api, agent, number } = await streamedAgent({ greeting: 'Hello.' });
    const caller = await call(number);
    await caller.nextReply();
    caller.drop();
    const conversation = await endedConversation(api, agent.id);
    expect(conversation.messages.at(-1)).toMatchObject({ role: 'system', text: 'Call ended: media stream lost (WebSocket closed with code 1006)' });
    const ops = await listCarrierOperations(svc.sql, { sid: caller.callSid });
    expect(ops.map((o) => o.operation)).toContain('hangup');
  });

  it('refuses a bad, forged or replayed stream token with 401 before any WebSocket opens', async () => {
    const { number } = await streamedAgent();
    const base = svc.url.replace(/^http/, 'ws') + '/api/v1/carrier/twilio/voice/stream/';
    await expect(openStream(`${base}nonsense`)).rejects.toMatchObject({ status: 401 });
    await expect(openStream(`${base}vst_${'A'.repeat(22)}_${'B'.repeat(43)}`)).rejects.toMatchObject({ status: 401 });

    const twiml = await ringNumber({ baseUrl: svc.url, signingToken: AUTH_TOKEN, to: number }, newCallSid());
    const url = streamUrlOf(twiml)!;
    expect(url).toMatch(/^ws:\/\/.*\/api\/v1\/carrier\/twilio\/voice\/stream\/vst_/);
    // A token whose signature was changed is refused, and does not spend the real one.
    const forged = url.slice(0, -2) + (url.endsWith('AA') ? 'BB' : 'AA');
    const refused = await openStream(forged).catch((err: { status: number; body: string }) => err);
    expect(refused).toMatchObject({ status: 401 });
    expect(JSON.parse((refused as { body: string }).body)).toMatchObject({ code: 'stream_token_invalid', status: 401 });
    const first = await openStream(url);
    await expect(openStream(url)).rejects.toMatchObject({ status: 401 });
    first.terminate();
  });
});
