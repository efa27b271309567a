import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOutboundAgent } from '../src/net/outbound.ts';
import { createOpenAiSpeech, openAiSpeechFromConfig } from '../src/voice/openai-speech.ts';
import { ttsVoiceOf } from '../src/voice/engines.ts';
import { WebSocketServer } from 'ws';
import { createDeepgram, deepgramFromConfig } from '../src/voice/deepgram.ts';
import { createElevenLabsSpeech, elevenLabsVoiceSettings, parseVoiceMap } from '../src/voice/elevenlabs.ts';
import { textToSpeechOf } from '../src/voice/configured-engines.ts';
import { loadConfig } from '../src/config.ts';

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

describe('ElevenLabs streaming text-to-speech', () => {
  /** A local server speaking ElevenLabs' stream endpoint: it checks the key and the body, and streams μ-law in uneven chunks. */
  async function elevenLabsServer() {
    const seen: { method: string; path: string; query: Record<string, string>; key: string | undefined; body: any }[] = [];
    const srv = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => { raw += c.toString(); });
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'http://x');
        const body = JSON.parse(raw);
        seen.push({ method: req.method ?? '', path: url.pathname, query: Object.fromEntries(url.searchParams), key: req.headers['xi-api-key'] as string | undefined, body });
        if (req.headers['xi-api-key'] !== 'xi-test') {
          res.writeHead(401, { 'content-type': 'application/json' }).end('{"detail":{"status":"invalid_api_key"}}');
          return;
        }
        // 0.1 s of μ-law per word (a loud byte and its negative, alternating), sent in chunks of 77 bytes.
        const audio = Buffer.alloc(800 * String(body.text).split(' ').length);
        for (let i = 0; i < audio.length; i++) audio[i] = i % 2 ? 0x10 : 0x90;
        res.writeHead(200, { 'content-type': 'audio/basic', 'transfer-encoding': 'chunked' });
        for (let at = 0; at < audio.length; at += 77) res.write(audio.subarray(at, at + 77));
        res.end();
      });
    });
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
    return { seen, url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}/v1`, close: () => new Promise<void>((r) => srv.close(() => r())) };
  }

  it('posts to the voice\'s stream with xi-api-key, ulaw_8000 and the profile\'s prosody; the μ-law chunks become 8 kHz samples', async () => {
    const el = await elevenLabsServer();
    try {
      const tts = createElevenLabsSpeech({
        baseUrl: el.url, apiKey: 'xi-test', model: 'eleven_flash_v2_5', voice: 'defaultVoice', voices: parseVoiceMap('nova=novaVoiceId, echo=echoVoiceId'),
        dispatcher: createOutboundAgent({ allowPrivate: true }),
      });
      const samples = await tts.synthesize('Hello there friend', ttsVoiceOf('en', { pace: 'fast', energy: 'high', base_voice: 'nova' }));
      // No resampling: 800 μ-law bytes a word are 800 samples.
      expect(samples.length).toBe(2400);
      expect(Math.max(...samples)).toBeGreaterThan(7000);
      expect(Math.min(...samples)).toBeLessThan(-7000);
      expect(el.seen.at(-1)).toEqual({
        method: 'POST', path: '/v1/text-to-speech/novaVoiceId/stream', query: { output_format: 'ulaw_8000' }, key: 'xi-test',
        body: { text: 'Hello there friend', model_id: 'eleven_flash_v2_5', voice_settings: { stability: 0.3, similarity_boost: 0.75, style: 0.4, speed: 1.18 } },
      });
      // A base voice without a mapping speaks with the default voice; a slow, calm profile is steadier and slower (within ElevenLabs' 0.7 to 1.2).
      await tts.synthesize('Hi', ttsVoiceOf('en', { pace: 'slow', energy: 'low', base_voice: 'alloy' }));
      expect(el.seen.at(-1)).toMatchObject({ path: '/v1/text-to-speech/defaultVoice/stream', body: { voice_settings: { stability: 0.75, style: 0, speed: 0.82 } } });
      expect(elevenLabsVoiceSettings({ ...ttsVoiceOf('en', null), wordsPerMinute: 400 }).speed).toBe(1.2);

      // A refused key is an error (the key itself in no message), not silence.
      const wrong = createElevenLabsSpeech({ baseUrl: el.url, apiKey: 'xi-wrong', model: 'm', voice: 'v', dispatcher: createOutboundAgent({ allowPrivate: true }) });
      const err = await wrong.synthesize('Hello', ttsVoiceOf('en', null)).catch((e: Error) => e);
      expect(String((err as Error).message)).toBe('speech provider answered 401');
      expect(JSON.stringify(err)).not.toContain('xi-wrong');
    } finally {
      await el.close();
    }
  });

  it('is chosen by VOICE_TTS=elevenlabs, through the SSRF guard: a private address is refused unless allowed', async () => {
    const el = await elevenLabsServer();
    try {
      const config = loadConfig({
        VOICE_TTS: 'elevenlabs', VOICE_TTS_API_KEY: 'xi-test', VOICE_TTS_ELEVENLABS_URL: el.url, VOICE_TTS_ELEVENLABS_VOICES: 'onyx=onyxId',
      });
      const tts = textToSpeechOf(config);
      expect(tts.name).toBe('elevenlabs');
      await expect(tts.synthesize('Hello', ttsVoiceOf('en', null))).rejects.toThrow();
      expect(el.seen).toHaveLength(0);
      const allowed = textToSpeechOf({ ...config, ALLOW_PRIVATE_NETWORK_TARGETS: true });
      expect((await allowed.synthesize('Hello', ttsVoiceOf('en', { base_voice: 'onyx' }))).length).toBe(800);
      expect(el.seen[0]).toMatchObject({ path: '/v1/text-to-speech/onyxId/stream', key: 'xi-test', body: { model_id: 'eleven_flash_v2_5' } });
      expect(textToSpeechOf({ ...config, VOICE_TTS: 'espeak-ng' }).name).toBe('espeak-ng');
    } finally {
      await el.close();
    }
  });
});

describe('the offline recognizer\'s decoders setting', () => {
  it('is checked at start: `cores` or a number of threads, `0` for a process per decoder; anything else stops the process', () => {
    expect(loadConfig({}).VOICE_DECODER_THREADS).toBe('cores');
    expect(loadConfig({ VOICE_DECODER_THREADS: '0' }).VOICE_DECODER_THREADS).toBe('0');
    expect(loadConfig({ VOICE_DECODER_THREADS: '4' }).VOICE_DECODER_THREADS).toBe('4');
    // Empty is unset, as for every setting.
    expect(loadConfig({ VOICE_DECODER_THREADS: '' }).VOICE_DECODER_THREADS).toBe('cores');
    // Read as 0 before, silently: a process per decoder where the host was meant.
    for (const bad of ['four', '-2', '2.5']) expect(() => loadConfig({ VOICE_DECODER_THREADS: bad })).toThrow(/VOICE_DECODER_THREADS/);
  });
});
