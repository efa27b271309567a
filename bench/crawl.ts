/**
 * Crawler benchmark: `npm run bench:crawl` (or `node --import tsx bench/crawl.ts`).
 *
 * A generated local website (src/infra/fixture-site.ts: BENCH_PAGES pages, default 1000, of
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
 * Environment: BENCH_PAGES, BENCH_CONCURRENCY (default 8), BENCH_RUNS, BENCH_MARKUP (default
 * `semantic,div`).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

type Engine = 'ours' | 'crawlee';
interface RunResult { engine: Engine; pages: number; seconds: number; cpuSeconds: number; maxRssKb: number; textChars: number; chunks: number }

const SELF = fileURLToPath(import.meta.url);
const ROOT = dirname(dirname(SELF));
const TARGET_SPEED_RATIO = 1.5;
const TARGET_RSS_RATIO = 1;

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
  const { startFixtureSite } = await import('../src/infra/fixture-site.ts');
  const pages = positiveInt('BENCH_PAGES', 1000);
  const concurrency = positiveInt('BENCH_CONCURRENCY', 8);
  const runs = positiveInt('BENCH_RUNS', 3);
  const markups = (process.env.BENCH_MARKUP ?? 'semantic,div').split(',').map((m) => m.trim());
  let missed = false;
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

/** Prints the medians and ratios; false when a target is missed. */
function report(results: RunResult[], say: (line?: string) => void): boolean {
  const summary = (engine: Engine) => {
    const mine = results.filter((r) => r.engine === engine);
    return { rate: median(mine.map((r) => r.pages / r.seconds)), rssMb: median(mine.map((r) => r.maxRssKb / 1024)) };
  };
  const ours = summary('ours');
  const crawlee = summary('crawlee');
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

const [mode, engine, url, pagesArg, concurrencyArg] = process.argv.slice(2);
if (mode === 'child') {
  await child(engine!, url!, Number(pagesArg), Number(concurrencyArg));
} else {
  process.exit(await parent());
}
