import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOutboundAgent } from '../src/net/outbound.ts';
import { createOpenAiSpeech, openAiSpeechFromConfig } from '../src/voice/openai-speech.ts';
import { ttsVoiceOf } from '../src/voice/engines.ts';
import { WebSocketServer } from 'ws';
import { createDeepgram, deepgramFromConfig } from '../src/voice/deepgram.ts';

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

describe('Deepgram live speech-to-text', () => {
  it('streams linear16 at 8 kHz with the key and the query Deepgram expects, and the final results make the transcript', async () => {
    const seen: { url: string; auth: string | undefined; bytes: number; closeStream: boolean }[] = [];
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    wss.on('connection', (ws, req) => {
      const call = { url: req.url ?? '', auth: req.headers.authorization, bytes: 0, closeStream: false };
      seen.push(call);
      ws.on('message', (data, isBinary) => {
        if (isBinary) {
          call.bytes += (data as Buffer).length;
          // One final result per 3200 bytes (0.2 s), and an interim one that must not count.
          if (call.bytes % 3200 === 0) {
            ws.send(JSON.stringify({ type: 'Results', is_final: false, channel: { alternatives: [{ transcript: 'interim' }] } }));
            ws.send(JSON.stringify({ type: 'Results', is_final: true, channel: { alternatives: [{ transcript: `part${call.bytes / 3200}` }] } }));
          }
          return;
        }
        if (JSON.parse(data.toString()).type === 'CloseStream') {
          call.closeStream = true;
          ws.send(JSON.stringify({ type: 'Results', is_final: true, channel: { alternatives: [{ transcript: 'last words.' }] } }));
          ws.close(1000);
        }
      });
    });
    await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
    const url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/v1/listen`;
    try {
      const stt = createDeepgram({ url, apiKey: 'dg-test', model: 'nova-2-phonecall', policy: { allowPrivate: true } });
      const stream = stt.open();
      for (let i = 0; i < 20; i++) stream.write(new Int16Array(160));
      expect(await stream.finish()).toBe('part1 part2 last words.');
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({ auth: 'Token dg-test', bytes: 6400, closeStream: true });
      const query = new URL(seen[0]!.url, 'ws://x').searchParams;
      expect(Object.fromEntries(query)).toMatchObject({ model: 'nova-2-phonecall', encoding: 'linear16', sample_rate: '8000', channels: '1' });

      // The SSRF guard: a private address is refused unless allowed, and nothing connects.
      const guarded = deepgramFromConfig({ VOICE_STT_URL: url, VOICE_STT_MODEL: 'nova-2-phonecall', ALLOW_PRIVATE_NETWORK_TARGETS: false }).open();
      guarded.write(new Int16Array(160));
      expect(await guarded.finish()).toBe('');
      expect(seen).toHaveLength(1);
    } finally {
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    }
  });
});
