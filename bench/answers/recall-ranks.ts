/**
 * Dev only: where the LLM path's passages hold each fact question's fact, for the dev sites kept by `EVAL_REUSE`.
 * For each fact question, the first place (1-based) among `retrievePassages`' first 20 at which the passages so far
 * hold every expected group, as the echo model's reply would (`holdsAll` over "[section] text (Source: url)" lines);
 * prints recall@1/3/5/10/20 per site and the questions missed at 5 with their place. `RANKS_GRID="60:1,1,1 10:2,1,1"`
 * calibrates the fusion (src/answers/retrieval.ts): each setting, the constant k and the three rankings' weights, in
 * turn, the totals only.
 * `node --import tsx bench/answers/recall-ranks.ts <reuse file> <dev site>…`. Never a test site.
 */
import { readFileSync } from 'node:fs';
import postgres from 'postgres';
import { chunkStore } from '../../src/knowledge/chunk-store.ts';
import { retrievePassages, useFusion } from '../../src/answers/retrieval.ts';
import { findPublicAgent } from '../../src/db/agents.ts';
import { holdsAll, loadCorpus } from './corpus.ts';

const [file, ...sites] = process.argv.slice(2);
if (!file || !sites.length || sites.some((s) => !s.startsWith('dev-'))) throw new Error('usage: recall-ranks.ts <reuse file> <dev site>…');
const all = JSON.parse(readFileSync(file, 'utf8')) as Record<string, { databaseUrl: string; widgets: Record<string, string> }>;
const reused = all.llm ?? all.offline!;
const db = postgres(reused.databaseUrl, { max: 2, onnotice: () => {} });
const store = chunkStore(db as never);
const CUTS = [1, 3, 5, 10, 20];
const grid = (process.env.RANKS_GRID ?? '').split(/\s+/).filter(Boolean).map((g) => {
  const [k, w] = g.split(':');
  return { k: Number(k), weights: (w ?? '1,1,1').split(',').map(Number) };
});
const quiet = grid.length > 0;
for (const setting of grid.length ? grid : [null]) {
  if (setting) useFusion(setting.k, setting.weights);
  const total = new Map<number, number>();
  let facts = 0;
  for (const site of loadCorpus(sites)) {
    const agent = (await findPublicAgent(db as never, reused.widgets[site.name]!))!.agent;
    const at = new Map<number, number>();
    let n = 0;
    for (const question of site.questions) {
      if (question.type !== 'fact') continue;
      n++;
      const passages = await retrievePassages(store, agent.id, question.q, { limit: 20 });
      let place = 0;
      let echoed = '';
      for (const [i, p] of passages.entries()) {
        echoed += `[${p.section ?? p.title ?? ''}] ${p.text} (Source: ${p.url})\n`;
        if (holdsAll(question.expect, echoed)) { place = i + 1; break; }
      }
      for (const c of CUTS) if (place && place <= c) at.set(c, (at.get(c) ?? 0) + 1);
      if (!quiet && (!place || place > 5)) console.log(`  ${site.name} ${place || '-'}  ${question.q}  => ${JSON.stringify(question.expect)}`);
    }
    facts += n;
    for (const c of CUTS) total.set(c, (total.get(c) ?? 0) + (at.get(c) ?? 0));
    if (!quiet) console.log(`${site.name.padEnd(22)} ${CUTS.map((c) => `@${c} ${at.get(c) ?? 0}/${n}`).join('  ')}`);
  }
  const label = setting ? `k ${setting.k}, weights ${setting.weights.join(',')}` : 'all';
  console.log(`${label.padEnd(22)} ${CUTS.map((c) => `@${c} ${total.get(c) ?? 0}/${facts}`).join('  ')}`);
}
await db.end();
