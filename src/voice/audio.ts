/** Linear PCM helpers: resampling, WAV in and out. Pure, no I/O. */

/** `samples` at `from` Hz as samples at `to` Hz (linear interpolation: speech-band quality is enough here). */
export function resample(samples: Int16Array, from: number, to: number): Int16Array {
  if (from === to || samples.length === 0) return samples;
  const length = Math.floor((samples.length * to) / from);
  const out = new Int16Array(length);
  const step = from / to;
  for (let i = 0; i < length; i++) {
    const x = i * step;
    const j = Math.floor(x);
    const a = samples[j]!;
    const b = samples[Math.min(j + 1, samples.length - 1)]!;
    out[i] = Math.round(a + (b - a) * (x - j));
  }
  return out;
}

/**
 * The mono 16-bit samples and rate of a WAV file. A streamed WAV (espeak-ng `--stdout`) declares no
 * real length: the data runs to the end of the bytes.
 */
export function parseWav(bytes: Buffer): { samples: Int16Array; rate: number } {
  if (bytes.length < 12 || bytes.toString('ascii', 0, 4) !== 'RIFF' || bytes.toString('ascii', 8, 12) !== 'WAVE') throw new Error('not a WAV file');
  let offset = 12;
  let rate = 0;
  let channels = 1;
  while (offset + 8 <= bytes.length) {
    const id = bytes.toString('ascii', offset, offset + 4);
    const size = bytes.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') {
      channels = bytes.readUInt16LE(body + 2);
      rate = bytes.readUInt32LE(body + 4);
    } else if (id === 'data') {
      const end = Math.min(bytes.length, body + size);
      const data = bytes.subarray(body, body + ((end - body) & ~1));
      const all = new Int16Array(data.length / 2);
      for (let i = 0; i < all.length; i++) all[i] = data.readInt16LE(i * 2);
      if (channels === 1) return { samples: all, rate };
      const mono = new Int16Array(Math.floor(all.length / channels));
      for (let i = 0; i < mono.length; i++) mono[i] = all[i * channels]!;
      return { samples: mono, rate };
    }
    offset = body + size + (size & 1);
  }
  throw new Error('WAV file without data');
}

/** A mono 16-bit PCM WAV file of `samples` at `rate` Hz. */
export function wavFile(samples: Int16Array, rate: number): Buffer {
  const out = Buffer.alloc(44 + samples.length * 2);
  out.write('RIFF', 0, 'ascii');
  out.writeUInt32LE(36 + samples.length * 2, 4);
  out.write('WAVEfmt ', 8, 'ascii');
  out.writeUInt32LE(16, 16);
  out.writeUInt16LE(1, 20);
  out.writeUInt16LE(1, 22);
  out.writeUInt32LE(rate, 24);
  out.writeUInt32LE(rate * 2, 28);
  out.writeUInt16LE(2, 32);
  out.writeUInt16LE(16, 34);
  out.write('data', 36, 'ascii');
  out.writeUInt32LE(samples.length * 2, 40);
  for (let i = 0; i < samples.length; i++) out.writeInt16LE(samples[i]!, 44 + i * 2);
  return out;
}

/** Root mean square of a frame of samples. */
export function rms(samples: Int16Array): number {
  if (!samples.length) return 0;
  let sum = 0;
  for (const s of samples) sum += s * s;
  return Math.sqrt(sum / samples.length);
}

/** The sentences of a reply, each synthesized and marked on its own so the first is heard while the rest are made. */
export function sentencesOf(text: string): string[] {
  return (text.match(/[^.!?…]+(?:[.!?…]+["')\]]*|$)/g) ?? []).map((s) => s.trim()).filter(Boolean);
}
