/**
 * The steps of one crawl of a site (the `crawl:<site>` workflow's activities delegate here, issue 41): prepare the next
 * index generation, fetch the site into it, swap it in or record the failure, and a Schedule's tick.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { Db } from '../db/index.ts';
import { readAfterCommit } from '../db/commit-gate.ts';
import { workflowIds } from '../temporal/ids.ts';
import {
  findSiteById, lockSiteById, markSiteCrawled, markSiteCrawling, markSiteFailed, markSiteQueued,
} from '../db/sites.ts';
import {
  carryUnchangedPage, chunksWithoutVectors, clearPassagesEmbedding, countChunksWaiting, countPagesOfGeneration, deletePagesBeforeGeneration,
  deletePagesFromGeneration, insertFetchedPage, pagesOfGeneration, storeChunkVectors, validatorsOfGeneration,
} from '../db/site-pages.ts';
import { nextCrawlAt } from '../domain/crawl-cadence.ts';
import { deleteCrawlSchedule, startCrawl, syncCrawlSchedule } from './crawls.ts';
import { languageOfText } from '../answers/phrases.ts';
import { chunkSections, crawl, isTransientFailure, type CrawlResult } from '../crawler/index.ts';
import { embedPassages, sentenceEncoderOn } from '../answers/meaning.ts';
import { OutboundTargetError, outboundPolicy } from '../net/outbound.ts';
import type { FamilyDeps } from '../deps.ts';

/** The caps of one crawl, fixed when it is requested (so a retry runs with the same ones). */
export interface CrawlLimits {
  maxPages: number; maxDepth: number; maxPageBytes: number; maxDurationMs: number;
  delayMs: number; concurrency: number; allowPrivate: boolean;
}

export interface CrawlSummary {
  /** Pages in the new index (fetched and reused). */
  pages: number;
  unchanged: number;
  failed: number;
  stoppedBy: string;
  firstError: string | null;
}

/** What the activity hands a crawl: its heartbeat (progress) and its cancellation. */
export interface CrawlActivityContext { heartbeat(progress: unknown): void; signal: AbortSignal }

export interface CrawlStepDeps extends FamilyDeps {
  /**
   * In the transaction that swaps an agent's first index in: what an agent whose site is now indexed becomes (a draft
   * turns active, with its event). The agents family says it (`activities/crawl.ts` wires it), not this one.
   */
  siteIndexed(tx: Db, orgId: string, agentId: string): Promise<unknown>;
}

/** Marks the site crawling and clears what an interrupted earlier crawl left of the next generation. */
export async function prepareCrawl(deps: CrawlStepDeps, input: { siteId: string }): Promise<{ url: string; generation: number } | null> {
  const { sql } = deps;
  // The crawl starts inside the transaction that inserts (or repoints) its site: the commit gate waits for its end,
  // so the site is there with its new URL, or was never committed (then it counts as deleted).
  const site = await readAfterCommit(sql, workflowIds.crawl(input.siteId), (tx) => findSiteById(tx, input.siteId));
  if (!site) return null;
  const generation = site.generation + 1;
  await deletePagesFromGeneration(sql, site.id, generation);
  await markSiteCrawling(sql, site.id);
  return { url: site.url, generation };
}

/**
 * Fetches the site into `generation`, heartbeating progress. A retry (the worker died) starts
 * from the pages already stored: they are neither fetched nor stored again.
 */
