/**
 * Dev only (issues 39 and 44): times the offline runtime's answer to every question of the dev sites kept by
 * `EVAL_REUSE` (no service, no crawl), and writes every reply to a file, so that two trees' replies can be diffed.
 * `node --import tsx bench/answers/timing.ts <reuse file> <replies file> [dev site…]` (every dev site of the file by
 * default). Each question is one visitor message to the offline runtime (`replyOffline`, as a widget conversation's
 * first message is), with the tools a turn gets (`groundingOf`'s, over a store that clocks its reads). Prints p50 /
 * p95 / max per question, the first question's (this fresh process's) apart, and where the time went: the database's
 * reads, retrieval (`searchKnowledge`: the question's analysis, the sentence ranking, the encoder's wait), training
 * notes and data rows, and the reply's composition (the rest of the turn: `composeAnswer`). With `--warm`, the answer
 * engine is warmed first (`warmAnswerEngine`, as a streamed call does when it starts), and the event loop's longest
 * block meanwhile is printed; with `--rounds=N`, the questions are asked N times (the later rounds' figures once every
 * passage has been read, and any reply that differs from the first round's counted). Never a test site. For a CPU profile: `node --cpu-prof --import tsx bench/answers/timing.ts …`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import postgres from 'postgres';
import { chunkStore } from '../../src/knowledge/chunk-store.ts';
import { searchKnowledge } from '../../src/answers/retrieval.ts';
import { matchTrainingNotes } from '../../src/knowledge/notes.ts';
import { answerFromRows } from '../../src/knowledge/rows.ts';
import { findPublicAgent } from '../../src/db/agents.ts';
import { runtimeAgent } from '../../src/conversations/lifecycle.ts';
import { createOfflineRuntime } from '../../src/runtime/offline.ts';
import type { KnowledgeStore } from '../../src/answers/store.ts';
import { warmAnswerEngine } from '../../src/answers/warm.ts';
import { loadCorpus } from './corpus.ts';

const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const warm = process.argv.includes('--warm');
const rounds = Number(process.argv.find((a) => a.startsWith('--rounds='))?.slice('--rounds='.length) ?? 1);
const [file, out, ...named] = args;
if (!file || !out || named.some((s) => !s.startsWith('dev-'))) throw new Error('usage: timing.ts <reuse file> <replies file> [dev site…] [--warm] [--rounds=N]');
const reused = JSON.parse(readFileSync(file, 'utf8')).offline as { databaseUrl: string; widgets: Record<string, string> };
const sites = loadCorpus(named.length ? named : Object.keys(reused.widgets).filter((s) => s.startsWith('dev-')))
  .filter((s) => s.split === 'dev' && reused.widgets[s.name]);
const db = postgres(reused.databaseUrl, { max: 4, onnotice: () => {} });

/** Wall time while at least one read of the database is pending (reads run side by side: not their sum). */
let dbMs = 0;
let pending = 0;
let since = 0;
async function clocked<T>(read: () => Promise<T>): Promise<T> {
  if (pending++ === 0) since = performance.now();
  try {
    return await read();
  } finally {
    if (--pending === 0) dbMs += performance.now() - since;
  }
}
const base = chunkStore(db as never);
const store: KnowledgeStore = {
  findChunksWithAnyWord: (...a) => clocked(() => base.findChunksWithAnyWord(...a)),
  countChunksWithWords: (...a) => clocked(() => base.countChunksWithWords(...a)),
  knowledgeSources: (...a) => clocked(() => base.knowledgeSources(...a)),
  chunksOfGeneration: (...a) => clocked(() => base.chunksOfGeneration(...a)),
  chunksByIds: (...a) => clocked(() => base.chunksByIds(...a)),
  chunksNear: (...a) => clocked(() => base.chunksNear(...a)),
  vectorsOfGeneration: (...a) => clocked(() => base.vectorsOfGeneration(...a)),
};

interface Timed { site: string; q: string; reply: string; ms: number; db: number; search: number; lookups: number; compose: number }
const runtime = createOfflineRuntime({ now: () => new Date('2026-12-07T12:00:00Z') });
const agents = new Map<string, { id: string; told: Awaited<ReturnType<typeof runtimeAgent>> }>();
for (const site of sites) {
  const { agent } = (await findPublicAgent(db as never, reused.widgets[site.name]!))!;
  agents.set(site.name, { id: agent.id, told: await runtimeAgent(db as never, agent) });
}

