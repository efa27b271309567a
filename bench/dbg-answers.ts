// Temporary debugging script (not committed): crawls one dev site, then prints the ranking for questions.
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { startService } from '../src/service.ts';
import { createOrganization } from '../src/auth/keys.ts';
import { freshDatabase, startTemporal } from './harness.ts';
import { crawledAgent, loadCorpus, serveCorpusSite } from './answers/corpus.ts';
import { searchKnowledge } from '../src/knowledge/retrieval.ts';
import { findChunksWithAnyWord } from '../src/db/page-chunks.ts';
import { analyzeQuestion } from '../src/knowledge/analysis.ts';
import { createInterface } from 'node:readline';

Runtime.install({ logger: new DefaultLogger('WARN') });
const [site] = loadCorpus([process.argv[2]!]);
const temporalAddress = await startTemporal();
const databaseUrl = await freshDatabase();
const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', LLM_BASE_URL: '', LLM_API_KEY: '' }, { PORT: 0, HOST: '127.0.0.1', ALLOW_PRIVATE_NETWORK_TARGETS: true, CRAWL_DELAY_MS: 0, SMTP_LISTEN_PORT: 0, TASK_QUEUE_PREFIX: 'dbg' });
const service = await startService({ config, databaseUrl, temporalAddress, log: createLogger('silent'), api: true, worker: true });
const token = (await service.sql.begin((tx) => createOrganization(tx, 'dbg'))).token;
const served = await serveCorpusSite(site!);
const { agent } = await crawledAgent(`${service.url}/api/v1/rest`, { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, site!.brand, served.url, { default_language: site!.language });
console.log('ready');
const rl = createInterface({ input: process.stdin });
for await (const line of rl) {
  const q = line.trim();
  if (!q) continue;
  const question = analyzeQuestion(q);
  console.log('Q:', q, 'want', question.want, 'terms', question.terms.map((t) => `${t.word}${t.typeWord ? '(T)' : ''}${t.incidental ? '(i)' : ''}${t.proper ? '(P)' : ''}`).join(' '));
  const words = question.terms.map((t) => t.word);
  const chunks = await findChunksWithAnyWord(service.sql, agent.id, words, 5);
  console.log('  fts:', chunks.map((c) => `${c.section} :: ${c.text.slice(0, 60)}`).join('\n       '));
  const { rankSentences } = await import('../src/knowledge/rank.ts');
  const all = await findChunksWithAnyWord(service.sql, agent.id, words, 40);
  const ranked = rankSentences(question, all, { total: 300, df: new Map() }, 8);
  for (const r of ranked.slice(0, 6)) console.log(`  ${r.score.toFixed(3)} ${r.typed ? 'T' : ' '} ${r.sentence.slice(0, 120)}`);
  const found = await searchKnowledge(service.sql, agent.id, q);
  console.log('  => ', found[0]?.answer ?? 'NOTHING');
}
await service.stop();
await served.close();
process.exit(0);
