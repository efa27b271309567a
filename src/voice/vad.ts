import { rms } from './audio.ts';

/**
 * Voice activity detection and endpointing on 20 ms frames, counted in audio time (frames), never
 * the wall clock: speech starts after a few loud frames in a row, and ends (the endpoint) after the
 * agent's `responsiveness` worth of silence.
 */

export type Responsiveness = 'patient' | 'normal' | 'quick';

/** Silence that ends the caller's turn, by `responsiveness`. */
export const ENDPOINT_MS: Record<Responsiveness, number> = { quick: 300, normal: 500, patient: 900 };
/** Loud frames in a row that start speech (60 ms): a click or a breath is not a turn. */
const START_FRAMES = 3;
/** Below this level a frame is silence whatever the noise floor (phone line hiss). */
const MIN_LEVEL = 250;
const FRAME_MS = 20;
/**
 * Silent frames of a pause a call gives its recognizer as they come (100 ms: the end of the last word); the rest of
 * the pause waits, and is decoded only should the caller speak again, so the silence ending an utterance is not decoded.
 */
export const SILENCE_FED = 5;

export type VadEvent = { type: 'speech_start'; preroll: Int16Array[] } | { type: 'speech_end'; frames: Int16Array[] };

export function endpointMs(responsiveness: string | null | undefined): number {
  return ENDPOINT_MS[(responsiveness ?? 'normal') as Responsiveness] ?? ENDPOINT_MS.normal;
}

/** A detector for one call: feed it every inbound frame; it answers the start and the end of each utterance. */
export function createVad(opts: { endpointMs: number }) {
  const silenceToEnd = Math.max(1, Math.round(opts.endpointMs / FRAME_MS));
  let noiseFloor = MIN_LEVEL;
  let loud = 0;
  let quiet = 0;
  let speaking = false;
  // The frames of the utterance, with the few before its start (its first sound).
  let utterance: Int16Array[] = [];
  return {
    get speaking() { return speaking; },
    /** Silent frames in a row within the utterance going on (0 while its words go on, or outside one). */
    get quietFrames() { return speaking ? quiet : 0; },
    /** The frames of the utterance going on, its first sound (the frames before its start) included. */
    get utterance(): readonly Int16Array[] { return speaking ? utterance : []; },
    push(frame: Int16Array): VadEvent | null {
      const level = rms(frame);
      const isSpeech = level > Math.max(MIN_LEVEL, noiseFloor * 3);
      if (!speaking) {
        // The floor follows the quiet frames slowly, so steady noise does not read as speech.
        if (!isSpeech) noiseFloor = noiseFloor * 0.95 + level * 0.05;
        utterance.push(frame);
        if (utterance.length > START_FRAMES + 5) utterance.shift();
        loud = isSpeech ? loud + 1 : 0;
        if (loud >= START_FRAMES) {
          speaking = true;
          quiet = 0;
          return { type: 'speech_start', preroll: [...utterance] };
        }
        return null;
      }
      utterance.push(frame);
      quiet = isSpeech ? 0 : quiet + 1;
      if (quiet < silenceToEnd) return null;
      speaking = false;
      loud = 0;
      const frames = utterance;
      utterance = [];
      return { type: 'speech_end', frames };
    },
  };
}
