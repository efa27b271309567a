/**
 * Dev only: for each fact question of a dev site kept by `EVAL_REUSE`, where the expected fact sits among the reader's
 * candidates when the reply misses it: the rank of the first candidate sentence that holds it alone, whether the first
 * candidate's sentence with the one after it holds it, and whether its passage does. Tells a ranking loss (the fact is a
 * lower candidate) from a composition loss (the fact is beside the sentence chosen) and a retrieval loss (nowhere).
 * `node --import tsx bench/answers/where-facts-are.ts <reuse file> <dev site>…`. Never a test site.
 */
import { readFileSync } from 'node:fs';
import postgres from 'postgres';
import { chunkStore } from '../../src/knowledge/chunk-store.ts';
import { readerCandidates, searchKnowledge } from '../../src/answers/retrieval.ts';
import { composeAnswer } from '../../src/answers/answer.ts';
import { splitSentences } from '../../src/answers/text.ts';
import { findPublicAgent } from '../../src/db/agents.ts';
import { questionParts } from '../../src/answers/parts.ts';
import { holdsAll, judge, loadCorpus } from './corpus.ts';

const [file, ...sites] = process.argv.slice(2);
if (!file || !sites.length || sites.some((s) => !s.startsWith('dev-'))) throw new Error('usage: where-facts-are.ts <reuse file> <dev site>…');
const reused = JSON.parse(readFileSync(file, 'utf8')).offline as { databaseUrl: string; widgets: Record<string, string> };
const db = postgres(reused.databaseUrl, { max: 2, onnotice: () => {} });
const store = chunkStore(db as never);
const tally = new Map<string, number>();
const count = (k: string) => tally.set(k, (tally.get(k) ?? 0) + 1);
for (const site of loadCorpus(sites)) {
  const agent = (await findPublicAgent(db as never, reused.widgets[site.name]!))!.agent;
  for (const question of site.questions) {
    if (question.type !== 'fact') continue;
    // As the offline runtime reads a message (src/runtime/reply.ts): part by part when it asks two things or tells a story.
    const { asks, story } = questionParts(question.q);
    const split = asks.length > 1 || story !== '';
    const texts: string[] = [];
    if (split) {
      for (const [i, ask] of asks.entries()) {
        let found = composeAnswer(ask, await searchKnowledge(store, agent.id, ask, { limit: 5, story, message: question.q }));
        if (!found && i > 0) found = composeAnswer(`${asks[i - 1]} ${ask}`, await searchKnowledge(store, agent.id, `${asks[i - 1]} ${ask}`, { limit: 5, story, message: question.q }));
        if (found && !texts.includes(found.text)) texts.push(found.text);
      }
    }
    const whole = texts.length ? texts.join(' ') : composeAnswer(question.q, await searchKnowledge(store, agent.id, question.q, { limit: 5 }))?.text;
    const outcome = !whole ? 'none' : judge(question, whole).right ? 'right' : 'wrong';
    count(outcome);
    if (outcome === 'right') continue;
    // The groups the reply lacks, looked for among each part's candidates.
    const lacking = (question.expect ?? []).filter((g) => !whole || !holdsAll([g], whole));
    const holds = (text: string) => lacking.length > 0 && lacking.some((g) => holdsAll([g], text));
    let rank = -1;
    let first: Awaited<ReturnType<typeof readerCandidates>>['candidates'][number]['ranked'] | undefined;
    let found: string | undefined;
    for (const ask of split ? asks : [question.q]) {
      const { candidates } = await readerCandidates(store, agent.id, ask, story);
      const r = candidates.slice(0, 20).findIndex((c) => holds(c.ranked.sentence));
      if (r >= 0 && (rank < 0 || r < rank)) { rank = r; first = candidates[0]?.ranked; found = candidates[r]!.ranked.sentence; }
      if (!first) first = candidates[0]?.ranked;
    }
    let pair = false;
    let passage = false;
    if (first) {
      const sentences = splitSentences(first.context);
      const at = sentences.findIndex((s) => s.includes(first!.sentence) || first!.sentence.includes(s));
      pair = at >= 0 && holds(`${sentences[at]} ${sentences[at + 1] ?? ''}`);
      passage = holds(first.context);
    }
    const where = rank === 0 ? 'first' : rank > 0 && rank < 3 ? 'rank 2-3' : rank >= 3 && rank < 10 ? 'rank 4-10' : rank >= 10 ? 'rank 11-20' : pair ? 'next sentence' : passage ? 'same passage' : 'not in top 20';
    count(`${outcome}: ${where}`);
    console.log([site.name, outcome, where, first ? first.score.toFixed(3) : '-', question.q.slice(0, 70), (first?.sentence ?? '').slice(0, 80),
      split ? `parts: ${asks.join(' | ')}` : '', rank > 0 ? `| ${(found ?? '').slice(0, 80)}` : '', `reply: ${(whole ?? '').slice(0, 160)}`].join('\t'));
  }
}
console.log([...tally].sort().map(([k, v]) => `${k}: ${v}`).join('\n'));
await db.end();
process.exit(0);
