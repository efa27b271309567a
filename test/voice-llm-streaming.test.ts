import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { eventually, startTestService, type TestService } from './helpers.ts';
import { orgWithAgent } from './support/orgs.ts';
import { startChatCompletionsServer, type ChatCompletionsServer } from './fixtures/chat-completions-server.ts';
import { placeStreamedCall, type StreamedCall } from '../src/voice/sandbox-caller.ts';

// A streamed call (issue 44) with the LLM runtime against the local OpenAI-compatible stand-in that streams:
// the reply is spoken sentence by sentence while the model writes it.
const AUTH_TOKEN = `tok_${randomBytes(12).toString('hex')}`;
let svc: TestService;
let llm: ChatCompletionsServer;
const calls: StreamedCall[] = [];

beforeAll(async () => {
  // Anything but the turn's streamed reply (the end's evaluation) gets a short answer.
  llm = await startChatCompletionsServer({ fallback: () => ({ content: '{}' }) });
  svc = await startTestService({
    CONVERSATION_INACTIVITY_SECONDS: 3600, SENTENCE_ENCODER: 'off', ALLOW_PRIVATE_NETWORK_TARGETS: true, LLM_BASE_URL: llm.baseUrl, LLM_MODEL: 'test-model',
  }, { env: { TWILIO_AUTH_TOKEN: AUTH_TOKEN } });
});
afterAll(async () => {
  for (const call of calls) call.drop();
  await svc?.stop();
  await llm?.close();
});

const FIRST = 'We open at nine every morning.';
const SECOND = 'We close at five in the evening.';

describe('streamed calls with the LLM runtime', { timeout: 120_000 }, () => {
  it('speaks the reply\'s first sentence while the model is still writing the rest; the transcript and timings keep the whole turn', async () => {
    const { api, agent } = await orgWithAgent(svc, 'Acme voice desk');
    expect((await api.patch(`/api/v1/rest/agents/${agent.id}`, { greeting: 'Acme, hello.', phone_settings: { voice_mode: 'stream' } })).status).toBe(200);
    const bought = await api.post('/api/v1/rest/phone-numbers', { widget_id: agent.id, force: true });
    expect(bought.status, bought.text).toBe(201);

    // The model writes the first sentence, then waits until the test lets it finish.
    let release!: () => void;
    const hold = new Promise<void>((resolve) => { release = resolve; });
    llm.enqueueFor((r) => r.body.stream === true, { content: `${FIRST} ${SECOND}`, pieces: ['We open at ', 'nine every morning. ', 'We close at five ', 'in the evening.'], holdAfter: 2, hold });

    const caller = await placeStreamedCall({ baseUrl: svc.url, signingToken: AUTH_TOKEN, to: (bought.body as { phone_number: string }).phone_number });
    calls.push(caller);
    await caller.nextReply();
    const firstAudio = caller.nextAudio();
    await caller.say('What are your opening hours?');
    // The agent's audio comes while the model's reply is held after its first sentence: it was not waited for.
    await firstAudio;
    expect(llm.requests.filter((r) => r.body.stream === true)).toHaveLength(1);
    const heardBefore = caller.agentFrames.length;
    release();

    const conversation = await eventually(async () => {
      const list = (await api.get(`/api/v1/rest/conversations?widget_id=${agent.id}`)).body.data as { id: string }[];
      const detail = list[0] ? (await api.get(`/api/v1/rest/conversations/${list[0].id}`)).body : null;
      return detail?.voice_turns?.length === 1 ? detail : null;
    });
    // The rest of the reply was spoken after the release; the transcript keeps the reply as spoken.
    expect(caller.agentFrames.length).toBeGreaterThan(heardBefore);
    const agentLines = conversation.messages.filter((m: any) => m.role === 'agent').map((m: any) => m.text);
    expect(agentLines).toEqual(['Acme, hello.', `${FIRST} ${SECOND}`]);
    const [turn] = conversation.voice_turns;
    expect(turn.interrupted).toBe(false);
    // The reply's time is its first token, before the first audio byte.
    expect(Date.parse(turn.reply_at)).toBeLessThanOrEqual(Date.parse(turn.first_audio_at));
    await caller.hangUp();
  });
});
