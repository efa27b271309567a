import { spawn } from 'node:child_process';
import { parseWav, resample } from './audio.ts';
import { SAMPLE_RATE } from './mulaw.ts';

/**
 * The speech engines behind adapters. Offline defaults, from Debian (installed by
 * scripts/ensure-voice-engines.mjs): `pocketsphinx_continuous` with the `pocketsphinx-en-us` model
 * for speech-to-text, `espeak-ng` for text-to-speech. A provider adapter (a streaming STT over
 * WebSocket, an HTTP speech API) implements the same interfaces.
 */

/** One utterance being recognized while it is spoken: audio goes in as it arrives, the text comes out at the end. */
export interface SttStream {
  /** 8 kHz samples of the caller, in order. */
  write(samples: Int16Array): void;
  /** No more audio: the final transcript. */
  finish(): Promise<string>;
  abort(): void;
}

export interface SpeechToText { readonly name: string; open(): SttStream }

/** How the agent's voice sounds: the engine's voice and its prosody (from the voice profile). */
export interface TtsVoice {
  voice: string; wordsPerMinute: number; pitch: number; amplitude: number;
  /** The voice profile's base voice (a provider adapter maps it onto its own voices) and energy (its expressiveness). */
  baseVoice?: string | undefined;
  energy?: 'low' | 'medium' | 'high' | undefined;
}

export interface TextToSpeech { readonly name: string; synthesize(text: string, voice: TtsVoice): Promise<Int16Array> }

export const POCKETSPHINX = process.env.POCKETSPHINX_PATH || 'pocketsphinx_continuous';
export const ESPEAK_NG = process.env.ESPEAK_NG_PATH || 'espeak-ng';

/**
 * Pocketsphinx, fed through stdin as the caller speaks: the model loads and the search runs while
 * the utterance goes on, so only its tail is left to decode at the endpoint. 16 kHz is the model's
 * rate: the 8 kHz line is upsampled.
 */
export function createPocketsphinx(): SpeechToText {
  return {
    name: 'pocketsphinx',
    open() {
      // Node's stdin pipe is a socket, which /dev/stdin cannot open: `cat` turns it into a pipe.
      const child = spawn('sh', ['-c', 'cat | exec "$0" -infile /dev/stdin -logfn /dev/null', POCKETSPHINX], { stdio: ['pipe', 'pipe', 'ignore'] });
      let out = '';
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => { out += chunk; });
      child.stdin.on('error', () => {});
      const done = new Promise<string>((resolve) => {
        child.on('close', () => resolve(out.split('\n').map((l) => l.trim()).filter(Boolean).join(' ')));
        child.on('error', () => resolve(''));
      });
      return {
        write(samples) {
          const up = resample(samples, SAMPLE_RATE, 16000);
          if (!child.stdin.destroyed) child.stdin.write(Buffer.from(up.buffer, up.byteOffset, up.byteLength));
        },
        finish() {
          child.stdin.end();
          return done;
        },
        // Its input closed, the recognizer ends on its own; its words are not read.
        abort() { child.stdin.destroy(); },
      };
    },
  };
}

/** espeak-ng's WAV on stdout, resampled to the line's 8 kHz. */
export function createEspeak(): TextToSpeech {
  return {
    name: 'espeak-ng',
    synthesize(text, voice) {
      return new Promise((resolve, reject) => {
        const child = spawn(ESPEAK_NG, ['--stdout', '-v', voice.voice, '-s', String(voice.wordsPerMinute), '-p', String(voice.pitch), '-a', String(voice.amplitude), '--', text],
          { stdio: ['ignore', 'pipe', 'ignore'] });
        const chunks: Buffer[] = [];
        child.stdout.on('data', (c: Buffer) => chunks.push(c));
        child.on('error', reject);
        child.on('close', (code) => {
          if (code !== 0) return reject(new Error(`espeak-ng exited with ${code}`));
          try {
            const wav = parseWav(Buffer.concat(chunks));
            resolve(resample(wav.samples, wav.rate, SAMPLE_RATE));
          } catch (err) {
            reject(err as Error);
          }
        });
      });
    },
  };
}

/**
 * The espeak-ng voice of a call: the conversation's language, with the voice profile's pace
 * (words a minute), energy (pitch and loudness) and formality (a little slower when formal).
 */
export function ttsVoiceOf(language: string | null, profile: { pace?: string | null; energy?: string | null; formality?: string | null; base_voice?: string | null } | null): TtsVoice {
  const lang = (language ?? 'en').toLowerCase();
  const voice = lang.startsWith('fr') ? 'fr' : lang.startsWith('es') ? 'es' : lang.startsWith('de') ? 'de' : 'en-us';
  let wordsPerMinute = profile?.pace === 'slow' ? 140 : profile?.pace === 'fast' ? 200 : 170;
  if (profile?.formality === 'formal') wordsPerMinute -= 10;
  const pitch = profile?.energy === 'low' ? 35 : profile?.energy === 'high' ? 65 : 50;
  const amplitude = profile?.energy === 'low' ? 80 : profile?.energy === 'high' ? 120 : 100;
  const energy = profile?.energy === 'low' || profile?.energy === 'high' ? profile.energy : 'medium';
  return { voice, wordsPerMinute, pitch, amplitude, energy, ...(profile?.base_voice ? { baseVoice: profile.base_voice } : {}) };
}
