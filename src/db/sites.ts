import { listPage, type Db } from './index.ts';
import { newId } from '../ids.ts';
import { nextCrawlAt } from '../domain/crawl-cadence.ts';
import type { CrawlCadence } from '../schemas/sites.ts';
import type { Page, Site, SiteStatus } from '../schemas/sites.ts';

interface SiteRow {
  id: string; org_id: string; agent_id: string | null; kb_id: string | null; url: string; status: SiteStatus;
  generation: number; pages_crawled: number; last_crawled_at: Date | null; error: string | null;
  crawl_cadence: CrawlCadence; next_crawl_at: Date | null; created_at: Date; updated_at: Date;
  passages: number; passages_embedding: number;
}

const COLUMNS = ['id', 'org_id', 'agent_id', 'kb_id', 'url', 'status', 'generation', 'pages_crawled', 'last_crawled_at', 'error',
  'crawl_cadence', 'next_crawl_at', 'created_at', 'updated_at', 'passages', 'passages_embedding'];

/** What the crawl machinery needs of a site beyond its API shape. */
export interface SiteRecord extends Site { orgId: string; generation: number }

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toSite(row: SiteRow): SiteRecord {
  return {
    id: row.id, widget_id: row.agent_id, kb_id: row.kb_id, url: row.url, status: row.status,
    pages_crawled: row.pages_crawled, passages: row.passages, passages_embedding: row.passages_embedding, last_crawled_at: iso(row.last_crawled_at), error: row.error,
    crawl_cadence: row.crawl_cadence, next_crawl_at: iso(row.next_crawl_at),
    created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
    orgId: row.org_id, generation: row.generation,
  };
}

/** The API shape (without the internal fields). */
export function publicSite(site: SiteRecord): Site {
  const { orgId: _o, generation: _g, ...rest } = site;
  return rest;
}

export async function insertSite(db: Db, orgId: string, input: {
  url: string; agentId?: string | null; kbId?: string | null; cadence?: CrawlCadence | undefined;
}): Promise<SiteRecord> {
  const cadence = input.cadence ?? 'off';
  const [row] = await db<SiteRow[]>`
    insert into sites (id, org_id, agent_id, kb_id, url, status, crawl_cadence, next_crawl_at)
    values (${newId()}, ${orgId}, ${input.agentId ?? null}, ${input.kbId ?? null}, ${input.url}, 'queued', ${cadence}, ${nextCrawlAt(cadence, new Date())})
    returning ${db(COLUMNS)}`;
  return toSite(row!);
}

