import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOutboundAgent } from '../src/net/outbound.ts';
import { createOpenAiSpeech, openAiSpeechFromConfig } from '../src/voice/openai-speech.ts';
import { ttsVoiceOf } from '../src/voice/engines.ts';

// The OpenAI-compatible speech adapter against a local server speaking `POST /v1/audio/speech` (issue 44).
let server: Server;
let base: string;
const requests: { path: string; auth: string | undefined; body: Record<string, unknown> }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => { raw += c.toString(); });
    req.on('end', () => {
      const body = JSON.parse(raw) as Record<string, unknown>;
      requests.push({ path: req.url ?? '', auth: req.headers.authorization, body });
      if (body.input === 'fail') {
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"boom"}}');
        return;
      }
      // 24 kHz 16-bit PCM: a quarter second of a 440 Hz tone per word.
      const samples = 6000 * String(body.input).split(' ').length;
      const pcm = Buffer.alloc(samples * 2);
      for (let i = 0; i < samples; i++) pcm.writeInt16LE(Math.round(Math.sin((2 * Math.PI * 440 * i) / 24000) * 8000), i * 2);
      res.writeHead(200, { 'content-type': 'audio/pcm' }).end(pcm);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('OpenAI-compatible text-to-speech', () => {
  it('posts the model, voice, text, raw PCM and the profile\'s pace as speed with the key; answers 8 kHz samples', async () => {
    const tts = createOpenAiSpeech({ baseUrl: base, apiKey: 'sk-test', model: 'tts-test', voice: 'alloy', dispatcher: createOutboundAgent({ allowPrivate: true }) });
    const samples = await tts.synthesize('Hello there friend', ttsVoiceOf('en', { pace: 'fast' }));
    expect(samples.length).toBe(3 * 2000);
    expect(Math.max(...samples)).toBeGreaterThan(7000);
    expect(requests.at(-1)).toEqual({
      path: '/v1/audio/speech', auth: 'Bearer sk-test',
      body: { model: 'tts-test', input: 'Hello there friend', voice: 'alloy', response_format: 'pcm', speed: 1.18 },
    });
  });

  it('a provider error is an error, not silence', async () => {
    const tts = createOpenAiSpeech({ baseUrl: base, model: 'tts-test', voice: 'alloy', dispatcher: createOutboundAgent({ allowPrivate: true }) });
    await expect(tts.synthesize('fail', ttsVoiceOf('en', null))).rejects.toThrow('speech provider answered 500');
  });

  it('goes through the SSRF guard: a private address is refused unless allowed', async () => {
    const config = { VOICE_TTS_BASE_URL: base, VOICE_TTS_MODEL: 'tts-test', VOICE_TTS_VOICE: 'alloy', ALLOW_PRIVATE_NETWORK_TARGETS: false };
    const count = requests.length;
    await expect(openAiSpeechFromConfig(config).synthesize('Hello', ttsVoiceOf('en', null))).rejects.toThrow();
    expect(requests.length).toBe(count);
    expect((await openAiSpeechFromConfig({ ...config, ALLOW_PRIVATE_NETWORK_TARGETS: true }).synthesize('Hello', ttsVoiceOf('en', null))).length).toBe(2000);
  });
});
