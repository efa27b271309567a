import {
  MONTHS, ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy, WorkflowIdConflictPolicy, WorkflowIdReusePolicy,
  type Client, type ScheduleOptions,
} from '@temporalio/client';
import type { Config } from '../config.ts';
import { AppError } from '../errors.ts';
import type { SiteRecord } from '../db/sites.ts';
import { SEARCH_ATTRIBUTES, taskQueues, workflowIds } from '../temporal/index.ts';
import type { crawlSite, CrawlSiteInput } from '../../workflows/crawl-site.ts';
import type { scheduledCrawl } from '../../workflows/scheduled-crawl.ts';

/**
 * Starting crawls and keeping each site's re-crawl Schedule in step with its cadence. A crawl is
 * the workflow `crawl:<site id>`: asking again while one runs joins it instead of doubling it.
 */

export interface CrawlDeps { temporal: Client; config: Config }

const searchAttributes = (site: Pick<SiteRecord, 'orgId' | 'widget_id'>) => [
  { key: SEARCH_ATTRIBUTES.OrganizationId, value: site.orgId },
  ...(site.widget_id ? [{ key: SEARCH_ATTRIBUTES.AgentId, value: site.widget_id }] : []),
];

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
 * Starts the site's crawl workflow, or joins the one already running (`restart` replaces it, when
 * the site now points elsewhere). Temporal unreachable is a 503 the caller's transaction rolls
 * back with, so nothing is left queued without a crawl.
 */
export async function startCrawl(deps: CrawlDeps, site: Pick<SiteRecord, 'id' | 'orgId' | 'widget_id'>, opts: { restart?: boolean } = {}): Promise<void> {
  try {
    await deps.temporal.workflow.start<typeof crawlSite>('crawlSite', {
      workflowId: workflowIds.crawl(site.id),
      taskQueue: taskQueues(deps.config).crawls,
      args: [crawlInput(deps.config, site.id)],
      workflowIdConflictPolicy: opts.restart ? WorkflowIdConflictPolicy.TERMINATE_EXISTING : WorkflowIdConflictPolicy.USE_EXISTING,
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
      typedSearchAttributes: searchAttributes(site),
    });
  } catch (err) {
    throw new AppError(503, 'service_unavailable', 'the workflow service is unavailable; nothing was changed, try again', {
      headers: { 'Retry-After': '5' },
    });
  }
}

/** The calendar that fires once, at `at` (UTC): the schedule is moved after every crawl. */
function onceAt(at: Date) {
  return {
    year: at.getUTCFullYear(), month: MONTHS[at.getUTCMonth()]!, dayOfMonth: at.getUTCDate(),
    hour: at.getUTCHours(), minute: at.getUTCMinutes(), second: at.getUTCSeconds(),
    comment: `next crawl at ${at.toISOString()}`,
  };
}

function crawlSchedule(config: Config, site: SiteRecord, at: Date): ScheduleOptions {
  const id = workflowIds.crawlSchedule(site.id);
  return {
    scheduleId: id,
    spec: { calendars: [onceAt(at)] },
    action: {
      type: 'startWorkflow',
      workflowType: 'scheduledCrawl',
      workflowId: id,
      taskQueue: taskQueues(config).crawls,
      args: [{ siteId: site.id }] satisfies Parameters<typeof scheduledCrawl>,
      typedSearchAttributes: searchAttributes(site),
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 day' },
    typedSearchAttributes: searchAttributes(site),
  };
}

/**
 * Makes the site's Schedule (`crawl-schedule:<site id>`) fire at its next_crawl_at, or removes
 * it when the cadence is off. Idempotent.
 */
export async function syncCrawlSchedule(deps: CrawlDeps, site: SiteRecord): Promise<void> {
  if (site.crawl_cadence === 'off' || !site.next_crawl_at) {
    await deleteCrawlSchedule(deps, site.id);
    return;
  }
  const options = crawlSchedule(deps.config, site, new Date(site.next_crawl_at));
  try {
    await deps.temporal.schedule.create(options);
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await deps.temporal.schedule.getHandle(options.scheduleId).update((previous) => ({
      spec: options.spec, action: options.action, policies: options.policies, state: previous.state,
    }));
  }
}

/** Removes a site's Schedule; one already gone is fine. */
export async function deleteCrawlSchedule(deps: Pick<CrawlDeps, 'temporal'>, siteId: string): Promise<void> {
  try {
    await deps.temporal.schedule.getHandle(workflowIds.crawlSchedule(siteId)).delete();
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
  }
}
