import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import twilio from 'twilio';
import { startTestService, type TestService } from './helpers.ts';
import { orgWithAgent } from './support/orgs.ts';
import { expectFieldError } from './support/problems.ts';
import { wavFile } from '../src/voice/audio.ts';
import { listCarrierOperations } from '../src/db/carrier-operations.ts';

// Issue 44, the turn-by-turn side of voice: a number's own voice_mode, and the carrier's recording of a
// <Gather> call, downloaded through the outbound guard from a local server standing in for Twilio's API.
const AUTH_TOKEN = `tok_${randomBytes(12).toString('hex')}`;
const ACCOUNT_SID = `AC${randomBytes(16).toString('hex')}`;
const N = '/api/v1/rest/phone-numbers';
const VOICE = '/api/v1/carrier/twilio/voice';
const RECORDING = wavFile(Int16Array.from({ length: 8000 }, (_, i) => Math.round(8000 * Math.sin(i / 5))), 8000);

let svc: TestService;
let dataDir: string;
let twilioApi: Server;
let twilioOrigin: string;
/** What the stand-in for Twilio's API was asked: path and Authorization header. */
const fetched: { path: string; auth: string | undefined }[] = [];

beforeAll(async () => {
  twilioApi = createServer((req, res) => {
    fetched.push({ path: req.url ?? '', auth: req.headers.authorization });
    if (!req.url?.endsWith('.wav')) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'audio/x-wav' }).end(RECORDING);
  });
  await new Promise<void>((resolve) => twilioApi.listen(0, '127.0.0.1', resolve));
  twilioOrigin = `http://127.0.0.1:${(twilioApi.address() as { port: number }).port}`;
  dataDir = await mkdtemp(join(tmpdir(), 'ams-voice-numbers-'));
  svc = await startTestService(
    { CONVERSATION_INACTIVITY_SECONDS: 3600, DATA_DIR: dataDir, OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', TWILIO_API_BASE_URL: twilioOrigin },
    { env: { TWILIO_AUTH_TOKEN: AUTH_TOKEN, TWILIO_ACCOUNT_SID: ACCOUNT_SID } },
  );
});
afterAll(async () => {
  await svc?.stop();
  await new Promise<void>((resolve) => (twilioApi ? twilioApi.close(() => resolve()) : resolve()));
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** Posts a form to a carrier webhook as Twilio does: form-encoded, signed with the auth token over the URL and the fields. */
async function carrier(url: string, params: Record<string, string>, token: string = AUTH_TOKEN) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': twilio.getExpectedTwilioSignature(token, url, params) },
    body: new URLSearchParams(params).toString(),
  });
  const text = await res.text();
  return { status: res.status, text, body: text.startsWith('{') ? JSON.parse(text) : text };
}

const callSid = () => `CA${randomBytes(16).toString('hex')}`;
const ring = (to: string, sid = callSid()) => carrier(svc.url + VOICE, { CallSid: sid, From: '+14155550142', To: to, AccountSid: ACCOUNT_SID, CallStatus: 'ringing' });

async function agentWithNumbers(phoneSettings: Record<string, unknown>, count = 1) {
  const org = await orgWithAgent(svc, 'Voice line');
  const patched = await org.api.patch(`/api/v1/rest/agents/${org.agent.id}`, { greeting: 'Hello from Acme.', phone_settings: phoneSettings });
  expect(patched.status, patched.text).toBe(200);
  const numbers: Record<string, any>[] = [];
  for (let i = 0; i < count; i++) {
    const bought = await org.api.post(N, { widget_id: org.agent.id, force: true });
    expect(bought.status, bought.text).toBe(201);
    numbers.push(bought.body);
  }
  return { ...org, numbers };
}

describe('a number\'s voice_mode', () => {
  it('wins over the agent\'s when set: `turn` answers with <Gather>, `stream` with <Connect><Stream>; null gives the choice back', async () => {
    const { api, numbers: [kept, own] } = await agentWithNumbers({ voice_mode: 'stream' }, 2);
    expect(kept!.voice_mode).toBeNull();
    const patched = await api.patch(`${N}/${own!.id}`, { voice_mode: 'turn' });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ id: own!.id, voice_mode: 'turn' });
    expect((await api.get(`${N}/${own!.id}`)).body.voice_mode).toBe('turn');

    const gathered = await ring(own!.phone_number);
    expect(gathered.status).toBe(200);
    expect(gathered.text).toContain('<Gather ');
    expect(gathered.text).not.toContain('<Connect>');
    const streamed = await ring(kept!.phone_number);
    expect(streamed.text).toMatch(/<Connect><Stream url="ws:\/\/[^"]+\/api\/v1\/carrier\/twilio\/voice\/stream\/vst_[^"]+"\/><\/Connect>/);
    expect(streamed.text).not.toContain('<Gather');

    // An agent turn by turn, its number streamed.
    const other = await agentWithNumbers({});
    const set = await other.api.patch(`${N}/${other.numbers[0]!.id}`, { voice_mode: 'stream' });
    expect(set.body.voice_mode).toBe('stream');
    expect((await ring(other.numbers[0]!.phone_number)).text).toContain('<Connect><Stream url=');

    // A bad value is 400 on voice_mode and changes nothing; null hands the choice back to the agent (stream).
    const bad = await api.patch(`${N}/${own!.id}`, { voice_mode: 'fast' });
    expectFieldError(bad, 'voice_mode');
    expect((await api.get(`${N}/${own!.id}`)).body.voice_mode).toBe('turn');
    expect((await api.patch(`${N}/${own!.id}`, { voice_mode: null })).body.voice_mode).toBeNull();
    expect((await ring(own!.phone_number)).text).toContain('<Connect><Stream url=');
  });
});

