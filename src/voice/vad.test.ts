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
