import type { Db } from '../db/index.ts';
import { listTrainingNotes } from '../db/training-notes.ts';
import { analyzeQuestion } from '../answers/analysis.ts';
import { ANSWER_THRESHOLD, rankSentences } from '../answers/rank.ts';

const UNIFORM = { total: 1, df: new Map<string, number>() };

/** A training note that answers the visitor's question, with its calibrated score. */
export interface NoteMatch { question: string; answer: string; score: number }

/**
 * The agent's training notes that ask what `query` asks, best first: ranked exactly as site
 * sentences are (Porter2 stems, WordNet synonyms and derivations, the calibrated score), the
 * note's question as the sentence and its answer as the passage under it, every word weighing
 * the same. Only notes at or above ANSWER_THRESHOLD come back.
 */
export async function matchTrainingNotes(db: Db, agentId: string, query: string, limit = 3): Promise<NoteMatch[]> {
  const question = analyzeQuestion(query.slice(0, 1000));
  if (!question.terms.length) return [];
  const notes = await listTrainingNotes(db, agentId);
  if (!notes.length) return [];
  // A note's question is asked to be matched: read as the statement it stands for, not as a sentence that asks (which the
  // ranking counts half, since on a site what follows it answers).
  const asStated = (q: string) => q.replace(/\s+/g, ' ').trim().replace(/\?(?=\s|$)/g, '.');
  const byQuestion = new Map(notes.map((n) => [asStated(n.question), n]));
  const chunks = notes.map((n) => ({ text: asStated(n.question), section: n.answer, url: '', title: null }));
  const out: NoteMatch[] = [];
  // A few notes make no corpus to weigh words by: every word of the question weighs the same (bar vague ones).
  for (const r of rankSentences(question, chunks, UNIFORM, 20)) {
    if (r.score < ANSWER_THRESHOLD || out.length >= limit) continue;
    // A note's question may be split in sentences: the note is the chunk's.
    const note = byQuestion.get(r.context) ?? notes.find((n) => asStated(n.question).includes(r.sentence));
    if (note && !out.some((o) => o.question === note.question)) out.push({ question: note.question, answer: note.answer, score: r.score });
  }
  return out;
}
