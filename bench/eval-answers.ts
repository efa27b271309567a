/**
 * Answers evaluation, by site: `npm run eval:answers`.
 *
 * Runs the corpus of `bench/answers/sites/` (bench/answers/corpus.ts) through the real service (API
 * and worker, a scratch PostgreSQL database, an in-memory Temporal dev server), once per runtime:
 * - `offline`: the runtime with no LLM. Each site is crawled by the real crawl workflow, then every
 *   question asked as a visitor of the widget would, one public conversation each. Prints, per site
 *   and per split, facts right, unknowns admitted, invented facts (an unknown answered), facts of
 *   another entity given as the one asked about, and p50 / p95 latency of a message's answer.
 * - `learned`: the same with ANSWER_READER=learned, the reader fitted on the development sites
 *   (bench/train-reader.ts).
 * - `llm`: LLM_BASE_URL set to a stand-in model that searches with the visitor's words and echoes the
 *   passages it was given (bench/answers/echo-llm.ts): recall@k is the share of fact questions whose
 *   passages hold the fact.
 *
 * Test sites (`test-*`) are read by no one who changes the engine: only their scores are printed.
 * Dev sites' wrong replies are printed with EVAL_SHOW=1 (EVAL_SHOW=all: every reply).
 * EVAL_SITES=dev-a,dev-b runs those sites; EVAL_RUNTIMES=offline,learned (or any of offline, learned, llm) those runtimes.
 *
 * Targets (issue 39, on the test split): offline facts >= 85 %, unknowns >= 95 %, no fact of
 * another entity, French sites >= 80 %; recall@5 >= 95 %; p95 <= 150 ms. A missed target is a
 * report, not a failure. The figures of the three tuned fixtures of earlier passes are
 * `node scripts/run.mjs bench eval-answers-legacy`.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { startService } from '../src/service.ts';
import { createOrganization } from '../src/auth/keys.ts';
import { figure, freshDatabase, keptDatabase, onCleanup, percentile, runBenchmark, say, startTemporal } from './harness.ts';
import { crawledAgent, judge, loadCorpus, serveCorpusSite, uploadCorpusFiles, type CorpusQuestion, type CorpusSite, type Judged } from './answers/corpus.ts';
import { startEchoLlm } from './answers/echo-llm.ts';

/** `offline`: the offline runtime with its default reader; `learned`: the same with ANSWER_READER=learned; `llm`: the LLM path. */
type RuntimeName = 'offline' | 'learned' | 'llm';

interface Verdict extends Judged { site: CorpusSite; question: CorpusQuestion; reply: string; ms: number }

const SHOW = process.env.EVAL_SHOW ?? '';
/**
 * EVAL_REUSE=<file>: for iterating on the reader, the crawled database is kept and named in that file (its URL, the
 * organization's token and each site's widget key per runtime); the next run with the same file asks again without
 * crawling. Only for changes that leave crawling and chunking alone; the file's database is never dropped.
 */
const REUSE = process.env.EVAL_REUSE ?? '';
interface Reused { databaseUrl: string; token: string; widgets: Record<string, string> }
function readReused(runtime: string): Reused | null {
  if (!REUSE || !existsSync(REUSE)) return null;
  return (JSON.parse(readFileSync(REUSE, 'utf8')) as Record<string, Reused>)[runtime] ?? null;
}
function writeReused(runtime: string, reused: Reused): void {
  if (!REUSE) return;
  const all = existsSync(REUSE) ? JSON.parse(readFileSync(REUSE, 'utf8')) as Record<string, Reused> : {};
  all[runtime] = reused;
  writeFileSync(REUSE, JSON.stringify(all, null, 2));
}
const only = process.env.EVAL_SITES?.split(',').map((s) => s.trim()).filter(Boolean);
const runtimes = (process.env.EVAL_RUNTIMES?.split(',').map((s) => s.trim()) ?? ['offline', 'learned', 'llm'])
  .filter((r): r is RuntimeName => r === 'offline' || r === 'learned' || r === 'llm');

async function json(res: Response): Promise<any> {
  const text = await res.text();
  if (!res.ok) throw new Error(`${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const corpus = loadCorpus(only);
  if (!corpus.length) throw new Error('no site in bench/answers/sites/ (or none named by EVAL_SITES)');
  say(`${corpus.length} sites: ${corpus.filter((s) => s.split === 'dev').length} dev, ${corpus.filter((s) => s.split === 'test').length} test`);
  const temporalAddress = await startTemporal();
  const results = new Map<RuntimeName, Verdict[]>();
  for (const runtime of runtimes) {
    say();
    say(`## runtime: ${runtime}`);
    const verdicts = await runAll(runtime, corpus, temporalAddress);
    results.set(runtime, verdicts);
    report(runtime, corpus, verdicts);
  }
  summary(corpus, results);
}

