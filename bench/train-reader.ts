/**
 * Fits the offline reader (src/answers/reader.ts) on the development sites of the answers corpus:
 * `node scripts/run.mjs bench train-reader`, which writes src/answers/reader-model.ts.
 *
 * Starts the real service (a scratch PostgreSQL database, an in-memory Temporal dev server), crawls
 * every `dev-*` site of bench/answers/sites/ through the crawl workflow, and for each of its questions
 * takes the reader's candidates (`readerCandidates`, what the service reads at answer time). A
 * candidate of a fact question is a positive when its sentence holds the expected fact (every group of
 * `expect`, or one group of a question asking two things) and no other entity's; every candidate of an
 * unknown is a negative. The three sites of the first passes (bench/answers/site.ts, clinic-site.ts,
 * bakery-site.ts: tuning sites) are read too, a candidate holding every pattern of its question a positive. A logistic regression is fitted on them; the answer threshold (on the
 * probability that some candidate answers) is the one that does best on the same questions, a right answer or an honest "I don't know" counting one and a wrong
 * answer minus one. Test sites are never read. EVAL_SITES narrows the sites (development ones only).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { startService } from '../src/service.ts';
import { createOrganization } from '../src/auth/keys.ts';
import { readerCandidates } from '../src/answers/retrieval.ts';
import { FEATURES, featuresOf, fitReader, readerProbabilities, type ReaderInput, type ReaderModel } from '../src/answers/reader.ts';
import { freshDatabase, onCleanup, runBenchmark, say, startTemporal } from './harness.ts';
import { crawledAgent, folded, holdsAll, loadCorpus, serveCorpusSite, type CorpusQuestion, type CorpusSite } from './answers/corpus.ts';
import { startAnswersSite } from './answers/site.ts';
import { startClinicSite } from './answers/clinic-site.ts';
import { startBakerySite } from './answers/bakery-site.ts';
import { QUESTIONS, type Question as LegacyQuestion } from './answers/questions.ts';
import { CLINIC_QUESTIONS } from './answers/clinic-questions.ts';
import { BAKERY_QUESTIONS } from './answers/bakery-questions.ts';
import type { AnswersSite } from './answers/serve.ts';
import { chunkStore } from '../src/knowledge/chunk-store.ts';

/** The three sites of the first passes (tuning sites, never test ones), their questions as the corpus writes them. */
const LEGACY: { name: string; start: () => Promise<AnswersSite>; questions: LegacyQuestion[] }[] = [
  { name: 'legacy-gym', start: startAnswersSite, questions: QUESTIONS },
  { name: 'legacy-clinic', start: startClinicSite, questions: CLINIC_QUESTIONS },
  { name: 'legacy-bakery', start: startBakerySite, questions: BAKERY_QUESTIONS },
];

/** A legacy question as a corpus one: its patterns are kept apart (`patterns`), the judge of its candidates. */
const asCorpus = (q: LegacyQuestion): CorpusQuestion & { patterns?: RegExp[] } =>
  ({ q: q.q, type: q.kind === 'unknown' ? 'unknown' : 'fact', patterns: (q.expect ?? []).filter((re) => !/^\^/.test(re.source)) });

const MODEL_FILE = fileURLToPath(new URL('../src/answers/reader-model.ts', import.meta.url));

interface Example { question: CorpusQuestion; site: string; inputs: ReaderInput[]; rows: number[][]; labels: number[] }

function positive(question: CorpusQuestion & { patterns?: RegExp[] }, sentence: string): boolean {
  if (question.type !== 'fact') return false;
  // A legacy question: every pattern but those about the reply's opening ("Yes", "No") holds in the sentence.
  if (question.patterns) return question.patterns.length > 0 && question.patterns.every((re) => re.test(sentence));
  const t = folded(sentence);
  if ((question.not ?? []).some((s) => s.trim() && t.includes(folded(s)))) return false;
  const groups = question.expect ?? [];
  if (holdsAll(groups, sentence)) return true;
  return groups.length > 1 && groups.some((g) => holdsAll([g], sentence));
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const only = process.env.EVAL_SITES?.split(',').map((s) => s.trim()).filter(Boolean);
  const sites = loadCorpus(only).filter((s) => s.split === 'dev');
  if (!sites.length) throw new Error('no development site in bench/answers/sites/');
  // READER_EXAMPLES=file: the candidates read once are kept there, and read from there again (fitting alone, in seconds).
  const cache = process.env.READER_EXAMPLES;
  const examples: Example[] = cache && existsSync(cache) ? JSON.parse(readFileSync(cache, 'utf8')) as Example[] : await readExamples(sites);
  if (cache && !existsSync(cache)) writeFileSync(cache, JSON.stringify(examples));
  fit(examples, [...LEGACY.map((l) => l.name), ...sites.map((s) => s.name)]);
}