export async function runCrawl(deps: CrawlStepDeps, input: { siteId: string; generation: number; url: string; limits: CrawlLimits },
  ctx: CrawlActivityContext): Promise<CrawlSummary> {
  const { sql } = deps;
  const { siteId, generation } = input;
  const done = await pagesOfGeneration(sql, siteId, generation);
  const previous = new Map((await validatorsOfGeneration(sql, siteId, generation - 1))
    .map((p) => [p.url, { etag: p.etag, lastModified: p.last_modified, links: p.links }]));
  const progress = { resumed: done.length, stored: 0, unchanged: 0, fetched: 0, queued: 0, failed: 0 };
  // Every stored page and every finished request beats (the SDK throttles the calls). Requests
  // end within 3 x 20 s, so the workflow's heartbeat timeout (2 minutes) only fires when the
  // worker is gone.
  const beat = () => ctx.heartbeat(progress);
  let result;
  try {
    result = await crawl({
      startUrl: input.url, ...input.limits, exceptions: outboundPolicy(deps.config).exceptions, done, previous, signal: ctx.signal,
    }, async (page) => {
      if (page.status === 'unchanged') {
        await carryUnchangedPage(sql, siteId, generation, page);
        progress.unchanged++;
      } else {
        // Its passages' full text is read in the page's language (French pages are stemmed as French). Their vectors
        // come after the site is ready (`fillPassageVectors`): encoding them here made a crawl over 100 times slower (issue 48).
        const language = languageOfText(page.text) === 'fr' ? 'french' : 'english';
        await insertFetchedPage(sql, siteId, generation, page, chunkSections(page.text, page.title), language, previous.has(page.url));
      }
      progress.stored++;
      beat();
    }, (p) => {
      Object.assign(progress, p);
      beat();
    });
  } catch (err) {
    // A refused target or a URL the crawler cannot read (TypeError, RangeError) answers the same every time.
    if (err instanceof OutboundTargetError || err instanceof TypeError || err instanceof RangeError) {
      throw ApplicationFailure.nonRetryable(err.message, 'CrawlRefused');
    }
    throw err;
  }
  // Interrupted (the worker is stopping, or the crawl was cancelled): this attempt fails, so
  // the retry resumes from what is stored, instead of a partial index being swapped in.
  if (result.stoppedBy === 'aborted') throw ctx.signal.reason ?? new Error('the crawl was interrupted');
  const summary = {
    pages: await countPagesOfGeneration(sql, siteId, generation), unchanged: result.unchanged, failed: result.failed, stoppedBy: result.stoppedBy,
    firstError: firstErrorOf(result),
  };
  if (summary.pages === 0) throw noPageFailure(result, summary.firstError);
  return summary;
}

/**
 * Swaps the new generation in (one transaction: queries see the old index or the new one),
 * drops the old, and, on an agent's first crawl, makes a draft agent active with its event.
 * `more`: another pass follows (a re-crawl was asked for meanwhile), so the site stays
 * `crawling`, with this pass's time as last_crawled_at.
 */
export async function finishCrawl(deps: CrawlStepDeps, input: { siteId: string; generation: number; summary: CrawlSummary; more?: boolean }): Promise<void> {
  const { sql } = deps;
  const result = await sql.begin(async (tx) => {
    const site = await lockSiteById(tx, input.siteId);
    if (!site) return null;
    const now = new Date();
    const crawled = await markSiteCrawled(tx, site.id, {
      generation: input.generation, pages: input.summary.pages, at: now, nextCrawlAt: nextCrawlAt(site.crawl_cadence, now),
      more: input.more === true, vectorsFollow: sentenceEncoderOn(),
    });
    await deletePagesBeforeGeneration(tx, site.id, input.generation);
    if (site.widget_id) await deps.siteIndexed(tx, site.orgId, site.widget_id);
    return { site: crawled };
  });
  if (!result) return;
  await syncCrawlSchedule(deps, sql, result.site);
}

/** Passages encoded per step of `fillPassageVectors`: a heartbeat and a commit each (seconds apart on a loaded machine). */
const VECTOR_STEP = 16;

/** Where `fillPassageVectors` is: the generation it fills and the last passage it read (its heartbeat, kept across retries). */
export interface VectorProgress { generation: number; afterId: string; stored: number }

/**
 * Computes the vectors of the passages of the index a site serves that have none yet (stored since the site became
 * ready, issue 48), in id order, committing them and the site's `passages_embedding` step by step: a retry resumes
 * after the last passage of its heartbeat. It stops, leaving the rest to the next crawl, when the site is asked to be
 * crawled again (`queued`), is crawling, serves another generation, or is gone. When the encoder fails, the attempt
 * fails and its retry resumes (after the activity's last retry, the passages left are found by their words only).
 */