if (warm) {
  // The longest the event loop was held while the engine warmed: the longest gap between two of its turns.
  let longest = 0;
  let last = performance.now();
  let on = true;
  const turn = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    if (on) setImmediate(turn);
  };
  setImmediate(turn);
  const started = performance.now();
  await warmAnswerEngine(store, agents.get(sites[0]!.name)!.id);
  const took = performance.now() - started;
  await new Promise((resolve) => { setImmediate(resolve); });
  on = false;
  console.log(`warm-up: ${took.toFixed(0)} ms, the event loop's longest block ${longest.toFixed(1)} ms`);
}

/** One visitor message of each dev question to the offline runtime, timed. */
async function askAll(): Promise<Timed[]> {
  const timed: Timed[] = [];
  for (const site of sites) {
    const { id, told } = agents.get(site.name)!;
    for (const question of site.questions) {
      let search = 0;
      let lookups = 0;
      const time = async <T>(add: (ms: number) => void, run: () => Promise<T>): Promise<T> => {
        const t = performance.now();
        try { return await run(); } finally { add(performance.now() - t); }
      };
      // The notes and the rows are read side by side (runtime/reply.ts): their wall time while either is pending, not their sum.
      let looking = 0;
      let lookingSince = 0;
      const looked = async <T>(run: () => Promise<T>): Promise<T> => {
        if (looking++ === 0) lookingSince = performance.now();
        try { return await run(); } finally { if (--looking === 0) lookups += performance.now() - lookingSince; }
      };
      dbMs = 0;
      const started = performance.now();
      const turn = await runtime.reply({ agent: told, messages: [{ id: 'visitor-1', role: 'visitor', text: question.q, ts: '2026-12-07T12:00:00.000Z' }], captured: {}, contactFacts: {}, language: site.language }, {
        searchKnowledge: (query, limit, asked) => time((ms) => { search += ms; }, () => searchKnowledge(store, id, query, { limit: limit ?? 5, ...asked })),
        searchNotes: (query) => looked(() => clocked(() => matchTrainingNotes(db as never, id, query))),
        lookupRows: (query) => looked(() => clocked(() => answerFromRows(db as never, id, query))),
      });
      const ms = performance.now() - started;
      timed.push({ site: site.name, q: question.q, reply: turn.replies.join('\n\n'), ms, db: dbMs, search, lookups, compose: ms - search - lookups });
    }
  }
  return timed;
}

const timed = await askAll();
// `--rounds=N`: the same questions again, N - 1 times: the figures once every passage has been read (a site's
// questions over a service's day), and a check that the replies do not depend on what was asked before.
const again: Timed[][] = [];
for (let i = 1; i < rounds; i++) again.push(await askAll());
await db.end();

writeFileSync(out, timed.map((t) => `## [${t.site}] ${t.q}\n${t.reply}\n`).join('\n'));
const pct = (xs: number[], p: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? 0; };
const line = (label: string, xs: number[]) => `${label.padEnd(28)} p50 ${pct(xs, 50).toFixed(1).padStart(7)}  p95 ${pct(xs, 95).toFixed(1).padStart(7)}  max ${Math.max(...xs).toFixed(1).padStart(7)}  sum ${xs.reduce((a, b) => a + b, 0).toFixed(0).padStart(6)} ms`;
const [first, ...rest] = timed;
console.log(`${timed.length} questions of ${sites.map((s) => s.name).join(', ')}; replies in ${out}`);
console.log(`first question (fresh process): ${first!.ms.toFixed(0)} ms (database ${first!.db.toFixed(0)}, retrieval ${first!.search.toFixed(0)}, notes and rows ${first!.lookups.toFixed(0)}, composing ${first!.compose.toFixed(0)})`);
console.log(line('per question (after the 1st)', rest.map((t) => t.ms)));
console.log(line('  database reads', rest.map((t) => t.db)));
console.log(line('  retrieval (incl. its reads)', rest.map((t) => t.search)));
console.log(line('  notes and rows', rest.map((t) => t.lookups)));
console.log(line('  composing', rest.map((t) => t.compose)));
for (const t of [...rest].sort((a, b) => b.ms - a.ms).slice(0, 5)) console.log(`  slowest: ${t.ms.toFixed(0)} ms [${t.site}] ${t.q}`);
const memory = process.memoryUsage();
console.log(`memory at the end: RSS ${(memory.rss / 2 ** 20).toFixed(0)} MiB, JS heap ${(memory.heapUsed / 2 ** 20).toFixed(0)} MiB`);
again.forEach((round, i) => {
  console.log(line(`round ${i + 2}: per question`, round.map((t) => t.ms)));
  console.log(line('  database reads', round.map((t) => t.db)));
  const differ = round.filter((t, j) => t.reply !== timed[j]!.reply).length;
  if (differ) console.log(`  ${differ} replies differ from the first round's`);
});
process.exit(0);