async function readExamples(sites: CorpusSite[]): Promise<Example[]> {
  const [databaseUrl, temporalAddress] = await Promise.all([freshDatabase(), startTemporal()]);
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', LLM_BASE_URL: '', LLM_API_KEY: '' }, {
    PORT: 0, HOST: '127.0.0.1', ALLOW_PRIVATE_NETWORK_TARGETS: true, CRAWL_DELAY_MS: 0, SMTP_LISTEN_PORT: 0, TASK_QUEUE_PREFIX: 'train-reader',
  });
  const service = await startService({ config, databaseUrl, temporalAddress, log: createLogger('silent'), api: true, worker: true });
  onCleanup('service', () => service.stop());
  const token = (await service.sql.begin((tx) => createOrganization(tx, 'train-reader'))).token;
  const rest = `${service.url}/api/v1/rest`;
  const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const examples: Example[] = [];
  const read = async (name: string, url: string, questions: (CorpusQuestion & { patterns?: RegExp[] })[]) => {
    const { agent } = await crawledAgent(rest, auth, name, url);
    for (const question of questions) {
      const { candidates } = await readerCandidates(chunkStore(service.sql), agent.id, question.q);
      examples.push({
        question, site: name, inputs: candidates.map((c) => c.input), rows: candidates.map((c) => featuresOf(c.input)),
        labels: candidates.map((c) => (positive(question, c.ranked.sentence) ? 1 : 0)),
      });
    }
    say(`${name}: ${questions.length} questions read`);
  };
  for (const legacy of LEGACY) {
    const served = await legacy.start();
    onCleanup(`${legacy.name} site`, () => served.close());
    await read(legacy.name, served.url, legacy.questions.map(asCorpus));
  }
  for (const site of sites) {
    const served = await serveCorpusSite(site);
    onCleanup(`${site.name} site`, () => served.close());
    await read(site.brand, served.url, site.questions);
  }
  return examples;
}



function fit(examples: Example[], siteNames: string[]): void {
  const rows = examples.flatMap((e) => e.rows);
  const labels = examples.flatMap((e) => e.labels);
  say(`${rows.length} candidates, ${labels.filter((y) => y === 1).length} positive; facts with a positive candidate: `
    + `${examples.filter((e) => e.question.type === 'fact' && e.labels.includes(1)).length} of ${examples.filter((e) => e.question.type === 'fact').length}`);
  const { weights, bias } = fitReader(examples.filter((e) => e.question.type === 'unknown' || e.labels.includes(1))
    .map((e) => ({ rows: e.rows, positive: e.labels.map((y) => y === 1) })));
  const fitted: ReaderModel = { features: FEATURES, weights, bias, threshold: 0 };
  // The best candidate of each question, and whether it is right.
  const bests = examples.map((e) => {
    const p = readerProbabilities(e.inputs, fitted);
    const best = p.reduce((b, x, i) => (x > (p[b] ?? -1) ? i : b), -1);
    // Whether some candidate answers (not "none of them"), and whether the best one is right.
    return { fact: e.question.type === 'fact', p: p.reduce((sum, x) => sum + x, 0), right: best >= 0 && e.labels[best] === 1 };
  });
  let threshold = 0.5;
  let top = -Infinity;
  for (let t = 0.02; t < 0.99; t += 0.01) {
    const utility = bests.reduce((u, b) => u + (b.p >= t ? (b.right ? 1 : -1) : (b.fact ? 0 : 1)), 0);
    if (utility > top) [top, threshold] = [utility, Math.round(t * 100) / 100];
  }
  const answered = bests.filter((b) => b.p >= threshold);
  say(`threshold ${threshold}: facts answered right ${answered.filter((b) => b.fact && b.right).length} of ${bests.filter((b) => b.fact).length}, `
    + `unknowns admitted ${bests.filter((b) => !b.fact && b.p < threshold).length} of ${bests.filter((b) => !b.fact).length}, wrong answers ${answered.filter((b) => !b.right).length}`);
  const model: ReaderModel = { features: FEATURES, weights: weights.map((w) => Math.round(w * 1e4) / 1e4), bias: Math.round(bias * 1e4) / 1e4, threshold };
  say(FEATURES.map((f, i) => `${f} ${model.weights[i]}`).join(', ') + `, bias ${model.bias}`);
  writeFileSync(MODEL_FILE, `import type { ReaderModel } from './reader.ts';

/**
 * The reader's model. Written by \`node scripts/run.mjs bench train-reader\` (bench/train-reader.ts) from the
 * development sites of the answers corpus (${siteNames.join(', ')}); do not edit by hand.
 */
export const READER_MODEL: ReaderModel = {
  features: ${JSON.stringify(model.features)},
  weights: ${JSON.stringify(model.weights)},
  bias: ${model.bias},
  threshold: ${model.threshold},
};
`);
  say(`written: ${MODEL_FILE}`);
}

await runBenchmark(main);
