import { proxyActivities } from '@temporalio/workflow';
import type { CrawlActivities } from '../activities/crawl.ts';
import { scheduleIds, workflowKind } from '../src/temporal/ids.ts';

const { requestScheduledCrawl } = proxyActivities<CrawlActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', maximumAttempts: 20 },
});

/**
 * What a site's Schedule starts when a re-crawl is due: it asks for the site's crawl workflow
 * (joining one already running, so a due re-crawl never doubles a manual one).
 */
export async function scheduledCrawl(input: { siteId: string }): Promise<void> {
  await requestScheduledCrawl(input);
}

/** What a site's re-crawl Schedule starts (`scheduleWorkflow`): each firing is a run of its own, under the Schedule's id. */
export const scheduledCrawlKind = workflowKind(scheduledCrawl, { queue: 'crawls', reuse: 'allowDuplicate', id: scheduleIds.crawl });