async function runAll(runtime: RuntimeName, corpus: CorpusSite[], temporalAddress: string): Promise<Verdict[]> {
  const reused = readReused(runtime);
  const databaseUrl = reused?.databaseUrl ?? (REUSE ? await keptDatabase() : await freshDatabase());
  const echo = runtime === 'llm' ? await startEchoLlm() : null;
  const settings = {
    ALLOW_PRIVATE_NETWORK_TARGETS: true, CRAWL_DELAY_MS: 0, SMTP_LISTEN_PORT: 0, RATE_LIMIT_PER_MINUTE: 1_000_000, PUBLIC_RATE_LIMIT_PER_MINUTE: 1_000_000,
    // A queue prefix of its own per runtime: the runs share the Temporal server.
    TASK_QUEUE_PREFIX: `eval-${runtime}`,
    ...(echo ? { LLM_BASE_URL: echo.baseUrl, LLM_API_KEY: 'echo', LLM_MODEL: 'echo' } : {}),
    ANSWER_READER: runtime === 'learned' ? 'learned' as const : 'ranked' as const,
  };
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', LLM_BASE_URL: '', LLM_API_KEY: '' }, { PORT: 0, HOST: '127.0.0.1', ...settings });
  const service = await startService({ config, databaseUrl, temporalAddress, log: createLogger('silent'), api: true, worker: true });
  const token = reused?.token ?? (await service.sql.begin((tx) => createOrganization(tx, `answers-eval-${runtime}`))).token;
  const keep: Reused = { databaseUrl, token, widgets: { ...reused?.widgets } };
  if (!service.url) throw new Error('the service started without its API');
  const rest = `${service.url}/api/v1/rest`;
  const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const verdicts: Verdict[] = [];
  try {
    for (const site of corpus) {
      verdicts.push(...await askSite(site, rest, auth, `${service.url}/api/v1/public/widgets`, keep));
      writeReused(runtime, keep);
    }
  } finally {
    await service.stop();
    await echo?.close();
  }
  return verdicts;
}

async function askSite(site: CorpusSite, rest: string, auth: Record<string, string>, widgets: string, keep: Reused): Promise<Verdict[]> {
  const served = await serveCorpusSite(site);
  onCleanup(`${site.name} site`, () => served.close());
  try {
    let publicKey = keep.widgets[site.name];
    if (!publicKey) {
      const { agent, pages, seconds } = await crawledAgent(rest, auth, site.brand, served.url, { default_language: site.language });
      say(`${site.name}: crawled ${pages} of ${site.pages} pages in ${seconds.toFixed(1)} s`);
      // A site whose key facts live only in the documents it uploads (issue 46): they are read before any question.
      await uploadCorpusFiles(rest, auth, agent.id, site);
      if (site.files.length) say(`${site.name}: read ${site.files.length} uploaded file(s)`);
      publicKey = agent.public_key as string;
      keep.widgets[site.name] = publicKey;
    }
    const pub = `${widgets}/${publicKey}`;
    const verdicts: Verdict[] = [];
    for (const question of site.questions) {
      const conversation = await json(await fetch(`${pub}/conversations`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ page_url: `${served.url}/` }),
      }));
      const asked = performance.now();
      const sent = await json(await fetch(`${pub}/conversations/${conversation.conversation_id}/messages`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'x-visitor-token': conversation.visitor_token }, body: JSON.stringify({ text: question.q }),
      }));
      const ms = performance.now() - asked;
      const reply = (sent.messages as { role: string; text: string }[]).filter((m) => m.role === 'agent').map((m) => m.text).join('\n');
      verdicts.push({ site, question, reply, ms, ...judge(question, reply) });
    }
    return verdicts;
  } finally {
    await served.close();
  }
}

const pct = (n: number, all: number) => (all ? `${((100 * n) / all).toFixed(0)}%` : '-');
const frac = (n: number, all: number) => `${String(n).padStart(3)} / ${String(all).padEnd(3)} ${pct(n, all).padStart(4)}`;

interface Scores {
  facts: number; factsRight: number; factsWrong: number; holds: number; unknowns: number; admitted: number; invented: number; otherEntity: number;
  p50: number; p95: number;
}