describe('the carrier\'s recording of a turn-by-turn call', () => {
  it('is asked for with a recording-status callback, downloaded through the guard with the account\'s credentials, served, and deleted with its conversation', async () => {
    const { api, agent, orgId, token, numbers: [number] } = await agentWithNumbers({ record_calls: true, voice_mode: 'turn' });
    const sid = callSid();
    const answer = await ring(number!.phone_number, sid);
    const recording = /<Start><Recording ([^>]*)\/><\/Start>/.exec(answer.text)?.[1] ?? '';
    expect(recording).toContain('track="both" channels="dual"');
    expect(recording).toContain('recordingStatusCallbackMethod="POST" recordingStatusCallbackEvent="completed"');
    const callback = /recordingStatusCallback="([^"]+)"/.exec(recording)![1]!;
    const conversationId = /\?conversation=([0-9a-f-]{36})$/.exec(callback)![1]!;
    expect(callback).toBe(`${svc.url}/api/v1/carrier/twilio/voice/recording?conversation=${conversationId}`);
    expect(answer.text).toContain('<Gather ');

    const recordingSid = `RE${randomBytes(16).toString('hex')}`;
    const recordingUrl = `${twilioOrigin}/2010-04-01/Accounts/${ACCOUNT_SID}/Recordings/${recordingSid}`;
    const ready = { AccountSid: ACCOUNT_SID, CallSid: sid, RecordingSid: recordingSid, RecordingUrl: recordingUrl, RecordingStatus: 'completed', RecordingDuration: '1', RecordingChannels: '2', RecordingSource: 'StartCallRecording' };
    const path = `/api/v1/rest/conversations/${conversationId}/recording`;

    // Refused, nothing fetched or stored: a forged signature (403), another call's CallSid (404), a recording not completed.
    expect((await carrier(callback, ready, 'tok_someone_else')).status).toBe(403);
    expect((await carrier(callback, { ...ready, CallSid: callSid() })).body).toMatchObject({ status: 404, code: 'not_found' });
    expect((await carrier(callback, { ...ready, RecordingStatus: 'absent' })).status).toBe(204);
    expect(fetched).toHaveLength(0);
    expect((await api.get(path)).status).toBe(404);

    const stored = await carrier(callback, ready);
    expect(stored.status, stored.text).toBe(204);
    expect(fetched).toEqual([{
      path: `/2010-04-01/Accounts/${ACCOUNT_SID}/Recordings/${recordingSid}.wav`,
      auth: `Basic ${Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString('base64')}`,
    }]);
    // The carrier's copy goes once ours is kept (the sandbox carrier records the request).
    const ops = await listCarrierOperations(svc.sql, { sid: recordingSid });
    expect(ops.map((o) => o.operation)).toEqual(['delete_recording']);
    const download = await fetch(svc.url + path, { headers: { authorization: `Bearer ${token}` } });
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('audio/wav');
    expect(Buffer.from(await download.arrayBuffer()).equals(RECORDING)).toBe(true);
    const detail = await api.get(`/api/v1/rest/conversations/${conversationId}`);
    expect(detail.body.has_recording).toBe(true);
    const blob = join(dataDir, 'blobs', 'recordings', orgId, agent.id, `${conversationId}.wav`);
    expect((await stat(blob)).size).toBe(RECORDING.length);

    // A URL the outbound guard refuses (loopback, not in OUTBOUND_ALLOWED_HOSTS) is 502 and keeps the recording there was.
    const refused = await carrier(callback, { ...ready, RecordingUrl: 'http://127.0.0.2/Recordings/RE1' });
    expect(refused.status).toBe(502);
    expect(refused.body).toMatchObject({ code: 'recording_download_failed', status: 502 });
    expect((await stat(blob)).size).toBe(RECORDING.length);

    // Another organization sees nothing; the conversation's delete takes the audio with it.
    const other = await orgWithAgent(svc, 'Elsewhere');
    expect((await other.api.get(path)).status).toBe(404);
    expect((await api.delete(`/api/v1/rest/conversations/${conversationId}`)).status).toBe(204);
    expect((await api.get(path)).status).toBe(404);
    await expect(stat(blob)).rejects.toMatchObject({ code: 'ENOENT' });
    // A late callback for the deleted conversation stores nothing.
    expect((await carrier(callback, ready)).status).toBe(204);
    await expect(stat(blob)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
