/**
 * Dev only: asks dev sites' questions against a database kept by `EVAL_REUSE` (no service, no crawl) and prints the
 * reply with the ranked sentences behind it. `node --import tsx bench/answers/probe.ts <reuse file> <site> "<question>"…`
 * Never point it at a test site.
 */
import { readFileSync } from 'node:fs';
import postgres from 'postgres';
import { chunkStore } from '../../src/knowledge/chunk-store.ts';
import { searchKnowledge } from '../../src/answers/retrieval.ts';
import { composeAnswer } from '../../src/answers/answer.ts';
import { analyzeQuestion } from '../../src/answers/analysis.ts';
import { rankSentences } from '../../src/answers/rank.ts';
import { findPublicAgent } from '../../src/db/agents.ts';
import type { ChunkRow } from '../../src/db/page-chunks.ts';
import type { KnowledgeStore } from '../../src/answers/store.ts';

const [file, site, ...questions] = process.argv.slice(2);
if (!file || !site || site.startsWith('test-')) throw new Error('usage: probe.ts <reuse file> <dev site> "question"…');
const reused = JSON.parse(readFileSync(file, 'utf8')).offline as { databaseUrl: string; widgets: Record<string, string> };
const db = postgres(reused.databaseUrl, { max: 2, onnotice: () => {} });
const agent = (await findPublicAgent(db as never, reused.widgets[site]!))!.agent;
const base = chunkStore(db as never);
// The chunks retrieval read, to rank every sentence of them below the threshold too.
const read = new Map<string, ChunkRow>();
const store: KnowledgeStore = {
  ...base,
  findChunksWithAnyWord: async (...args) => { const out = await base.findChunksWithAnyWord(...args); for (const c of out) read.set(c.id, c); return out; },
  chunksByIds: async (ids) => { const out = await base.chunksByIds(ids); for (const c of out) read.set(c.id, c); return out; },
};
for (const q of questions) {
  read.clear();
  const passages = await searchKnowledge(store, agent.id, q, { limit: 8 });
  console.log(`\n? ${q}`);
  const question = analyzeQuestion(q);
  console.log(`  terms: ${question.terms.map((t) => `${t.word}/${t.stem}${t.incidental ? '~' : ''}${t.typeWord ? '^' : ''}`).join(' ')}  want ${question.want} yesNo ${question.yesNo}`);
  for (const r of rankSentences(question, [...read.values()], undefined, 6)) console.log(`  · ${r.score.toFixed(3)} ${r.sentence.slice(0, 140)}`);
  for (const p of passages) console.log(`  ${p.score.toFixed(3)} ${p.answer ?? p.text.slice(0, 120)}  [${p.section ?? ''}]`);
  console.log(`=> ${composeAnswer(q, passages.slice(0, 5))?.text ?? '(none)'}`);
}
await db.end();
process.exit(0);
