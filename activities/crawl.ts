import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Db, Sql } from '../src/db/index.ts';
import { newId } from '../src/ids.ts';
import { findAgent } from '../src/db/agents.ts';
import { findSiteById, markSiteQueued, toSite, type SiteRecord } from '../src/db/sites.ts';
import { agentEventData } from '../src/domain/agent-changes.ts';
import { dispatchEvents, emitEvent } from '../src/events/emit.ts';
import { nextCrawlAt } from '../src/knowledge/cadence.ts';
import { deleteCrawlSchedule, startCrawl, syncCrawlSchedule } from '../src/knowledge/crawls.ts';
import { chunkText, crawl, type CrawledPage } from '../src/crawler/index.ts';
import { OutboundTargetError } from '../src/net/outbound.ts';
import type { ActivityDeps } from './index.ts';

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

/** Stores a fetched page and its passages in the crawl's generation; a page already there (a resumed crawl) is left as it is. */
async function storeFetchedPage(db: Sql, siteId: string, generation: number, page: CrawledPage): Promise<void> {
  await db.begin(async (tx) => {
    const [row] = await tx<{ id: string }[]>`
      insert into site_pages (id, site_id, generation, url, depth, title, status_code, body, content_hash, etag, last_modified, links, fetched_at)
      values (${newId()}, ${siteId}, ${generation}, ${page.url}, ${page.depth}, ${page.title}, ${page.statusCode}, ${page.text},
        ${page.contentHash}, ${page.etag}, ${page.lastModified}, ${page.links}, ${page.fetchedAt})
      on conflict (site_id, generation, url) do nothing returning id`;
    if (!row) return;
    const chunks = chunkText(page.text).map((text, ord) => ({ page_id: row.id, site_id: siteId, generation, ord, text }));
    if (chunks.length) await tx`insert into page_chunks ${tx(chunks)}`;
  });
}

/** A page the server says is unchanged: its stored copy and passages move into the new generation. */
async function reuseUnchangedPage(db: Sql, siteId: string, generation: number, page: CrawledPage): Promise<void> {
  await db.begin(async (tx) => {
    const [old] = await tx<{ id: string }[]>`
      select id from site_pages where site_id = ${siteId} and generation = ${generation - 1} and url = ${page.url}`;
    if (!old) return;
    const id = newId();
    const inserted = await tx`
      insert into site_pages (id, site_id, generation, url, depth, title, status_code, body, content_hash, etag, last_modified, links, fetched_at)
      select ${id}, site_id, ${generation}, url, ${page.depth}, title, status_code, body, content_hash,
        coalesce(${page.etag}, etag), coalesce(${page.lastModified}, last_modified), links, ${page.fetchedAt}
      from site_pages where id = ${old.id}
      on conflict (site_id, generation, url) do nothing returning id`;
    if (inserted.length === 0) return;
    await tx`insert into page_chunks (page_id, site_id, generation, ord, text)
      select ${id}, site_id, ${generation}, ord, text from page_chunks where page_id = ${old.id}`;
  });
}

async function lockSite(tx: Db, siteId: string): Promise<SiteRecord | null> {
  const [row] = await tx`select * from sites where id = ${siteId} for update`;
  return row ? toSite(row as never) : null;
}

