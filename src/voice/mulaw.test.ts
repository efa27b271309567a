import { describe, expect, it } from 'vitest';
import { decodeMulaw, decodeSample, encodeMulaw, encodeSample, FRAME_SAMPLES, MULAW_SILENCE, MulawFramer } from './mulaw.ts';
import { parseWav, resample, sentencesOf, wavFile } from './audio.ts';
import { SentenceQueue } from './sentence-queue.ts';

/** 16-bit little-endian bytes of `samples`. */
const pcmBytes = (samples: number[]) => {
  const out = Buffer.alloc(samples.length * 2);
  samples.forEach((s, i) => out.writeInt16LE(s, i * 2));
  return out;
};

describe('μ-law', () => {
  it('encodes as G.711 does: silence is 0xFF, the extremes 0x80 and 0x00, and decoding is within the step of its segment', () => {
    expect(encodeSample(0)).toBe(0xff);
    expect(encodeSample(32767)).toBe(0x80);
    expect(encodeSample(-32768)).toBe(0x00);
    for (const s of [-30000, -1000, -100, -1, 1, 50, 123, 999, 4000, 12345, 32000]) {
      const back = decodeSample(encodeSample(s));
      if (back !== 0) expect(Math.sign(back)).toBe(Math.sign(s));
      expect(Math.abs(back - s)).toBeLessThanOrEqual(Math.max(8, Math.abs(s) / 16));
    }
    // Every byte decodes and encodes back to itself (but 0x7F, negative zero, which encodes as 0xFF).
    for (let b = 0; b < 256; b++) if (b !== 0x7f) expect(encodeSample(decodeSample(b))).toBe(b);
  });

  it('frames hold at odd lengths: chunks of any byte count give whole 160-byte frames, the same as one chunk', () => {
    const samples = Array.from({ length: 1000 }, (_, i) => Math.round(Math.sin(i / 7) * 12000));
    const bytes = pcmBytes(samples);
    const whole = new MulawFramer();
    const expected = [...whole.push(bytes), ...whole.flush()];
    expect(expected).toHaveLength(Math.ceil(1000 / FRAME_SAMPLES));
    for (const size of [1, 3, 7, 159, 161, 333]) {
      const framer = new MulawFramer();
      const frames: Buffer[] = [];
      for (let at = 0; at < bytes.length; at += size) frames.push(...framer.push(bytes.subarray(at, at + size)));
      frames.push(...framer.flush());
      expect(frames.every((f) => f.length === FRAME_SAMPLES)).toBe(true);
      expect(Buffer.concat(frames).equals(Buffer.concat(expected))).toBe(true);
    }
    // The last frame is padded with silence, and the samples come back in order.
    const last = expected.at(-1)!;
    expect(last.subarray(1000 % FRAME_SAMPLES).every((b) => b === MULAW_SILENCE)).toBe(true);
    expect(Array.from(decodeMulaw(Buffer.concat(expected)).subarray(0, 1000))).toEqual(Array.from(decodeMulaw(encodeMulaw(Int16Array.from(samples)))));
  });

  it('a dangling half sample is dropped at the end, and an empty push gives nothing', () => {
    const framer = new MulawFramer();
    expect(framer.push(Buffer.alloc(0))).toEqual([]);
    expect(framer.push(Buffer.from([0x10]))).toEqual([]);
    expect(framer.flush()).toEqual([]);
  });
});

describe('audio helpers', () => {
  it('writes and reads a WAV, and a streamed WAV without a real length', () => {
    const samples = Int16Array.from([0, 1, -1, 32767, -32768, 1234]);
    const wav = wavFile(samples, 8000);
    expect(parseWav(wav)).toEqual({ samples, rate: 8000 });
    const streamed = Buffer.from(wav);
    streamed.writeUInt32LE(0x7fffffff, 40);
    expect(parseWav(streamed).samples).toEqual(samples);
  });

  it('resamples by the ratio of the rates', () => {
    expect(resample(new Int16Array(22050), 22050, 8000)).toHaveLength(8000);
    expect(Array.from(resample(Int16Array.from([0, 100]), 8000, 16000))).toEqual([0, 50, 100, 100]);
  });

  it('cuts a reply into sentences', () => {
    expect(sentencesOf('Hello, you reached Acme. How can I help? We open at 9!')).toEqual(['Hello, you reached Acme.', 'How can I help?', 'We open at 9!']);
    expect(sentencesOf('No full stop')).toEqual(['No full stop']);
  });
});

describe('SentenceQueue', () => {
  it('hands over each sentence once complete, whatever the pieces, and the rest at the end', async () => {
    const q = new SentenceQueue();
    const out: string[] = [];
    const reading = (async () => { for await (const s of q) out.push(s); })();
    for (const piece of ['We open', ' at 9.', '30 on www.acme.com', '. Anything', ' else?', ' Call us\nany', 'time']) q.push(piece);
    q.end();
    await reading;
    expect(out).toEqual(['We open at 9.30 on www.acme.com.', 'Anything else?', 'Call us', 'anytime']);
  });
});