export async function fillPassageVectors(deps: CrawlStepDeps, input: { siteId: string },
  ctx: CrawlActivityContext & { resumeFrom?: VectorProgress }): Promise<{ stored: number; stoppedBy: 'done' | 'requeued' }> {
  const { sql } = deps;
  let progress: VectorProgress | undefined = ctx.resumeFrom;
  let counted: number | undefined;
  for (;;) {
    const site = await findSiteById(sql, input.siteId);
    if (!site || site.status === 'queued' || site.status === 'crawling') return { stored: progress?.stored ?? 0, stoppedBy: 'requeued' };
    if (progress?.generation !== site.generation) progress = { generation: site.generation, afterId: '0', stored: 0 };
    if (!sentenceEncoderOn()) {
      await clearPassagesEmbedding(sql, site.id, site.generation);
      return { stored: 0, stoppedBy: 'done' };
    }
    // Counted once per attempt (and generation), each step then subtracting what it stored: counting in every step
    // read all the passages left, O(n^2 / 16) over a site of 11,000 passages.
    if (counted !== site.generation) await countChunksWaiting(sql, site.id, (counted = site.generation), progress.afterId);
    if (ctx.signal.aborted) throw ctx.signal.reason ?? new Error('filling the vectors was interrupted');
    const rows = await chunksWithoutVectors(sql, site.id, site.generation, progress.afterId, VECTOR_STEP);
    const vectors = rows.length ? await embedPassages(rows.map((c) => (c.section ? `${c.section}\n${c.text}` : c.text))) : [];
    // The encoder failed (it is started afresh on the next call): this attempt fails, and the retry resumes here.
    if (!vectors) throw ApplicationFailure.retryable('the sentence encoder failed', 'EncoderFailed');
    const afterId = rows.at(-1)?.id ?? progress.afterId;
    const stored = rows.map((r, i) => ({ id: r.id, embedding: vectors[i]! }));
    await storeChunkVectors(sql, site.id, site.generation, stored);
    progress = { generation: site.generation, afterId, stored: progress.stored + stored.length };
    ctx.heartbeat(progress);
    if (rows.length < VECTOR_STEP) return { stored: progress.stored, stoppedBy: 'done' };
  }
}

/** Records a failed crawl: the index served now stays; the partial generation goes. */
export async function failCrawl(deps: CrawlStepDeps, input: { siteId: string; generation: number; error: string }): Promise<void> {
  const { sql } = deps;
  const site = await sql.begin(async (tx) => {
    const current = await lockSiteById(tx, input.siteId);
    if (!current) return null;
    const failed = await markSiteFailed(tx, current.id, { error: input.error, nextCrawlAt: nextCrawlAt(current.crawl_cadence, new Date()) });
    await deletePagesFromGeneration(tx, current.id, input.generation);
    return failed;
  });
  if (site) await syncCrawlSchedule(deps, sql, site);
}

/**
 * A Schedule's tick: crawl the site, or join a crawl already running (it is as fresh as a due
 * re-crawl asks); a deleted site's Schedule removes itself.
 */
export async function requestScheduledCrawl(deps: CrawlStepDeps, input: { siteId: string }): Promise<void> {
  const { sql } = deps;
  const site = await markSiteQueued(sql, input.siteId);
  if (!site) {
    await deleteCrawlSchedule(deps, input.siteId);
    return;
  }
  await startCrawl(deps, sql, site, { join: true });
}

function firstErrorOf(result: CrawlResult): string | null {
  if (result.robots === 'unreachable') return 'robots.txt could not be read (the server answered 5xx or was unreachable), which forbids crawling (RFC 9309)';
  if (result.failures[0]) return `${result.failures[0].reason} (${result.failures[0].url})`;
  if (result.skips[0]) return `the page was skipped: ${result.skips[0].reason.replace(/_/g, ' ')} (${result.skips[0].url})`;
  return null;
}

/**
 * A crawl that indexed no page. When what stopped it may pass (a timeout, a reset connection, a 5xx,
 * robots.txt unreachable), the activity is retried by its policy; a 404, 410, a page that is not HTML
 * or a refused target would answer the same, so it is not (issue 40, I13).
 */
function noPageFailure(result: CrawlResult, firstError: string | null): ApplicationFailure {
  const message = firstError ?? 'no page of the site could be fetched';
  const transient = result.robots === 'unreachable' || (result.failures[0] !== undefined && isTransientFailure(result.failures[0].reason));
  return transient ? ApplicationFailure.retryable(message, 'CrawlUnavailable') : ApplicationFailure.nonRetryable(message, 'CrawlFailed');
}


