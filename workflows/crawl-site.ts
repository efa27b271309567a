import { ApplicationFailure, continueAsNew, defineSignal, log, proxyActivities, setHandler } from '@temporalio/workflow';
import type { CrawlActivities, CrawlLimits, CrawlSummary } from '../activities/crawl.ts';
import { workflowIds, workflowKind } from '../src/temporal/ids.ts';

export interface CrawlSiteInput { siteId: string; limits: CrawlLimits }

const { prepareCrawl, finishCrawl, failCrawl } = proxyActivities<CrawlActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
});

const { fillPassageVectors } = proxyActivities<CrawlActivities>({
  // Encoding takes about 40 to 80 ms a passage on a quiet machine; a heartbeat every step of 16 passages.
  startToCloseTimeout: '6 hours',
  heartbeatTimeout: '2 minutes',
  retry: { initialInterval: '2 seconds', maximumInterval: '1 minute', maximumAttempts: 5 },
});

/** A user asked for a crawl (again): one more pass follows the one fetching now. */
export const recrawlSignal = defineSignal('recrawl');

/**
 * Crawls a site into a new generation of its index, then swaps it in (or, on failure, keeps the
 * index served now and records the error). The fetching runs in one long activity that
 * heartbeats its progress; a worker that dies mid-crawl is replaced and the retry resumes from
 * the pages already stored, fetching none of them again. Once the site is ready, the passages
 * stored without a meaning vector get theirs (`fillPassageVectors`, resumable the same way).
 *
 * A `recrawl` signal that arrives once this pass has begun fetching asks for a pass that starts
 * after it: when this one ends (swapped in or failed) the workflow continues as new, once however
 * many signals came. One that arrives before the fetching (with the start, or while preparing)
 * is served by this pass.
 */
export async function crawlSite(input: CrawlSiteInput): Promise<CrawlSummary | null> {
  let fetching = false;
  let again = false;
  setHandler(recrawlSignal, () => { if (fetching) again = true; });
  const prepared = await prepareCrawl({ siteId: input.siteId });
  if (!prepared) return null; // the site was deleted meanwhile
  const { runCrawl } = proxyActivities<CrawlActivities>({
    // The duration cap plus time to store the last pages.
    startToCloseTimeout: input.limits.maxDurationMs + 5 * 60_000,
    // Longer than one request may take (3 x 20 s): silence means the worker is gone.
    heartbeatTimeout: '2 minutes',
    retry: { initialInterval: '2 seconds', maximumInterval: '30 seconds', maximumAttempts: 5, nonRetryableErrorTypes: ['CrawlRefused'] },
  });
  const target = { siteId: input.siteId, generation: prepared.generation };
  let summary: CrawlSummary;
  try {
    fetching = true;
    summary = await runCrawl({ ...target, url: prepared.url, limits: input.limits });
    if (summary.pages === 0) throw ApplicationFailure.nonRetryable(summary.firstError ?? 'no page of the site could be fetched', 'CrawlFailed');
  } catch (err) {
    const message = failureMessage(err);
    await failCrawl({ ...target, error: message });
    // The index served still may wait for vectors (a pass that was asked for stopped their filling).
    if (!again && (await fillVectors(input.siteId)) === 'requeued') again = true;
    if (again) return continueAsNew<typeof crawlSite>(input);
    throw ApplicationFailure.nonRetryable(message, 'CrawlFailed');
  }
  await finishCrawl({ ...target, summary, more: again });
  log.info('site crawled', { siteId: input.siteId, ...summary, again });
  if (!again && (await fillVectors(input.siteId)) === 'requeued') again = true;
  if (again) return continueAsNew<typeof crawlSite>(input);
  return summary;
}

/**
 * The site is ready (answerable by its passages' words); their vectors follow (issue 48). A crawl asked for meanwhile
 * stops it: the next pass fills what is left. Its failure fails no crawl: passages without a vector are still found.
 */
async function fillVectors(siteId: string): Promise<'done' | 'requeued'> {
  try {
    return (await fillPassageVectors({ siteId })).stoppedBy;
  } catch (err) {
    log.warn('passage vectors not filled', { siteId, error: failureMessage(err) });
    return 'done';
  }
}

function failureMessage(err: unknown): string {
  let cause: unknown = err;
  // ActivityFailure wraps the activity's own ApplicationFailure: report that one.
  while (cause && typeof cause === 'object' && 'cause' in cause && (cause as { cause?: unknown }).cause) cause = (cause as { cause: unknown }).cause;
  return cause instanceof Error ? cause.message : 'the crawl failed';
}

/** The crawl of a site: one at a time per site; a later crawl of the same site may run again. */
export const crawlSiteKind = workflowKind(crawlSite, { queue: 'crawls', reuse: 'allowDuplicate', id: workflowIds.crawl });
