/**
 * Dev only: asks dev sites' questions against a database kept by `EVAL_REUSE` (no service, no crawl) and prints the
 * question as retrieval reads it (spelling mended, its terms), the sentences ranked with the whole knowledge's word
 * frequencies, the passages given and the reply. `node --import tsx bench/answers/probe.ts <reuse file> <site> "<question>"…`
 * Never point it at a test site.
 */
import { readFileSync } from 'node:fs';
import postgres from 'postgres';
import { chunkStore } from '../../src/knowledge/chunk-store.ts';
import { fusedRetrieval, searchKnowledge } from '../../src/answers/retrieval.ts';
import { composeAnswer } from '../../src/answers/answer.ts';
import { rankSentences } from '../../src/answers/rank.ts';
import { findPublicAgent } from '../../src/db/agents.ts';

const [file, site, ...questions] = process.argv.slice(2);
if (!file || !site || site.startsWith('test-')) throw new Error('usage: probe.ts <reuse file> <dev site> "question"…');
const reused = JSON.parse(readFileSync(file, 'utf8')).offline as { databaseUrl: string; widgets: Record<string, string> };
const db = postgres(reused.databaseUrl, { max: 2, onnotice: () => {} });
const agent = (await findPublicAgent(db as never, reused.widgets[site]!))!.agent;
const store = chunkStore(db as never);
for (const q of questions) {
  const { text, question, stats, known } = await fusedRetrieval(store, agent.id, q, 8);
  console.log(`\n? ${q}\n  read as: ${text}`);
  // ~ incidental, ^ says the kind of answer, ! a name.
  console.log(`  terms: ${question.terms.map((t) => `${t.word}/${t.stem}${t.incidental ? '~' : ''}${t.typeWord ? '^' : ''}${t.proper ? '!' : ''}`).join(' ')}  want ${question.want} yesNo ${question.yesNo}`);
  if (stats) {
    for (const r of rankSentences(question, [...known.values()], stats, 10)) {
      console.log(`  · ${r.score.toFixed(3)} ${r.typed ? 'T' : ' '} ${r.sentence.slice(0, 110)}  [${(r.section ?? '').slice(0, 60)}]`);
    }
  }
  const passages = await searchKnowledge(store, agent.id, q, { limit: 8 });
  for (const p of passages) console.log(`  ${p.score.toFixed(3)} ${p.answer ?? p.text.slice(0, 120)}  [${p.section ?? ''}]`);
  console.log(`=> ${composeAnswer(q, passages.slice(0, 5))?.text ?? '(none)'}`);
}
await db.end();
process.exit(0);
