import { rms } from './audio.ts';

/**
 * Voice activity detection and endpointing on 20 ms frames, counted in audio time (frames), never
 * the wall clock: speech starts after a few loud frames in a row (sooner, `eager`, while the caller
 * would interrupt the agent), and ends (the endpoint) after the agent's `responsiveness` worth of silence.
 */

export type Responsiveness = 'patient' | 'normal' | 'quick';

/** Silence that ends the caller's turn, by `responsiveness`. */
export const ENDPOINT_MS: Record<Responsiveness, number> = { quick: 300, normal: 500, patient: 900 };
/** Loud frames in a row that start speech (60 ms): a click or a breath is not a turn. */
const START_FRAMES = 3;
/** Below this level a frame is silence whatever the noise floor (phone line hiss). */
const MIN_LEVEL = 250;
const FRAME_MS = 20;
/** A frame's quarters (5 ms, 40 samples at 8 kHz): the eager onset measures unbroken sound at this step. */
const QUARTERS = 4;
/**
 * Unbroken loud quarters that start speech while the caller would talk over the agent (30 ms; bench:voice's fourth
 * pass): a barge-in is confirmed on the second frame of a word, not the third. Loud for 30 ms without a 5 ms gap is
 * more than one frame can hold, so a single loud frame, a click (an impulse lights a quarter or two) or two clicks a
 * frame apart never start speech; the three-frame rule still applies beside it (a soft onset that flickers).
 */
export const EAGER_QUARTERS = 6;
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
  /** Loud quarters without a gap up to the latest sample, while no speech goes on. */
  let unbroken = 0;
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
    /**
     * One inbound frame; `eager` (the agent is speaking and may be interrupted) also starts speech after
     * EAGER_QUARTERS of unbroken sound, which the frame rule would confirm a frame later.
     */
    push(frame: Int16Array, opts: { eager?: boolean } = {}): VadEvent | null {
      const level = rms(frame);
      const threshold = Math.max(MIN_LEVEL, noiseFloor * 3);
      const isSpeech = level > threshold;
      if (!speaking) {
        // The floor follows the quiet frames slowly, so steady noise does not read as speech.
        if (!isSpeech) noiseFloor = noiseFloor * 0.95 + level * 0.05;
        utterance.push(frame);
        if (utterance.length > START_FRAMES + 5) utterance.shift();
        loud = isSpeech ? loud + 1 : 0;
        unbroken = unbrokenAfter(unbroken, frame, threshold);
        if (loud >= START_FRAMES || (opts.eager && unbroken >= EAGER_QUARTERS)) {
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
      unbroken = 0;
      const frames = utterance;
      utterance = [];
      return { type: 'speech_end', frames };
    },
  };
}

/** `run` loud quarters before `frame`, carried through it: the unbroken loud quarters at its end. */
function unbrokenAfter(run: number, frame: Int16Array, threshold: number): number {
  const size = Math.floor(frame.length / QUARTERS);
  for (let q = 0; q < QUARTERS; q++) run = size && rms(frame.subarray(q * size, (q + 1) * size)) > threshold ? run + 1 : 0;
  return run;
}
