import type { Dispatcher } from 'undici';
import { createOutboundAgent, outboundPolicy } from '../net/outbound.ts';
import { undici } from '../net/undici.ts';
import { resample } from './audio.ts';
import type { TextToSpeech } from './engines.ts';
import { SAMPLE_RATE } from './mulaw.ts';

/**
 * Text-to-speech by an OpenAI-compatible `POST /v1/audio/speech` (VOICE_TTS=openai): raw PCM
 * (`response_format: pcm`, 24 kHz 16-bit little-endian mono), resampled to the line's 8 kHz. The
 * request goes through the SSRF guard (src/net/) like every outbound one; the key is never logged.
 */

/** The rate of `response_format: pcm`. */
const PCM_RATE = 24_000;
const TIMEOUT_MS = 15_000;

export interface OpenAiSpeechOptions {
  /** The API's origin and prefix, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  apiKey?: string | undefined;
  model: string;
  /** The provider's voice name (its voices are not espeak-ng's). */
  voice: string;
  dispatcher: Dispatcher;
}

export function createOpenAiSpeech(opts: OpenAiSpeechOptions): TextToSpeech {
  const url = `${opts.baseUrl.replace(/\/+$/, '')}/audio/speech`;
  return {
    name: 'openai',
    async synthesize(text, voice) {
      const res = await undici().request(url, {
        method: 'POST', dispatcher: opts.dispatcher, signal: AbortSignal.timeout(TIMEOUT_MS),
        headers: { 'content-type': 'application/json', ...(opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {}) },
        // The profile's pace as the provider's speed (1 is its normal rate, which espeak-ng's 170 words a minute stands for).
        body: JSON.stringify({ model: opts.model, input: text, voice: opts.voice, response_format: 'pcm', speed: Math.round((voice.wordsPerMinute / 170) * 100) / 100 }),
      });
      const bytes = Buffer.from(await res.body.arrayBuffer());
      if (res.statusCode !== 200) throw new Error(`speech provider answered ${res.statusCode}`);
      const samples = new Int16Array(Math.floor(bytes.length / 2));
      for (let i = 0; i < samples.length; i++) samples[i] = bytes.readInt16LE(i * 2);
      return resample(samples, PCM_RATE, SAMPLE_RATE);
    },
  };
}

/** The configured text-to-speech: espeak-ng, or the OpenAI-compatible provider with VOICE_TTS=openai. */
export function openAiSpeechFromConfig(config: {
  VOICE_TTS_BASE_URL: string; VOICE_TTS_API_KEY?: string | undefined; VOICE_TTS_MODEL: string; VOICE_TTS_VOICE: string;
  ALLOW_PRIVATE_NETWORK_TARGETS: boolean; OUTBOUND_ALLOWED_HOSTS?: string | undefined;
}): TextToSpeech {
  return createOpenAiSpeech({
    baseUrl: config.VOICE_TTS_BASE_URL, apiKey: config.VOICE_TTS_API_KEY, model: config.VOICE_TTS_MODEL, voice: config.VOICE_TTS_VOICE,
    dispatcher: createOutboundAgent(outboundPolicy(config), { connections: 32 }),
  });
}
