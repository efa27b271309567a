import type { Dispatcher } from 'undici';
import { createOutboundAgent, outboundPolicy } from '../net/outbound.ts';
import { undici } from '../net/undici.ts';
import type { TextToSpeech, TtsVoice } from './engines.ts';
import { decodeMulaw } from './mulaw.ts';

/**
 * Text-to-speech by ElevenLabs' streaming API (VOICE_TTS=elevenlabs):
 * `POST <base>/text-to-speech/<voice_id>/stream?output_format=ulaw_8000` with the `xi-api-key`
 * header. `ulaw_8000` is the line's own format, so the audio needs no resampling: the chunks are
 * decoded as they arrive (any byte count). The request goes through the SSRF guard (src/net/); the
 * key is never logged.
 */

const TIMEOUT_MS = 15_000;

export interface ElevenLabsOptions {
  /** The API's origin and prefix, e.g. `https://api.elevenlabs.io/v1`. */
  baseUrl: string;
  apiKey?: string | undefined;
  model: string;
  /** The voice id used when the voice profile's base voice is not in `voices`. */
  voice: string;
  /** A voice profile's base voice (`alloy`, `nova`, …) to an ElevenLabs voice id. */
  voices?: Record<string, string> | undefined;
  dispatcher: Dispatcher;
}

/**
 * The profile's prosody as ElevenLabs' voice settings: pace as `speed` (1 is its normal rate, which
 * espeak-ng's 170 words a minute stands for; ElevenLabs takes 0.7 to 1.2), energy as stability
 * (a calm voice is steadier) and style (an energetic one more expressive).
 */
export function elevenLabsVoiceSettings(voice: TtsVoice): { stability: number; similarity_boost: number; style: number; speed: number } {
  const speed = Math.min(1.2, Math.max(0.7, Math.round((voice.wordsPerMinute / 170) * 100) / 100));
  const stability = voice.energy === 'low' ? 0.75 : voice.energy === 'high' ? 0.3 : 0.5;
  const style = voice.energy === 'high' ? 0.4 : 0;
  return { stability, similarity_boost: 0.75, style, speed };
}

/** `alloy=id1,nova=id2` as a map (VOICE_TTS_ELEVENLABS_VOICES). */
export function parseVoiceMap(text: string | undefined): Record<string, string> {
  const map: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    const [name, id] = pair.split('=').map((p) => p.trim());
    if (name && id) map[name] = id;
  }
  return map;
}

export function createElevenLabsSpeech(opts: ElevenLabsOptions): TextToSpeech {
  const base = opts.baseUrl.replace(/\/+$/, '');
  return {
    name: 'elevenlabs',
    async synthesize(text, voice) {
      const voiceId = (voice.baseVoice && opts.voices?.[voice.baseVoice]) || opts.voice;
      const url = `${base}/text-to-speech/${encodeURIComponent(voiceId)}/stream?output_format=ulaw_8000`;
      const res = await undici().request(url, {
        method: 'POST', dispatcher: opts.dispatcher, signal: AbortSignal.timeout(TIMEOUT_MS),
        headers: { 'content-type': 'application/json', accept: 'audio/basic', ...(opts.apiKey ? { 'xi-api-key': opts.apiKey } : {}) },
        body: JSON.stringify({ text, model_id: opts.model, voice_settings: elevenLabsVoiceSettings(voice) }),
      });
      if (res.statusCode !== 200) {
        await res.body.dump();
        throw new Error(`speech provider answered ${res.statusCode}`);
      }
      // Each chunk decoded as it arrives: μ-law is one byte a sample, so no chunk boundary splits a sample.
      const parts: Int16Array[] = [];
      let length = 0;
      for await (const chunk of res.body) {
        const samples = decodeMulaw(chunk as Buffer);
        parts.push(samples);
        length += samples.length;
      }
      const out = new Int16Array(length);
      let at = 0;
      for (const p of parts) { out.set(p, at); at += p.length; }
      return out;
    },
  };
}

/** ElevenLabs from the settings (VOICE_TTS=elevenlabs). */
export function elevenLabsFromConfig(config: {
  VOICE_TTS_ELEVENLABS_URL: string; VOICE_TTS_API_KEY?: string | undefined; VOICE_TTS_ELEVENLABS_MODEL: string; VOICE_TTS_ELEVENLABS_VOICE: string;
  VOICE_TTS_ELEVENLABS_VOICES?: string | undefined; ALLOW_PRIVATE_NETWORK_TARGETS: boolean; OUTBOUND_ALLOWED_HOSTS?: string | undefined;
}): TextToSpeech {
  return createElevenLabsSpeech({
    baseUrl: config.VOICE_TTS_ELEVENLABS_URL, apiKey: config.VOICE_TTS_API_KEY, model: config.VOICE_TTS_ELEVENLABS_MODEL,
    voice: config.VOICE_TTS_ELEVENLABS_VOICE, voices: parseVoiceMap(config.VOICE_TTS_ELEVENLABS_VOICES),
    dispatcher: createOutboundAgent(outboundPolicy(config), { connections: 32 }),
  });
}
