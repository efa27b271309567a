/**
 * Dev only: for a dev site kept by `EVAL_REUSE`, each question's best candidate sentence (the reader's candidates, the
 * question spelled as retrieval reads it) with its score, whether it holds the kind of answer wanted, and whether it
 * holds the expected fact: how facts and unknowns spread below and above the answer threshold.
 * `node --import tsx bench/answers/near-misses.ts <reuse file> <dev site>…`. Never a test site.
 */
import { readFileSync } from 'node:fs';
import postgres from 'postgres';
import { chunkStore } from '../../src/knowledge/chunk-store.ts';
import { readerCandidates, searchKnowledge } from '../../src/answers/retrieval.ts';
import { composeAnswer } from '../../src/answers/answer.ts';
import { findPublicAgent } from '../../src/db/agents.ts';
import { judge, loadCorpus } from './corpus.ts';

const [file, ...sites] = process.argv.slice(2);
if (!file || !sites.length || sites.some((s) => !s.startsWith('dev-'))) throw new Error('usage: near-misses.ts <reuse file> <dev site>…');
const reused = JSON.parse(readFileSync(file, 'utf8')).offline as { databaseUrl: string; widgets: Record<string, string> };
const db = postgres(reused.databaseUrl, { max: 2, onnotice: () => {} });
const store = chunkStore(db as never);
const rows: string[] = [];
for (const site of loadCorpus(sites)) {
  const agent = (await findPublicAgent(db as never, reused.widgets[site.name]!))!.agent;
  for (const question of site.questions) {
    const answered = composeAnswer(question.q, await searchKnowledge(store, agent.id, question.q, { limit: 5 }));
    const { candidates } = await readerCandidates(store, agent.id, question.q);
    const best = candidates[0]?.ranked;
    const holds = best ? judge(question, best.sentence).right : false;
    rows.push([site.name, question.type, answered ? 'answered' : 'none', best ? best.score.toFixed(3) : '-', best?.typed ? 'typed' : '-', holds ? 'HOLDS' : '-',
      question.q.slice(0, 70), (best?.sentence ?? '').slice(0, 90)].join('\t'));
  }
}
console.log(rows.join('\n'));
await db.end();
process.exit(0);
