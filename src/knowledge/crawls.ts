import { MONTHS, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Db } from '../db/index.ts';
import { siteOwnerLabel, type SiteRecord } from '../db/sites.ts';
import { scheduleIds } from '../temporal/ids.ts';
import { deleteSchedule, oneLine, scheduleWorkflow, signalWithStart, startWorkflow, unscheduleWorkflow } from '../temporal/start.ts';
import { crawlSiteKind, recrawlSignal, type CrawlSiteInput } from '../../workflows/crawl-site.ts';
import { scheduledCrawlKind } from '../../workflows/scheduled-crawl.ts';

/**
 * Starting crawls and keeping each site's re-crawl Schedule in step with its cadence. A crawl is
 * the workflow `crawl:<site id>`, one at a time per site. A user asking again while one runs is
 * remembered (the `recrawl` signal): the running crawl makes one more pass when it ends, however
 * often it was asked meanwhile. A Schedule's tick joins a running crawl instead.
 */

export interface CrawlDeps { temporal: Client; config: Config; log: Logger }

type CrawlSite = Pick<SiteRecord, 'id' | 'orgId' | 'widget_id' | 'kb_id' | 'url'>;

const hostOf = (url: string) => { try { return new URL(url).host; } catch { return url; } };

/** The one line the Web UI shows for a site's crawl: "Crawl of acme.com for agent Front desk". */
async function crawlSummary(db: Db, site: CrawlSite, what = 'Crawl'): Promise<string> {
  return oneLine(`${what} of ${hostOf(site.url)} for ${await siteOwnerLabel(db, site)}`);
}

/** What the crawl workflow takes: the site and the caps of this deployment. */
export function crawlInput(config: Config, siteId: string): CrawlSiteInput {
  return {
    siteId,
    limits: {
      maxPages: config.CRAWL_MAX_PAGES, maxDepth: config.CRAWL_MAX_DEPTH, maxPageBytes: config.CRAWL_MAX_PAGE_BYTES,
      maxDurationMs: config.CRAWL_MAX_SECONDS * 1000, delayMs: config.CRAWL_DELAY_MS, concurrency: config.CRAWL_CONCURRENCY,
      allowPrivate: config.ALLOW_PRIVATE_NETWORK_TARGETS,
    },
  };
}

/**
 * Starts the site's crawl workflow. When one runs already: `join` (a Schedule's tick) leaves it to
 * end as it is; by default (a user's request) it makes one more pass after the one under way, so
 * a page changed since that pass began is fetched again; `restart` replaces it, when the site now
 * points elsewhere. Temporal unreachable is a 503 the caller's transaction (db) rolls back with,
 * so nothing is left queued without a crawl.
 */
export async function startCrawl(deps: CrawlDeps, db: Db, site: CrawlSite, opts: { restart?: boolean; join?: boolean } = {}): Promise<void> {
  const id = crawlSiteKind.id(site.id);
  const args: [CrawlSiteInput] = [crawlInput(deps.config, site.id)];
  const attrs = { orgId: site.orgId, agentId: site.widget_id, summary: await crawlSummary(db, site) };
  if (opts.restart || opts.join) await startWorkflow(deps, crawlSiteKind, id, args, attrs, { restart: opts.restart, transaction: db });
  else await signalWithStart(deps, crawlSiteKind, id, args, attrs, recrawlSignal, { transaction: db });
}

/** The calendar that fires once, at `at` (UTC): the schedule is moved after every crawl. */
function onceAt(at: Date) {
  return {
    year: at.getUTCFullYear(), month: MONTHS[at.getUTCMonth()]!, dayOfMonth: at.getUTCDate(),
    hour: at.getUTCHours(), minute: at.getUTCMinutes(), second: at.getUTCSeconds(),
    comment: `next crawl at ${at.toISOString()}`,
  };
}

/**
 * Makes the site's Schedule (`crawl-schedule:<site id>`) fire at its next_crawl_at, or removes
 * it when the cadence is off. Idempotent. Temporal unreachable is a 503 the caller's transaction
 * (db) rolls back with.
 */
export async function syncCrawlSchedule(deps: CrawlDeps, db: Db, site: SiteRecord): Promise<void> {
  const id = scheduledCrawlKind.id(site.id);
  if (site.crawl_cadence === 'off' || !site.next_crawl_at) {
    await unscheduleWorkflow(deps, id);
    return;
  }
  const summary = await crawlSummary(db, site, `${site.crawl_cadence[0]!.toUpperCase()}${site.crawl_cadence.slice(1)} re-crawl`);
  await scheduleWorkflow(deps, scheduledCrawlKind, id, [{ siteId: site.id }], { orgId: site.orgId, agentId: site.widget_id, summary },
    { spec: { calendars: [onceAt(new Date(site.next_crawl_at))] }, overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 day' });
}

/** Removes a site's Schedule; one already gone is fine. */
export async function deleteCrawlSchedule(deps: Pick<CrawlDeps, 'temporal'>, siteId: string): Promise<void> {
  await deleteSchedule(deps.temporal, scheduleIds.crawl(siteId));
}
