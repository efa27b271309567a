/**
 * Crawler benchmark: `npm run bench:crawl` (or `node --import tsx bench/crawl.ts`).
 *
 * A generated local website (fixtures/fixture-site.ts: BENCH_PAGES pages, default 1000, of
 * 12-16 KB each with a header and navigation, an article, an aside and a footer, 10-30 links a
 * page, tracking-parameter and fragment duplicates among them), served by this process, in two
 * builds: `semantic` markup (header/nav/main/article/aside/footer elements: our extractor takes
 * the article) and `div` markup (the same pages of divs only: our extractor runs Mozilla
 * Readability, its slow path). On each, two crawlers take turns, each in a child process of its
 * own so that its peak RSS is its own:
 *
 * - ours (src/crawler): robots.txt, sitemap, politeness machinery on (delay 0), every
 *   connection through the outbound policy's agent, main-content extraction, and an onPage that
 *   chunks the text (what the service does with a page, minus the database);
 * - Crawlee's CheerioCrawler: in-memory storage, the same concurrency (as min and max, so its
 *   autoscaling does not start it lower), maxRequestsPerCrawl = BENCH_PAGES, a requestHandler that
 *   reads `$('body').text()` and enqueues same-hostname links.
 *
 * Throughput is pages handled / seconds from the crawler's construction to its end (module
 * loading excluded); peak RSS is the child's `process.resourceUsage().maxRSS` (loading
 * included: it is memory the crawler needs). Each engine runs BENCH_RUNS times (default 3,
 * alternating which goes first); medians are compared. Target: ours >= 1.5x Crawlee's pages/s
 * at no more peak RSS.
 *
 * End to end (after the engine-only cases; BENCH_E2E=0 skips it): the service as `npm start` runs
 * it (API and workers in one process of its own, on a fresh database and an in-memory Temporal dev
 * server) is asked through the API for an agent with `site_url` on the semantic site; the clock runs
 * from the POST until the site is `ready` with every page stored and its chunks indexed (one crawl
 * workflow, pages and chunks written to PostgreSQL). Its pages/s and the service process's peak RSS
 * (VmHWM: start-up included) are compared with Crawlee's engine-only medians on the same site, which
 * store nothing. Target: >= 3x Crawlee's pages/s at <= 0.7x its peak RSS (issue 48). Then, reported
 * without a target: how long after the POST every passage has its meaning vector (computed after the
 * site is ready), and the peak RSS by then.
 *
 * Environment: BENCH_PAGES, BENCH_CONCURRENCY (default 8), BENCH_RUNS, BENCH_MARKUP (default
 * `semantic,div`), BENCH_E2E (default 1), BENCH_BASELINE (a git ref: that commit's service measured end to end
 * too, alternating, see endToEnd), BENCH_E2E_RUNS (default 1), BENCH_VECTORS (default 1; 0: stop at `ready`),
 * BENCH_NODE_ARGS (node options of the service process, e.g. `--heap-prof`).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

type Engine = 'ours' | 'crawlee';
interface RunResult { engine: Engine; pages: number; seconds: number; cpuSeconds: number; maxRssKb: number; textChars: number; chunks: number }

const SELF = fileURLToPath(import.meta.url);
const ROOT = dirname(dirname(SELF));
// Issue 48's targets (the first round's were >= 1.5x at <= 1x).
const TARGET_SPEED_RATIO = 3;
const TARGET_RSS_RATIO = 0.7;

// ---- children: one crawl each, one JSON line on stdout -------------------------------------

function cpuSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1e6;
}

async function runOurs(startUrl: string, pages: number, concurrency: number): Promise<RunResult> {
  const { crawl, chunkText } = await import('../src/crawler/index.ts');
  let textChars = 0;
  let chunks = 0;
  const started = performance.now();
  const cpu = process.cpuUsage();
  const result = await crawl({ startUrl, allowPrivate: true, delayMs: 0, maxPages: pages, concurrency }, async (page) => {
    textChars += page.text.length;
    chunks += chunkText(page.text).length;
  });
  const seconds = (performance.now() - started) / 1000;
  if (result.failed > 0) throw new Error(`ours: ${result.failed} pages failed: ${JSON.stringify(result.failures.slice(0, 3))}`);
  return { engine: 'ours', pages: result.pages, seconds, cpuSeconds: cpuSince(cpu), maxRssKb: process.resourceUsage().maxRSS, textChars, chunks };
}

async function runCrawlee(startUrl: string, pages: number, concurrency: number): Promise<RunResult> {
  const { CheerioCrawler, Configuration, log, LogLevel } = await import('@crawlee/cheerio');
  log.setLevel(LogLevel.OFF);
  let handled = 0;
  let textChars = 0;
  const started = performance.now();
  const cpu = process.cpuUsage();
  const crawler = new CheerioCrawler({
    minConcurrency: concurrency,
    maxConcurrency: concurrency,
    maxRequestsPerCrawl: pages,
    async requestHandler({ $, enqueueLinks }) {
      handled++;
      textChars += $('body').text().length;
      await enqueueLinks({ strategy: 'same-hostname' });
    },
  }, new Configuration({ persistStorage: false }));
  const stats = await crawler.run([startUrl]);
  const seconds = (performance.now() - started) / 1000;
  if (stats.requestsFailed > 0) throw new Error(`crawlee: ${stats.requestsFailed} requests failed`);
  return { engine: 'crawlee', pages: handled, seconds, cpuSeconds: cpuSince(cpu), maxRssKb: process.resourceUsage().maxRSS, textChars, chunks: 0 };
}

async function child(engine: string, startUrl: string, pages: number, concurrency: number): Promise<void> {
  const result = engine === 'ours' ? await runOurs(startUrl, pages, concurrency) : await runCrawlee(startUrl, pages, concurrency);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

// ---- parent: the site, the runs, the report ---------------------------------------------------

/** Runs one engine in a fresh process (Crawlee's storage folder, unused in memory mode, in a scratch folder). */
function spawnRun(engine: Engine, startUrl: string, pages: number, concurrency: number): Promise<RunResult> {
  const scratch = mkdtempSync(join(tmpdir(), 'bench-crawl-'));
  return new Promise<RunResult>((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', SELF, 'child', engine, startUrl, String(pages), String(concurrency)], {
      cwd: ROOT,
      env: { ...process.env, CRAWLEE_STORAGE_DIR: join(scratch, 'storage'), CRAWLEE_PURGE_ON_START: 'false' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    proc.stdout.on('data', (d: Buffer) => { out += d.toString('utf8'); });
    proc.on('error', reject);
    proc.on('close', (code) => {
      rmSync(scratch, { recursive: true, force: true });
      const line = out.trim().split('\n').pop() ?? '';
      if (code !== 0 || !line.startsWith('{')) reject(new Error(`${engine} run exited ${code}: ${out.slice(-500)}`));
      else resolve(JSON.parse(line) as RunResult);
    });
  });
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

async function parent(): Promise<number> {
  const { positiveInt, say, onCleanup, cleanUp } = await import('./harness.ts');
  const { startFixtureSite } = await import('../fixtures/fixture-site.ts');
  const pages = positiveInt('BENCH_PAGES', 1000);
  const concurrency = positiveInt('BENCH_CONCURRENCY', 8);
  const runs = positiveInt('BENCH_RUNS', 3);
  const markups = (process.env.BENCH_MARKUP ?? 'semantic,div').split(',').map((m) => m.trim()).filter(Boolean);
  let missed = false;
  let crawleeSemantic: Summary | null = null;
  try {
    for (const markup of markups) {
      if (markup !== 'semantic' && markup !== 'div') throw new Error(`BENCH_MARKUP: unknown markup ${markup} (semantic, div)`);
      const site = await startFixtureSite({ pages, topology: 'graph', paragraphs: 12, markup });
      onCleanup(`fixture site (${markup})`, () => site.close());
      say();
      say(`${markup} markup: ${pages} generated pages at ${site.url}, concurrency ${concurrency}, ${runs} run(s) per crawler, delay 0`);
      const results: RunResult[] = [];
      for (let i = 0; i < runs; i++) {
        const order: Engine[] = i % 2 === 0 ? ['ours', 'crawlee'] : ['crawlee', 'ours'];
        for (const engine of order) {
          const r = await spawnRun(engine, `${site.url}/`, pages, concurrency);
          if (r.pages < pages * 0.98) throw new Error(`${engine} handled only ${r.pages} of ${pages} pages`);
          results.push(r);
          say(describeRun(i, r));
        }
      }
      missed = !report(results, say) || missed;
      if (markup === 'semantic') crawleeSemantic = summarise(results, 'crawlee');
    }
    if (process.env.BENCH_E2E !== '0') {
      const site = await startFixtureSite({ pages, topology: 'graph', paragraphs: 12, markup: 'semantic' });
      onCleanup('fixture site (end to end)', () => site.close());
      missed = !(await endToEnd(site.url, pages, concurrency, crawleeSemantic, say)) || missed;
    }
    return 0;
  } catch (err) {
    process.stderr.write(`benchmark failed: ${(err as Error).stack ?? String(err)}\n`);
    return 1;
  } finally {
    await cleanUp();
    if (missed) process.stderr.write('a target was missed\n');
  }
}

function describeRun(i: number, r: RunResult): string {
  const work = r.engine === 'ours'
    ? `${r.chunks} chunks from ${(r.textChars / 1e6).toFixed(1)} M chars of main text`
    : `${(r.textChars / 1e6).toFixed(1)} M chars of body text`;
  return `  run ${i + 1} ${r.engine.padEnd(7)} ${r.pages} pages in ${r.seconds.toFixed(2)} s = ${(r.pages / r.seconds).toFixed(0)} pages/s, `
    + `${((r.cpuSeconds * 1000) / r.pages).toFixed(1)} CPU ms/page, peak RSS ${(r.maxRssKb / 1024).toFixed(0)} MiB, ${work}`;
}

interface Summary { rate: number; rssMb: number }

/** Median pages/s and peak RSS of one engine's runs. */
function summarise(results: RunResult[], engine: Engine): Summary {
  const mine = results.filter((r) => r.engine === engine);
  return { rate: median(mine.map((r) => r.pages / r.seconds)), rssMb: median(mine.map((r) => r.maxRssKb / 1024)) };
}

/** Prints the medians and ratios; false when a target is missed. */
function report(results: RunResult[], say: (line?: string) => void): boolean {
  const ours = summarise(results, 'ours');
  const crawlee = summarise(results, 'crawlee');
  const speed = ours.rate / crawlee.rate;
  const rss = ours.rssMb / crawlee.rssMb;
  const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
  say('crawler    pages/s   peak RSS (medians)');
  say(`ours      ${ours.rate.toFixed(0).padStart(8)}   ${ours.rssMb.toFixed(0).padStart(5)} MiB`);
  say(`crawlee   ${crawlee.rate.toFixed(0).padStart(8)}   ${crawlee.rssMb.toFixed(0).padStart(5)} MiB`);
  say();
  say(`speed ratio (ours / crawlee): ${speed.toFixed(2)}  target >= ${TARGET_SPEED_RATIO}: ${verdict(speed >= TARGET_SPEED_RATIO)}`);
  say(`peak RSS ratio (ours / crawlee): ${rss.toFixed(2)}  target <= ${TARGET_RSS_RATIO}: ${verdict(rss <= TARGET_RSS_RATIO)}`);
  return speed >= TARGET_SPEED_RATIO && rss <= TARGET_RSS_RATIO;
}

interface EndToEndRun { seconds: number; rate: number; stored: number; chunks: number; idleRssMb: number; peakRssMb: number; cpuSeconds: number }

/** user + system CPU seconds of a process so far (/proc/<pid>/stat: utime and stime in clock ticks of 1/100 s). */
function cpuSecondsOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/**
 * The end-to-end case: through the API, from POST /agents with site_url to a `ready` site with every
 * page stored and indexed, on the service in its own process. False when a target is missed.
 * BENCH_BASELINE=<git ref>: that commit of the service is measured too, alternating with this checkout
 * (BENCH_E2E_RUNS rounds each, default 1; the baseline first in odd rounds), on the same site and Temporal
 * server, each run on a fresh database and in a fresh process. BENCH_VECTORS=0: the service is stopped once
 * the site is ready instead of waiting for every passage's vector (minutes on this machine).
 */
async function endToEnd(siteUrl: string, pages: number, concurrency: number, crawlee: Summary | null, say: (line?: string) => void): Promise<boolean> {
  const { figure, positiveInt, startTemporal } = await import('./harness.ts');
  const baselineRef = process.env.BENCH_BASELINE;
  const baselineMain = baselineRef ? (await import('./baseline.ts')).buildBaseline(baselineRef) : null;
  const rounds = positiveInt('BENCH_E2E_RUNS', 1);
  say();
  say(`end to end: POST /agents {site_url} on ${pages} semantic pages, through the service (API + workers in one process), concurrency ${concurrency}`
    + (baselineMain ? `, alternating with the baseline ${baselineRef}, ${rounds} round(s)` : ''));
  const temporalAddress = await startTemporal();
  const ours: EndToEndRun[] = [];
  const theirs: EndToEndRun[] = [];
  for (let i = 0; i < rounds; i++) {
    const order: ('this' | 'baseline')[] = baselineMain ? (i % 2 === 0 ? ['baseline', 'this'] : ['this', 'baseline']) : ['this'];
    for (const which of order) {
      const main = which === 'baseline' ? baselineMain! : undefined;
      const run = await endToEndRun(siteUrl, pages, concurrency, temporalAddress, main, `round ${i + 1}, ${which === 'baseline' ? `baseline ${baselineRef}` : 'this checkout'}`, say);
      (which === 'baseline' ? theirs : ours).push(run);
    }
  }
  const rate = median(ours.map((r) => r.rate));
  const peak = median(ours.map((r) => r.peakRssMb));
  if (baselineMain) {
    const ratio = (f: (r: EndToEndRun) => number) => median(ours.map((r, i) => f(r) / f(theirs[i]!)));
    say(`  this checkout / baseline ${baselineRef} (medians of ${rounds} round(s) of ratios): pages/s ${ratio((r) => r.rate).toFixed(3)}, `
      + `peak RSS ${ratio((r) => r.peakRssMb).toFixed(3)} (${ours.map((r) => r.peakRssMb.toFixed(0)).join(', ')} against ${theirs.map((r) => r.peakRssMb.toFixed(0)).join(', ')} MiB), `
      + `peak over idle ${ratio((r) => r.peakRssMb - r.idleRssMb).toFixed(3)}, CPU ${ratio((r) => r.cpuSeconds).toFixed(3)}`);
  }
  if (!crawlee) {
    say('  (no Crawlee semantic run to compare with: BENCH_MARKUP lacks semantic)');
    return true;
  }
  const speed = rate / crawlee.rate;
  const rss = peak / crawlee.rssMb;
  say(`  against Crawlee's engine-only medians (${crawlee.rate.toFixed(0)} pages/s, ${crawlee.rssMb.toFixed(0)} MiB, storing nothing):`);
  const against = `${rate.toFixed(0)} against ${crawlee.rate.toFixed(0)} pages/s, ${peak.toFixed(0)} against ${crawlee.rssMb.toFixed(0)} MiB`;
  figure({ measure: 'crawl end to end / Crawlee engine, speed', value: speed, unit: 'x', op: '>=', target: TARGET_SPEED_RATIO, detail: against });
  figure({ measure: 'crawl end to end / Crawlee engine, peak RSS', value: rss, unit: 'x', op: '<=', target: TARGET_RSS_RATIO, detail: against });
  return speed >= TARGET_SPEED_RATIO && rss <= TARGET_RSS_RATIO;
}

/** One end-to-end run on a fresh database and a fresh service process (`main`: a baseline's build). */
async function endToEndRun(siteUrl: string, pages: number, concurrency: number, temporalAddress: string, main: string | undefined, label: string,
  say: (line?: string) => void): Promise<EndToEndRun> {
  const { freshDatabase, memoryOf, startServiceProcess } = await import('./harness.ts');
  const { createSql } = await import('../src/db/index.ts');
  const { createOrganization } = await import('../src/auth/keys.ts');
  const databaseUrl = await freshDatabase();
  const service = await startServiceProcess({
    databaseUrl, temporalAddress, main, nodeArgs: process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean),
    env: { ALLOW_PRIVATE_NETWORK_TARGETS: 'true', CRAWL_DELAY_MS: '0', CRAWL_CONCURRENCY: String(concurrency), CRAWL_MAX_PAGES: String(pages) },
  });
  const sql = createSql(databaseUrl, { max: 1 });
  try {
    const org = await sql.begin((tx) => createOrganization(tx, 'bench-crawl'));
    const headers = { authorization: `Bearer ${org.token}`, 'content-type': 'application/json' };
    const before = memoryOf(service.pid);
    const idleRss = before?.rssMb ?? NaN;
    const cpuBefore = cpuSecondsOf(service.pid);
    const started = performance.now();
    const res = await fetch(`${service.url}/api/v1/rest/agents`, { method: 'POST', headers, body: JSON.stringify({ name: 'Bench crawl', site_url: `${siteUrl}/` }) });
    if (res.status !== 201) throw new Error(`POST /agents: ${res.status} ${await res.text()}`);
    const agent = await res.json() as { id: string };
    let site: { id: string; status: string; pages_crawled: number; passages: number; passages_embedding: number } | undefined;
    let sampledPeak = 0;
    for (;;) {
      const list = await (await fetch(`${service.url}/api/v1/rest/sites?widget_id=${agent.id}`, { headers })).json() as { data: typeof site[] };
      site = list.data[0];
      if (site && (site.status === 'ready' || site.status === 'failed')) break;
      if (performance.now() - started > 30 * 60_000) throw new Error('the site was not ready within 30 minutes');
      sampledPeak = Math.max(sampledPeak, memoryOf(service.pid)?.rssMb ?? 0);
      await new Promise((r) => setTimeout(r, 100));
    }
    const seconds = (performance.now() - started) / 1000;
    // Read at once: the vectors' encoder starts loading right after `ready`.
    const memory = memoryOf(service.pid);
    const cpuSeconds = cpuSecondsOf(service.pid) - cpuBefore;
    const [counts] = await sql<{ stored: number; chunks: number }[]>`
      select (select count(*)::int from site_pages where site_id = ${site.id}) as stored,
             (select count(*)::int from page_chunks where site_id = ${site.id}) as chunks`;
    const { stored, chunks } = counts!;
    if (site.status !== 'ready' || stored < pages * 0.98) throw new Error(`the site ended ${site.status} with ${stored} of ${pages} pages stored`);
    const rate = stored / seconds;
    say(`  ${label}: ${stored} pages stored, ${chunks} chunks indexed, site ready in ${seconds.toFixed(2)} s = ${rate.toFixed(0)} pages/s; `
      + `service RSS ${idleRss.toFixed(0)} MiB before (peak so far ${before?.peakRssMb.toFixed(0) ?? '?'}), peak ${memory?.peakRssMb.toFixed(0) ?? '?'} MiB (start-up included; highest sampled every 100 ms `
      + `${sampledPeak.toFixed(0)}), CPU ${cpuSeconds.toFixed(2)} s`);
    if (process.env.BENCH_VECTORS !== '0') {
      // Then the passages' meaning vectors, computed after the site is ready (issue 48): until they are all there, the
      // site answers by its passages' words only.
      const waiting = site.passages_embedding;
      while (site.passages_embedding > 0) {
        if (performance.now() - started > 60 * 60_000) throw new Error('the passages were not embedded within an hour');
        await new Promise((r) => setTimeout(r, 500));
        site = (await (await fetch(`${service.url}/api/v1/rest/sites/${site.id}`, { headers })).json()) as NonNullable<typeof site>;
      }
      const hybrid = (performance.now() - started) / 1000;
      const [vectors] = await sql<{ n: number }[]>`select count(*)::int as n from page_chunks where site_id = ${site.id} and embedding is not null`;
      say(`  then ${vectors!.n} of ${site.passages} passages embedded (${waiting} waited after ready): searched by meaning too ${hybrid.toFixed(1)} s `
        + `after the POST (${((hybrid - seconds) * 1000 / Math.max(waiting, 1)).toFixed(1)} ms a passage), service peak RSS by then `
        + `${memoryOf(service.pid)?.peakRssMb.toFixed(0) ?? '?'} MiB`);
    }
    return { seconds, rate, stored, chunks, idleRssMb: idleRss, peakRssMb: memory?.peakRssMb ?? NaN, cpuSeconds };
  } finally {
    await sql.end({ timeout: 5 });
    await service.stop();
  }
}

const [mode, engine, url, pagesArg, concurrencyArg] = process.argv.slice(2);
if (mode === 'child') {
  await child(engine!, url!, Number(pagesArg), Number(concurrencyArg));
} else {
  process.exit(await parent());
}
