import type { Passage } from '../knowledge/retrieval.ts';
import { overlap, splitSentences, terms, truncate } from './text.ts';

/** Answering from knowledge: the sentences of the retrieved passages that answer the question. */

/** Words of a question that do not say what it is about. */
const QUERY_NOISE = terms('information info question questions detail details explain please help like love wonder wondering tell');

export interface Answer { text: string; urls: string[] }

/**
 * The 1 to 3 sentences of the passages that best answer the question, or null when nothing is
 * relevant: the best passage (title included) must share at least 40% of the question's content
 * terms (at least one), and each sentence kept must share at least one of them.
 */
export function composeAnswer(question: string, passages: Passage[]): Answer | null {
  const q = new Set([...terms(question)].filter((t) => !QUERY_NOISE.has(t)));
  if (!q.size) return null;
  const needed = Math.max(1, Math.ceil(0.4 * q.size));
  const scored: { sentence: string; url: string; score: number; rank: number; ord: number }[] = [];
  passages.slice(0, 5).forEach((p, rank) => {
    const coverage = overlap(q, terms(`${p.title ?? ''} ${p.text}`)).length;
    if (coverage < needed) return;
    splitSentences(p.text).forEach((sentence, ord) => {
      const hits = overlap(q, terms(sentence)).length;
      if (hits) scored.push({ sentence, url: p.url, score: hits + coverage / (q.size * 2) - rank * 0.01, rank, ord });
    });
  });
  if (!scored.length) return null;
  const best = scored.sort((a, b) => b.score - a.score).slice(0, 3);
  // Keep the passage's own order so the sentences still read as a paragraph.
  best.sort((a, b) => a.rank - b.rank || a.ord - b.ord);
  let text = '';
  for (const s of best) {
    const sentence = truncate(s.sentence, 300);
    if (text && text.length + sentence.length > 500) break;
    text = text ? `${text} ${sentence}` : sentence;
  }
  const urls = [...new Set(best.map((s) => s.url))].slice(0, 2);
  return { text, urls };
}
