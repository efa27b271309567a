import { describe, expect, it } from 'vitest';
import { createVad, endpointMs } from './vad.ts';

const frame = (level: number) => Int16Array.from({ length: 160 }, (_, i) => (i % 2 ? level : -level));

describe('voice activity detection', () => {
  it('starts after three loud frames and ends after the responsiveness\' silence, counted in frames', () => {
    for (const [responsiveness, ms] of [['quick', 300], ['normal', 500], ['patient', 900]] as const) {
      expect(endpointMs(responsiveness)).toBe(ms);
      const vad = createVad({ endpointMs: ms });
      for (let i = 0; i < 10; i++) expect(vad.push(frame(0))).toBeNull();
      expect(vad.push(frame(3000))).toBeNull();
      expect(vad.push(frame(3000))).toBeNull();
      expect(vad.push(frame(3000))).toMatchObject({ type: 'speech_start' });
      for (let i = 0; i < 20; i++) expect(vad.push(frame(3000))).toBeNull();
      const quiet = ms / 20;
      for (let i = 1; i < quiet; i++) expect(vad.push(frame(0))).toBeNull();
      const end = vad.push(frame(0));
      expect(end).toMatchObject({ type: 'speech_end' });
      expect(vad.speaking).toBe(false);
    }
  });

  it('a click is not speech', () => {
    const vad = createVad({ endpointMs: 500 });
    expect([frame(0), frame(5000), frame(5000), frame(0), frame(0)].map((f) => vad.push(f))).toEqual([null, null, null, null, null]);
  });
});

describe('eager onset, while the caller would talk over the agent', () => {
  /** A frame of `loud` quarters (5 ms each, level 3000) and silent ones, e.g. [0, 0, 1, 1]. */
  const quarters = (loud: number[]) => Int16Array.from({ length: 160 }, (_, i) => (loud[Math.floor(i / 40)] ? (i % 2 ? 3000 : -3000) : 0));
  /** A frame silent but for one impulse of `samples` samples at full scale (a click) from sample `at`. */
  const click = (at: number, samples = 8) => Int16Array.from({ length: 160 }, (_, i) => (i >= at && i < at + samples ? 30000 : 0));
  const settled = () => {
    const vad = createVad({ endpointMs: 500 });
    for (let i = 0; i < 10; i++) vad.push(frame(0));
    return vad;
  };
  const events = (frames: Int16Array[], eager: boolean) => {
    const vad = settled();
    return frames.map((f) => vad.push(f, { eager })?.type ?? null);
  };

  it('confirms speech on the second frame of a word, where the frame rule waits for the third', () => {
    const word = [quarters([0, 0, 1, 1]), frame(3000), frame(3000), frame(3000)];
    expect(events(word, true)).toEqual([null, 'speech_start', null, null]);
    expect(events(word, false)).toEqual([null, null, 'speech_start', null]);
  });

  it('wants 30 ms of sound going on without a 5 ms gap', () => {
    // 25 ms: not yet (the third frame confirms it, by either rule).
    expect(events([quarters([0, 0, 0, 1]), frame(3000), frame(3000)], true)).toEqual([null, null, 'speech_start']);
    // 35 ms with a 5 ms gap, or 30 ms that has already stopped.
    expect(events([frame(3000), quarters([1, 0, 1, 1]), frame(0)], true)).toEqual([null, null, null]);
    expect(events([quarters([0, 1, 1, 1]), quarters([1, 1, 1, 0]), frame(0)], true)).toEqual([null, null, null]);
  });

  it('a single loud frame is not speech', () => {
    expect(events([frame(0), frame(8000), frame(0), frame(0)], true)).toEqual([null, null, null, null]);
  });

  it('clicks are not speech, however loud, even in frames in a row', () => {
    // Each click alone makes its frame loud (RMS above the level speech needs), and none lasts 30 ms (a third loud frame
    // in a row would start speech by the frame rule, as without `eager`).
    expect(events([click(150), click(0), click(80), frame(0)], true).slice(0, 2)).toEqual([null, null]);
    expect(events([click(40), click(40), frame(0), frame(0)], true)).toEqual([null, null, null, null]);
  });

  it('the utterance it starts keeps its first sound and ends at the endpoint as before', () => {
    const vad = settled();
    expect(vad.push(quarters([0, 0, 1, 1]), { eager: true })).toBeNull();
    const start = vad.push(frame(3000), { eager: true });
    expect(start).toMatchObject({ type: 'speech_start' });
    // The frames before, the onset's half-loud frame last but one (the recognizer hears the word's start).
    const preroll = start?.type === 'speech_start' ? start.preroll : [];
    expect([preroll.at(-3)?.[159], preroll.at(-2)?.[0], preroll.at(-2)?.[159], preroll.at(-1)?.[0]]).toEqual([0, 0, 3000, -3000]);
    for (let i = 1; i < 25; i++) expect(vad.push(frame(0))).toBeNull();
    expect(vad.push(frame(0))).toMatchObject({ type: 'speech_end' });
  });
});