function scores(vs: Verdict[]): Scores {
  const facts = vs.filter((v) => v.question.type === 'fact');
  const unknowns = vs.filter((v) => v.question.type === 'unknown');
  const ms = vs.map((v) => v.ms).sort((a, b) => a - b);
  return {
    facts: facts.length, factsRight: facts.filter((v) => v.right).length, factsWrong: facts.filter((v) => !v.right && !v.admits).length,
    holds: facts.filter((v) => v.holds).length,
    unknowns: unknowns.length, admitted: unknowns.filter((v) => v.right).length, invented: unknowns.filter((v) => v.invented).length,
    otherEntity: facts.filter((v) => v.otherEntity).length,
    p50: ms.length ? percentile(ms, 50) : 0, p95: ms.length ? percentile(ms, 95) : 0,
  };
}

function row(label: string, runtime: RuntimeName, s: Scores): string {
  const latency = `p50 ${s.p50.toFixed(0).padStart(4)} ms, p95 ${s.p95.toFixed(0).padStart(4)} ms`;
  if (runtime === 'llm') return `${label.padEnd(24)} recall@5 ${frac(s.holds, s.facts)}   ${latency}`;
  // Wrong: a fact question answered with something else than the fact (not "I don't know"); invented: an unknown answered.
  return `${label.padEnd(24)} facts ${frac(s.factsRight, s.facts)}  wrong ${String(s.factsWrong).padStart(3)}  unknowns ${frac(s.admitted, s.unknowns)}`
    + `  invented ${String(s.invented).padStart(2)}  other entity ${String(s.otherEntity).padStart(2)}  ${latency}`;
}

function report(runtime: RuntimeName, corpus: CorpusSite[], verdicts: Verdict[]): void {
  say();
  for (const site of corpus) say(row(`${site.name} (${site.language})`, runtime, scores(verdicts.filter((v) => v.site === site))));
  for (const split of ['dev', 'test'] as const) {
    const vs = verdicts.filter((v) => v.site.split === split);
    if (vs.length) say(row(`== ${split} split`, runtime, scores(vs)));
  }
  if (!SHOW) return;
  // Only dev sites' replies are ever printed.
  const shown = verdicts.filter((v) => v.site.split === 'dev' && (SHOW === 'all' || !(runtime === 'llm' ? v.holds || v.question.type === 'unknown' : v.right)));
  say();
  for (const v of shown) {
    const expected = v.question.type === 'unknown' ? 'unknown' : (v.question.expect ?? []).map((g) => g.join('|')).join(' & ');
    say(`- [${v.site.name}${v.right ? '' : ', WRONG'}${v.otherEntity ? ', OTHER ENTITY' : ''}] ${v.question.q}   (${expected}${v.question.polarity ? `; ${v.question.polarity}` : ''})`);
    say(`    ${v.reply.replace(/\n/g, '\n    ')}`);
  }
}

function summary(corpus: CorpusSite[], results: Map<RuntimeName, Verdict[]>): void {
  say();
  say('## targets (test split)');
  for (const runtime of ['offline', 'learned'] as const) {
    const offline = results.get(runtime)?.filter((v) => v.site.split === 'test');
    if (!offline?.length) continue;
    const s = scores(offline);
    const french = scores(offline.filter((v) => v.site.language === 'fr'));
    say(`${runtime}: facts ${pct(s.factsRight, s.facts)} (target 85 %): ${s.factsRight >= 0.85 * s.facts ? 'met' : 'MISSED'}`);
    say(`${runtime}: unknowns ${pct(s.admitted, s.unknowns)} (target 95 %): ${s.admitted >= 0.95 * s.unknowns ? 'met' : 'MISSED'}`);
    say(`${runtime}: facts of another entity ${s.otherEntity} (target 0): ${s.otherEntity === 0 ? 'met' : 'MISSED'}`);
    if (french.facts) say(`${runtime}: French facts ${pct(french.factsRight, french.facts)} (target 80 %): ${french.factsRight >= 0.8 * french.facts ? 'met' : 'MISSED'}`);
    figure({ measure: `answer per question, ${runtime}, p95`, value: s.p95, unit: 'ms', op: '<=', target: 150, detail: 'test split' });
  }
  const llm = results.get('llm')?.filter((v) => v.site.split === 'test');
  if (llm?.length) {
    const s = scores(llm);
    say(`LLM path recall@5 ${pct(s.holds, s.facts)} (target 95 %): ${s.holds >= 0.95 * s.facts ? 'met' : 'MISSED'}`);
  }
  if (!corpus.some((s) => s.split === 'test')) say('(no test site in this run)');
}

await runBenchmark(main);
