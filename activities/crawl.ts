import { Context } from '@temporalio/activity';
import { agentEventData } from '../src/agents/changes.ts';
import { activateDraftAgent, findAgent } from '../src/db/agents.ts';
import type { Db } from '../src/db/index.ts';
import { emitEvent } from '../src/events/emit.ts';
import {
  failCrawl, fillPassageVectors, finishCrawl, prepareCrawl, requestScheduledCrawl, runCrawl, type CrawlLimits, type CrawlSummary,
  type VectorProgress,
} from '../src/knowledge/crawl-steps.ts';
import type { ActivityDeps, ActivityRegistration } from './index.ts';

export type { CrawlLimits, CrawlSummary };

/** The crawl workflow's activities: each a step of `src/knowledge/crawl-steps.ts`. */
export function createCrawlActivities(activityDeps: ActivityDeps) {
  const deps = { ...activityDeps, siteIndexed: agentBecameActive };
  return {
    /** Marks the site crawling (once its starting transaction committed) and clears what an interrupted crawl left. */
    prepareCrawl: (input: { siteId: string }) => prepareCrawl(deps, input),
    /** Fetches the site into the new generation, heartbeating progress; a retry resumes from the pages stored. */
    runCrawl: (input: Parameters<typeof runCrawl>[1]) => {
      const ctx = Context.current();
      return runCrawl(deps, input, { heartbeat: (progress) => ctx.heartbeat(progress), signal: ctx.cancellationSignal });
    },
    /** Swaps the new generation in; a draft agent's first crawl makes it active. */
    finishCrawl: (input: Parameters<typeof finishCrawl>[1]) => finishCrawl(deps, input),
    /** Computes the vectors of the passages served without one, after the site is ready; a retry resumes from its heartbeat. */
    fillPassageVectors: (input: { siteId: string }) => {
      const ctx = Context.current();
      const resumeFrom = ctx.info.heartbeatDetails as VectorProgress | undefined;
      return fillPassageVectors(deps, input, { heartbeat: (p) => ctx.heartbeat(p), signal: ctx.cancellationSignal, ...(resumeFrom ? { resumeFrom } : {}) });
    },
    /** Records a failed crawl: the index served now stays. */
    failCrawl: (input: Parameters<typeof failCrawl>[1]) => failCrawl(deps, input),
    /** A Schedule's tick: crawl the site, or join the crawl running. */
    requestScheduledCrawl: (input: { siteId: string }) => requestScheduledCrawl(deps, input),
  };
}

/** A draft agent whose site is now indexed becomes active, with the event of the flow that made it. */
async function agentBecameActive(tx: Db, orgId: string, agentId: string): Promise<string[]> {
  const createdVia = await activateDraftAgent(tx, agentId);
  if (!createdVia) return [];
  const after = await findAgent(tx, orgId, agentId);
  const type = createdVia === 'widgets' ? 'widget.ready' : 'widget.crawl_completed';
  return [await emitEvent(tx, { orgId, type, data: agentEventData(after!) })];
}

export type CrawlActivities = ReturnType<typeof createCrawlActivities>;

/** Run by the crawls queue's worker (activities/index.ts finds this module). */
export const registration: ActivityRegistration = { queue: 'crawls', create: createCrawlActivities };
