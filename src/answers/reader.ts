import { READER_MODEL } from './reader-model.ts';

/**
 * The offline runtime's reader: which sentence of the retrieved passages answers the question, and
 * whether any does. Each candidate sentence (of the passages full text and meaning found, table rows
 * and FAQ answers included) is described by the features below, and scored by a logistic regression
 * whose weights and answer threshold `bench/train-reader.ts` fits on the development sites of the
 * answers corpus (`reader-model.ts`, written by that script). No feature names a word.
 */

/** What is known of one candidate sentence, each a number (most 0 or 1). */
export interface ReaderInput {
  /** The sentence ranking's calibrated score (rank.ts), 0 to 1. */
  lexical: number;
  /** Its place among the question's ranked sentences (0 first). */
  lexicalRank: number;
  /** Its passage's place in the fused retrieval (0 first; Infinity when not among them). */
  fusedRank: number;
  /** Cosine of its passage's meaning with the question's (0 when unknown). */
  passageCosine: number;
  /** Its passage's place by meaning (0 first; Infinity when not among the closest). */
  denseRank: number;
  /** Cosine of the sentence's own meaning with the question's: for the first candidates only (0 for the others). */
  sentenceCosine: number;
  /** Its place among those by that cosine (0 first; Infinity when not encoded). */
  sentenceRank: number;
  /** The question wants a kind of answer (a price, a time…), and whether the sentence holds it. */
  wantsKind: boolean;
  holdsKind: boolean;
  /** The question is a yes/no one. */
  yesNo: boolean;
  /** Its section is about the entity the question names, or about a sibling of it (another location). */
  entityAsked: boolean;
  entityOther: boolean;
  /** It stands in a blog or news post, whose facts are seldom the business's own offer. */
  post: boolean;
  /** Names of the question the site never writes with its subject; of them, names the site never writes. */
  missing: boolean;
  absent: boolean;
  /** The sentence asks a question itself ("No insurance?"). */
  asks: boolean;
}

export const FEATURES = [
  'lexical', 'lexical_top', 'lexical_rank', 'fused_rank', 'passage_cosine', 'dense_rank', 'lexical_x_cosine',
  'kind_held', 'kind_missing', 'yes_no', 'entity_asked', 'entity_other', 'post', 'missing', 'absent', 'asks',
  'sentence_cosine', 'sentence_rank',
] as const;

const place = (rank: number) => (Number.isFinite(rank) ? 1 / (1 + rank) : 0);

/** The feature vector of a candidate, in the order of FEATURES. */
export function featuresOf(c: ReaderInput): number[] {
  return [
    c.lexical, c.lexicalRank === 0 ? 1 : 0, place(c.lexicalRank), place(c.fusedRank), c.passageCosine, place(c.denseRank), c.lexical * c.passageCosine,
    c.wantsKind && c.holdsKind ? 1 : 0, c.wantsKind && !c.holdsKind ? 1 : 0, c.yesNo ? 1 : 0, c.entityAsked ? 1 : 0, c.entityOther ? 1 : 0,
    c.post ? 1 : 0, c.missing ? 1 : 0, c.absent ? 1 : 0, c.asks ? 1 : 0, c.sentenceCosine, place(c.sentenceRank),
  ];
}

/**
 * A fitted model: a weight per feature, the score of "none of them" (`bias`), and the probability that some candidate
 * answers from which the best one is given.
 */
export interface ReaderModel { features: readonly string[]; weights: number[]; bias: number; threshold: number }

/** The probability that some candidate answers from which the best is given; below it, the site does not say. */
export const READER_MODEL_THRESHOLD = READER_MODEL.threshold;

/**
 * The probability that each candidate is the one that answers, against each other and against "none of them": a
 * conditional logit over the question's candidates with a null option (its score the model's `bias`).
 */
export function readerProbabilities(inputs: ReaderInput[], model: ReaderModel = READER_MODEL): number[] {
  return softmaxWithNull(inputs.map((c) => featuresOf(c).reduce((sum, x, i) => sum + x * (model.weights[i] ?? 0), 0)), model.bias).slice(1);
}

/** [p(none), p(1), …, p(n)] of scores with the null option's score. */
function softmaxWithNull(scores: number[], nullScore: number): number[] {
  const top = Math.max(nullScore, ...scores);
  const exps = [Math.exp(nullScore - top), ...scores.map((x) => Math.exp(x - top))];
  const z = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / z);
}

/** Blog and news posts, by the path of their page. */
export const isPost = (url: string): boolean => {
  try {
    return /\/(blog|blogs|news|posts?|articles?|journal|stories|actualites|actus?)(\/|$)/i.test(new URL(url, 'http://x').pathname);
  } catch {
    return false;
  }
};

/** One question of the training set: its candidates' features, and which of them answer (none for an unknown). */
export interface TrainingQuestion { rows: number[][]; positive: boolean[] }

/**
 * Fits the conditional logit by gradient descent with L2 regularisation: for a question with answering candidates, the
 * probability of those; for one without (an unknown), that of "none". Deterministic (zero start, full batches), so
 * the committed model is what the committed script writes.
 */
export function fitReader(questions: TrainingQuestion[], opts: { epochs?: number; rate?: number; l2?: number } = {}): { weights: number[]; bias: number } {
  const d = questions.find((q) => q.rows.length)?.rows[0]?.length ?? FEATURES.length;
  const weights = new Array<number>(d).fill(0);
  let bias = 0;
  const { epochs = 4000, rate = 0.5, l2 = 0.001 } = opts;
  for (let epoch = 0; epoch < epochs; epoch++) {
    const grad = new Array<number>(d).fill(0);
    let gb = 0;
    for (const q of questions) {
      const scores = q.rows.map((f) => f.reduce((sum, x, j) => sum + x * weights[j]!, 0));
      const p = softmaxWithNull(scores, bias);
      const answered = q.positive.some(Boolean);
      // The target: the positives, in proportion to their own probabilities; or none.
      const pos = answered ? q.positive.reduce((sum, y, i) => sum + (y ? p[i + 1]! : 0), 0) : 0;
      gb += p[0]! - (answered ? 0 : 1);
      q.rows.forEach((f, i) => {
        const target = answered && q.positive[i] ? p[i + 1]! / pos : 0;
        const err = p[i + 1]! - target;
        if (err !== 0) for (let j = 0; j < d; j++) grad[j]! += err * f[j]!;
      });
    }
    for (let j = 0; j < d; j++) weights[j]! -= rate * (grad[j]! / questions.length + l2 * weights[j]!);
    bias -= rate * (gb / questions.length);
  }
  return { weights, bias };
}
