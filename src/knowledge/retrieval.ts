import type { Db } from '../db/index.ts';
import { countChunksWithWords, findChunksWithAnyWord } from '../db/page-chunks.ts';
import { analyzeQuestion, BRANCH, PAYMENT_WORDS, stem } from './analysis.ts';
import { answerByMeaning } from './meaning.ts';
import { ANSWER_THRESHOLD, kindredPrefixes, rankSentences, type RankedSentence } from './rank.ts';

export interface Passage {
  /** The answering sentence with its neighbours (or, from other sources, any passage text). */
  text: string;
  url: string;
  title: string | null;
  /**
   * Calibrated 0 to 1 for passages from `searchKnowledge` (see rank.ts); other sources may use any scale. A sentence
   * found by its meaning (meaning.ts) keeps its lexical score, below ANSWER_THRESHOLD.
   */
  score: number;
  /** "Page title › Heading" of the passage. */
  section?: string | null;
  /** The one sentence that answers, when retrieval found it. */
  answer?: string;
  /** Names of the question the site never mentions with its subject. */
  missing?: string[];
  /** Those of them the site does not mention at all. */
  absent?: string[];
}

/** Candidate passages read from the database per question, before sentence ranking; as many sentences are read by meaning. */
const CANDIDATES = 40;

/**
 * The sentences of an agent's knowledge that answer `query`, best first, each with its
 * neighbours, page and section: from its own site and from the knowledge bases attached to it,
 * always in the index generation served now. Candidates are the passages holding any of the
 * question's words or their synonyms (PostgreSQL full text, stemmed), or a word of their family
 * ("allergy" / "allergens", `kindredPrefixes`); their sentences are
 * ranked by `rankSentences` with the whole knowledge's word frequencies. Only sentences scoring
 * ANSWER_THRESHOLD or more come back, or, when none does, the one sentence whose meaning answers it
 * (`answerByMeaning`): an empty answer means the site does not say.
 */
export async function searchKnowledge(db: Db, agentId: string, query: string, opts: { limit?: number } = {}): Promise<Passage[]> {
  const limit = Math.min(Math.max(opts.limit ?? 5, 1), 50);
  const question = analyzeQuestion(query.slice(0, 1000));
  if (!question.terms.length) return [];
  // A shop or café asked about is read on the pages about the business's locations too, whatever they call them; a thing
  // asked about, on those that deny its class ("We do not serve alcohol"); the means of payment asked for, on those that
  // name them ("What forms of payment do you take?": "We accept cash, debit…", which has none of the question's words).
  const words = [...new Set([
    ...question.terms.flatMap((t) => [t.word, ...t.synonymWords, ...(t.classWords ?? []), ...(t.premises ? BRANCH : [])]),
    ...(question.want === 'payment' ? PAYMENT_WORDS : []),
  ])];
  const [chunks, counts] = await Promise.all([
    findChunksWithAnyWord(db, agentId, words, CANDIDATES, kindredPrefixes(question.terms)),
    countChunksWithWords(db, agentId, words),
  ]);
  if (!chunks.length) return [];
  const df = new Map<string, number>();
  for (const [word, n] of counts.df) {
    const s = stem(word);
    df.set(s, Math.max(df.get(s) ?? 0, n));
  }
  const ranked = rankSentences(question, chunks, { total: counts.total, df }, Math.max(limit, CANDIDATES));
  const found = ranked.filter((r) => r.score >= ANSWER_THRESHOLD).slice(0, limit);
  const byMeaning = found.length ? null : await answerByMeaning(question, ranked);
  return (byMeaning ? [byMeaning] : found).map(passageOf);
}

function passageOf(r: RankedSentence): Passage {
  return { text: r.context, url: r.url, title: r.title, score: r.score, section: r.section, answer: r.sentence, missing: r.missing, absent: r.absent };
}