export function createCrawlActivities(deps: ActivityDeps) {
  const { sql } = deps;
  return {
    /** Marks the site crawling and clears what an interrupted earlier crawl left of the next generation. */
    async prepareCrawl(input: { siteId: string }): Promise<{ url: string; generation: number } | null> {
      const site = await findSiteById(sql, input.siteId);
      if (!site) return null;
      const generation = site.generation + 1;
      await sql`delete from site_pages where site_id = ${site.id} and generation >= ${generation}`;
      await sql`update sites set status = 'crawling', updated_at = now() where id = ${site.id}`;
      return { url: site.url, generation };
    },

    /**
     * Fetches the site into `generation`, heartbeating progress. A retry (the worker died) starts
     * from the pages already stored: they are neither fetched nor stored again.
     */
    async runCrawl(input: { siteId: string; generation: number; url: string; limits: CrawlLimits }): Promise<CrawlSummary> {
      const ctx = Context.current();
      const { siteId, generation } = input;
      const done = await sql<{ url: string; depth: number; links: string[] }[]>`
        select url, depth, links from site_pages where site_id = ${siteId} and generation = ${generation}`;
      const previous = new Map((await sql<{ url: string; etag: string | null; last_modified: string | null; links: string[] }[]>`
        select url, etag, last_modified, links from site_pages where site_id = ${siteId} and generation = ${generation - 1}`)
        .map((p) => [p.url, { etag: p.etag, lastModified: p.last_modified, links: p.links }]));
      const progress = { resumed: done.length, stored: 0, unchanged: 0, fetched: 0, queued: 0, failed: 0 };
      // Every stored page and every finished request beats (the SDK throttles the calls). Requests
      // end within 3 x 20 s, so the workflow's heartbeat timeout (2 minutes) only fires when the
      // worker is gone.
      const beat = () => ctx.heartbeat(progress);
      let result;
      try {
        result = await crawl({
          startUrl: input.url, ...input.limits, done, previous, signal: ctx.cancellationSignal,
        }, async (page) => {
          if (page.status === 'unchanged') {
            await reuseUnchangedPage(sql, siteId, generation, page);
            progress.unchanged++;
          } else {
            await storeFetchedPage(sql, siteId, generation, page);
          }
          progress.stored++;
          beat();
        }, (p) => {
          Object.assign(progress, p);
          beat();
        });
      } catch (err) {
        if (err instanceof OutboundTargetError) throw ApplicationFailure.nonRetryable(err.message, 'CrawlRefused');
        throw err;
      }
      // Interrupted (the worker is stopping, or the crawl was cancelled): this attempt fails, so
      // the retry resumes from what is stored, instead of a partial index being swapped in.
      if (result.stoppedBy === 'aborted') throw ctx.cancellationSignal.reason ?? new Error('the crawl was interrupted');
      const [count] = await sql<{ n: number }[]>`select count(*)::int as n from site_pages where site_id = ${siteId} and generation = ${generation}`;
      return {
        pages: count?.n ?? 0, unchanged: result.unchanged, failed: result.failed, stoppedBy: result.stoppedBy,
        firstError: result.robots === 'unreachable'
          ? 'robots.txt could not be read (the server answered 5xx or was unreachable), which forbids crawling (RFC 9309)'
          : result.failures[0] ? `${result.failures[0].reason} (${result.failures[0].url})` : null,
      };
    },

    /**
     * Swaps the new generation in (one transaction: queries see the old index or the new one),
     * drops the old, and, on an agent's first crawl, makes a draft agent active with its event.
     */
    async finishCrawl(input: { siteId: string; generation: number; summary: CrawlSummary }): Promise<void> {
      const result = await sql.begin(async (tx) => {
        const site = await lockSite(tx, input.siteId);
        if (!site) return null;
        const now = new Date();
        const [row] = await tx`update sites set generation = ${input.generation}, pages_crawled = ${input.summary.pages},
          last_crawled_at = ${now}, status = 'ready', error = null, next_crawl_at = ${nextCrawlAt(site.crawl_cadence, now)}, updated_at = now()
          where id = ${site.id} returning *`;
        await tx`delete from site_pages where site_id = ${site.id} and generation < ${input.generation}`;
        const eventIds = site.widget_id ? await activateDraftAgent(tx, site.orgId, site.widget_id) : [];
        return { site: toSite(row as never), eventIds };
      });
      if (!result) return;
      if (result.eventIds.length) await dispatchEvents(deps, result.eventIds).catch(() => { /* the recovery sweep sends them */ });
      await syncCrawlSchedule(deps, sql, result.site);
    },

    /** Records a failed crawl: the index served now stays; the partial generation goes. */
    async failCrawl(input: { siteId: string; generation: number; error: string }): Promise<void> {
      const site = await sql.begin(async (tx) => {
        const current = await lockSite(tx, input.siteId);
        if (!current) return null;
        const [row] = await tx`update sites set status = 'failed', error = ${input.error.slice(0, 1000)},
          next_crawl_at = ${nextCrawlAt(current.crawl_cadence, new Date())}, updated_at = now()
          where id = ${current.id} returning *`;
        await tx`delete from site_pages where site_id = ${current.id} and generation >= ${input.generation}`;
        return toSite(row as never);
      });
      if (site) await syncCrawlSchedule(deps, sql, site);
    },

    /** A Schedule's tick: crawl the site (joining a crawl already running); a deleted site's Schedule removes itself. */
    async requestScheduledCrawl(input: { siteId: string }): Promise<void> {
      const site = await markSiteQueued(sql, input.siteId);
      if (!site) {
        await deleteCrawlSchedule(deps, input.siteId);
        return;
      }
      await startCrawl(deps, sql, site);
    },
  };
}

/** A draft agent whose site is now indexed becomes active, with the event of the flow that made it. */
async function activateDraftAgent(tx: Db, orgId: string, agentId: string): Promise<string[]> {
  const [agent] = await tx<{ status: string; created_via: string }[]>`
    select status, created_via from agents where id = ${agentId} and deleted_at is null for update`;
  if (!agent || agent.status !== 'draft') return [];
  await tx`update agents set status = 'active', updated_at = now() where id = ${agentId}`;
  const after = await findAgent(tx, orgId, agentId);
  const type = agent.created_via === 'widgets' ? 'widget.ready' : 'widget.crawl_completed';
  return [await emitEvent(tx, { orgId, type, data: agentEventData(after!) })];
}

export type CrawlActivities = ReturnType<typeof createCrawlActivities>;
