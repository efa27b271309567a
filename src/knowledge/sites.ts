import { AppError } from '../errors.ts';
import { findAgent, setAgentSiteUrl } from '../db/agents.ts';
import { findKnowledgeBase } from '../db/knowledge-bases.ts';
import {
  deleteSite, findAgentSite, findSite, insertSite, markSiteQueued, setSiteCadence, setSiteUrl, type SiteRecord,
} from '../db/sites.ts';
import { assertOutboundUrl, outboundPolicy } from '../net/outbound.ts';
import type { Agent } from '../schemas/agents.ts';
import { workflowIds } from '../temporal/ids.ts';
import { stopWorkflow } from '../temporal/start.ts';
import type { CrawlCadence } from '../schemas/sites.ts';
import { deleteCrawlSchedule, startCrawl, syncCrawlSchedule } from './crawls.ts';
import type { FamilyDeps } from '../deps.ts';

/**
 * What the API does with websites: each change and the crawl (or Schedule) it implies happen in
 * one transaction, so a 503 from Temporal leaves nothing half-made.
 */

export type KnowledgeDeps = FamilyDeps;

/** A website to crawl: http or https; a name resolving to a private address is refused (unless allowed). */
export async function checkSiteUrl(deps: KnowledgeDeps, url: string, field: string): Promise<void> {
  await assertOutboundUrl(url, field, { ...outboundPolicy(deps.config), allowHttp: true, acceptUnresolvable: true });
}

/** Connects the agent's website, or points it elsewhere (a running crawl of the old URL is replaced). Null when no such agent. */
export async function connectAgentSite(deps: KnowledgeDeps, orgId: string, agentId: string, input: { url: string; crawl_cadence?: CrawlCadence | undefined }):
  Promise<SiteRecord | null> {
  await checkSiteUrl(deps, input.url, 'url');
  return deps.sql.begin(async (tx) => {
    if (!(await findAgent(tx, orgId, agentId, { forUpdate: true }))) return null;
    const existing = await findAgentSite(tx, orgId, agentId);
    const moved = existing !== null && existing.url !== input.url;
    let site = existing
      ? (moved ? await setSiteUrl(tx, existing.id, input.url) : (await markSiteQueued(tx, existing.id))!)
      : await insertSite(tx, orgId, { url: input.url, agentId, cadence: input.crawl_cadence });
    if (existing && input.crawl_cadence) site = await setSiteCadence(tx, site.id, input.crawl_cadence);
    await setAgentSiteUrl(tx, agentId, input.url);
    await startCrawl(deps, tx, site, { restart: moved });
    await syncCrawlSchedule(deps, tx, site);
    return site;
  });
}

/**
 * Re-crawls the agent's website (POST /widgets/:id/recrawl): the agent keeps its status and the
 * old index until the new one swaps in. 409 when it has no website.
 */
export async function recrawlAgentSite(deps: KnowledgeDeps, orgId: string, agent: Agent): Promise<SiteRecord> {
  return deps.sql.begin(async (tx) => {
    let site = await findAgentSite(tx, orgId, agent.id);
    if (!site && !agent.site_url) {
      throw new AppError(409, 'invalid_state', 'this widget has no website to crawl; connect one with POST /api/v1/rest/agents/:id/site');
    }
    site = site ? (await markSiteQueued(tx, site.id))! : await insertSite(tx, orgId, { url: agent.site_url!, agentId: agent.id });
    await startCrawl(deps, tx, site);
    return site;
  });
}

/** Queues a fresh crawl of a site (joining one already running). Null when no such site. */
export async function recrawlSite(deps: KnowledgeDeps, orgId: string, id: string): Promise<SiteRecord | null> {
  return deps.sql.begin(async (tx) => {
    if (!(await findSite(tx, orgId, id, { forUpdate: true }))) return null;
    const site = (await markSiteQueued(tx, id))!;
    await startCrawl(deps, tx, site);
    return site;
  });
}

/** Sets a site's cadence: next_crawl_at is recomputed and its Schedule created, moved or removed. */
export async function changeSiteCadence(deps: KnowledgeDeps, orgId: string, id: string, cadence: CrawlCadence | undefined): Promise<SiteRecord | null> {
  return deps.sql.begin(async (tx) => {
    const current = await findSite(tx, orgId, id, { forUpdate: true });
    if (!current || cadence === undefined) return current;
    const site = await setSiteCadence(tx, id, cadence);
    await syncCrawlSchedule(deps, tx, site);
    return site;
  });
}

/** A new source of a knowledge base, crawled at once. Null when no such knowledge base. */
export async function addKnowledgeBaseSite(deps: KnowledgeDeps, orgId: string, kbId: string, input: { url: string; crawl_cadence?: CrawlCadence | undefined }):
  Promise<SiteRecord | null> {
  await checkSiteUrl(deps, input.url, 'url');
  return deps.sql.begin(async (tx) => {
    if (!(await findKnowledgeBase(tx, orgId, kbId))) return null;
    const site = await insertSite(tx, orgId, { url: input.url, kbId, cadence: input.crawl_cadence });
    await startCrawl(deps, tx, site);
    await syncCrawlSchedule(deps, tx, site);
    return site;
  });
}

/** Deletes a site and its pages; its Schedule and any running crawl go too. False when no such site. */
export async function removeSite(deps: KnowledgeDeps, orgId: string, id: string): Promise<boolean> {
  const site = await deps.sql.begin(async (tx) => {
    const found = await findSite(tx, orgId, id, { forUpdate: true });
    if (!found) return null;
    await deleteSite(tx, id);
    if (found.widget_id) await setAgentSiteUrl(tx, found.widget_id, null);
    return found;
  });
  if (!site) return false;
  await stopSiteWork(deps, [id]);
  return true;
}

/**
 * After sites are deleted: removes their Schedules and stops their running crawls. Best effort:
 * a Schedule left behind removes itself at its next tick (its site is gone).
 */
export async function stopSiteWork(deps: KnowledgeDeps, siteIds: string[]): Promise<void> {
  for (const id of siteIds) {
    try {
      await deleteCrawlSchedule(deps, id);
    } catch (err) {
      deps.log.warn({ err, site_id: id }, 'could not remove the Schedule of a deleted site; it removes itself when it fires');
    }
    // Terminated, not cancelled: the site and its pages are gone, so nothing must run after.
    await stopWorkflow(deps, workflowIds.crawl(id), 'terminate', 'site deleted');
  }
}
