/**
 * G.711 μ-law at 8 kHz, the audio of Twilio Media Streams, and its framing: the carrier plays what
 * it is sent in 20 ms frames of 160 bytes, so the agent's audio is cut into whole frames whatever
 * lengths the synthesizer hands over (odd byte counts included).
 */

export const SAMPLE_RATE = 8000;
/** Samples (and μ-law bytes) in one 20 ms frame. */
export const FRAME_SAMPLES = 160;
/** The μ-law byte of silence (a zero sample). */
export const MULAW_SILENCE = 0xff;

const BIAS = 0x84;
const CLIP = 32635;

/** One 16-bit linear sample as a μ-law byte. */
export function encodeSample(sample: number): number {
  let s = Math.max(-32768, Math.min(32767, Math.round(sample)));
  const sign = s < 0 ? 0x80 : 0;
  if (sign) s = -s;
  s = Math.min(s, CLIP) + BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (s & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (s >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

/** One μ-law byte as a 16-bit linear sample. */
export function decodeSample(byte: number): number {
  const u = ~byte & 0xff;
  const exponent = (u >> 4) & 0x07;
  const magnitude = ((((u & 0x0f) << 3) + BIAS) << exponent) - BIAS;
  return u & 0x80 ? -magnitude : magnitude;
}

export function encodeMulaw(samples: Int16Array): Buffer {
  const out = Buffer.alloc(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = encodeSample(samples[i]!);
  return out;
}

export function decodeMulaw(bytes: Uint8Array): Int16Array {
  const out = new Int16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = decodeSample(bytes[i]!);
  return out;
}

/**
 * Cuts 16-bit little-endian PCM arriving in chunks of any length into whole 20 ms μ-law frames: a
 * half sample (an odd chunk) and a partial frame wait for the next chunk; `flush` pads the last
 * frame with silence.
 */
export class MulawFramer {
  private halfSample: number | null = null;
  private pending: number[] = [];

  /** The whole frames that `pcm` completes. */
  push(pcm: Uint8Array): Buffer[] {
    let i = 0;
    if (this.halfSample !== null && pcm.length > 0) {
      this.pending.push(encodeSample(((pcm[0]! << 8) | this.halfSample) << 16 >> 16));
      this.halfSample = null;
      i = 1;
    }
    for (; i + 1 < pcm.length; i += 2) this.pending.push(encodeSample(((pcm[i + 1]! << 8) | pcm[i]!) << 16 >> 16));
    if (i < pcm.length) this.halfSample = pcm[i]!;
    return this.takeFrames();
  }

  /** Whole frames of samples already decoded (the synthesizer's output). */
  pushSamples(samples: Int16Array): Buffer[] {
    for (const s of samples) this.pending.push(encodeSample(s));
    return this.takeFrames();
  }

  /** The last, partial frame padded with silence (none when nothing waits); a dangling half sample is dropped. */
  flush(): Buffer[] {
    this.halfSample = null;
    if (!this.pending.length) return [];
    const frame = Buffer.alloc(FRAME_SAMPLES, MULAW_SILENCE);
    Buffer.from(this.pending).copy(frame);
    this.pending = [];
    return [frame];
  }

  private takeFrames(): Buffer[] {
    const frames: Buffer[] = [];
    // Cut by index and the rest kept once: a sentence's samples are not moved up a frame at a time.
    let at = 0;
    for (; at + FRAME_SAMPLES <= this.pending.length; at += FRAME_SAMPLES) frames.push(Buffer.from(this.pending.slice(at, at + FRAME_SAMPLES)));
    if (at) this.pending = this.pending.slice(at);
    return frames;
  }
}