/** A site of the organization whose agent (if any) is not deleted. */
export async function findSite(db: Db, orgId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<SiteRecord | null> {
  const lock = opts.forUpdate ? db`for update of s` : db``;
  const [row] = await db<SiteRow[]>`select ${db(COLUMNS.map((c) => `s.${c}`))} from sites s
    left join agents a on a.id = s.agent_id
    where s.id = ${id} and s.org_id = ${orgId} and s.kind = 'web' and (s.agent_id is null or a.deleted_at is null) ${lock}`;
  return row ? toSite(row) : null;
}

/** A site by id alone, for the crawl workflow's activities (null once deleted). */
export async function findSiteById(db: Db, id: string): Promise<SiteRecord | null> {
  const [row] = await db<SiteRow[]>`select ${db(COLUMNS)} from sites where id = ${id}`;
  return row ? toSite(row) : null;
}

/** The agent's own site (the newest, if it ever had several). */
export async function findAgentSite(db: Db, orgId: string, agentId: string): Promise<SiteRecord | null> {
  const [row] = await db<SiteRow[]>`select ${db(COLUMNS)} from sites where agent_id = ${agentId} and org_id = ${orgId} and kind = 'web'
    order by created_at desc, id desc limit 1`;
  return row ? toSite(row) : null;
}

export async function listSites(db: Db, orgId: string, q: { widget_id?: string | undefined; kb_id?: string | undefined; limit: number; offset: number }):
  Promise<{ data: SiteRecord[]; total: number }> {
  const filter = db`${q.widget_id ? db`and s.agent_id = ${q.widget_id}` : db``} ${q.kb_id ? db`and s.kb_id = ${q.kb_id}` : db``}`;
  const from = db`from sites s left join agents a on a.id = s.agent_id
    where s.org_id = ${orgId} and s.kind = 'web' and (s.agent_id is null or a.deleted_at is null) ${filter}`;
  return listPage(db, { ...q, columns: db(COLUMNS.map((c) => `s.${c}`)), from, order: db`s.created_at desc, s.id desc` }, toSite);
}

/** Sets the cadence; next_crawl_at is recomputed from the last crawl (or now). */
export async function setSiteCadence(db: Db, id: string, cadence: CrawlCadence): Promise<SiteRecord> {
  const [current] = await db<SiteRow[]>`select ${db(COLUMNS)} from sites where id = ${id}`;
  const next = nextCrawlAt(cadence, current!.last_crawled_at ?? new Date());
  const [row] = await db<SiteRow[]>`update sites set crawl_cadence = ${cadence}, next_crawl_at = ${next}, updated_at = now()
    where id = ${id} returning ${db(COLUMNS)}`;
  return toSite(row!);
}

/** Points a site at another URL (its old index is served until the new crawl swaps it). */
export async function setSiteUrl(db: Db, id: string, url: string): Promise<SiteRecord> {
  const [row] = await db<SiteRow[]>`update sites set url = ${url}, status = 'queued', error = null, updated_at = now()
    where id = ${id} returning ${db(COLUMNS)}`;
  return toSite(row!);
}

/** Marks a crawl requested (unless one is running: a crawl is never doubled). */
export async function markSiteQueued(db: Db, id: string): Promise<SiteRecord | null> {
  const [row] = await db<SiteRow[]>`update sites set status = case when status = 'crawling' then status else 'queued' end, updated_at = now()
    where id = ${id} returning ${db(COLUMNS)}`;
  return row ? toSite(row) : null;
}

export async function deleteSite(db: Db, id: string): Promise<void> {
  await db`delete from sites where id = ${id}`;
}

interface PageRow { id: string; url: string; title: string | null; status_code: number; fetched_at: Date; body?: string }

/** Pages of the index served now, by URL. */
export async function listPages(db: Db, site: SiteRecord, q: { include_body?: boolean | undefined; limit: number; offset: number }):
  Promise<{ data: Page[]; total: number }> {
  const body = q.include_body ? db`, body` : db``;
  const [rows, [count]] = await Promise.all([
    db<PageRow[]>`select id, url, title, status_code, fetched_at ${body} from site_pages
      where site_id = ${site.id} and generation = ${site.generation} order by url limit ${q.limit} offset ${q.offset}`,
    db<{ total: number }[]>`select count(*)::int as total from site_pages where site_id = ${site.id} and generation = ${site.generation}`,
  ]);
  return {
    data: rows.map((r) => ({ id: r.id, url: r.url, title: r.title, status_code: r.status_code, fetched_at: r.fetched_at.toISOString(), ...(r.body !== undefined ? { body: r.body } : {}) })),
    total: count?.total ?? 0,
  };
}

/** Who a site belongs to, as one label: `agent <name>` or `knowledge base <name>` (the summary of its crawl). */
export async function siteOwnerLabel(db: Db, site: Pick<SiteRecord, 'widget_id' | 'kb_id'>): Promise<string> {
  if (site.widget_id) {
    const [agent] = await db<{ name: string }[]>`select name from agents where id = ${site.widget_id}`;
    return `agent ${agent?.name ?? site.widget_id}`;
  }
  const [kb] = await db<{ name: string }[]>`select name from knowledge_bases where id = ${site.kb_id}`;
  return `knowledge base ${kb?.name ?? site.kb_id}`;
}

/** The ids of an agent's own sites. */
export async function siteIdsOfAgent(db: Db, agentId: string): Promise<string[]> {
  return (await db<{ id: string }[]>`select id from sites where agent_id = ${agentId}`).map((r) => r.id);
}

/** Marks a site crawling (its workflow prepared the next generation). */
export async function markSiteCrawling(db: Db, id: string): Promise<void> {
  await db`update sites set status = 'crawling', updated_at = now() where id = ${id}`;
}

/** A site by id, locked for the rest of the transaction (a crawl's end); null once deleted. */
export async function lockSiteById(tx: Db, id: string): Promise<SiteRecord | null> {
  const [row] = await tx<SiteRow[]>`select ${tx(COLUMNS)} from sites where id = ${id} for update`;
  return row ? toSite(row) : null;
}

/**
 * Records a finished crawl: the new generation is served, with its page count and the next crawl
 * time. `more`: another pass follows, so the site stays `crawling`. `vectorsFollow`: the passages stored without
 * a vector get theirs next (`fillPassageVectors`), so they count as still embedding.
 */
export async function markSiteCrawled(tx: Db, id: string,
  done: { generation: number; pages: number; at: Date; nextCrawlAt: Date | null; more?: boolean; vectorsFollow: boolean }): Promise<SiteRecord> {
  // Unless none will be computed (the sentence encoder is off), the passages without a vector wait for theirs.
  const embedding = done.vectorsFollow
    ? tx`(select count(*)::int from page_chunks where site_id = ${id} and generation = ${done.generation} and embedding is null)`
    : tx`0`;
  const [row] = await tx<SiteRow[]>`update sites set generation = ${done.generation}, pages_crawled = ${done.pages},
    passages = (select count(*)::int from page_chunks where site_id = ${id} and generation = ${done.generation}),
    passages_embedding = ${embedding},
    last_crawled_at = ${done.at}, status = ${done.more ? 'crawling' : 'ready'}, error = null, next_crawl_at = ${done.nextCrawlAt}, updated_at = now()
    where id = ${id} returning ${tx(COLUMNS)}`;
  return toSite(row!);
}

/** Records a failed crawl: the index served now stays. */
export async function markSiteFailed(tx: Db, id: string, failed: { error: string; nextCrawlAt: Date | null }): Promise<SiteRecord> {
  const [row] = await tx<SiteRow[]>`update sites set status = 'failed', error = ${failed.error.slice(0, 1000)},
    next_crawl_at = ${failed.nextCrawlAt}, updated_at = now()
    where id = ${id} returning ${tx(COLUMNS)}`;
  return toSite(row!);
}
