import type { Db, Sql } from './index.ts';
import { newId } from '../ids.ts';

/**
 * The site_pages and page_chunks tables: each crawl writes a new generation of a site's pages and
 * their passages, swapped in whole when the crawl ends.
 */

/** A fetched page, as the crawler hands it over. */
export interface StoredPage {
  url: string; depth: number; title: string | null; statusCode: number; text: string; contentHash: string;
  etag: string | null; lastModified: string | null; links: string[]; fetchedAt: Date;
}

/**
 * A crawl's page writes do not wait for their WAL to reach disk (`synchronous_commit` off, for these
 * transactions only): a page lost to a database crash just before its flush is one the crawl fetches
 * again, since a crawl that did not finish resumes from the pages stored (and it cannot finish
 * before: finishCrawl's own commit is synchronous, and WAL is flushed in order). Without it each of
 * the crawl's page writes waited for a flush of its own, most of an end-to-end crawl's time.
 */
const asyncCommit = (tx: Db) => tx`set local synchronous_commit to off`;

/** The full-text configurations passages are read with: their page's language's, English for any other. */
export type TextConfig = 'english' | 'french';

/**
 * Stores a fetched page and its passages (read in `language`) in a generation; a page already there (a resumed crawl)
 * is left as it is. With `reuseVectors` (a re-crawl), a passage whose section and text the page's previous copy had
 * takes that copy's vector: only new text waits for the encoder.
 */
export async function insertFetchedPage(sql: Sql, siteId: string, generation: number, page: StoredPage,
  chunks: { text: string; section: string | null; embedding?: Buffer | null }[], language: TextConfig = 'english',
  reuseVectors = false): Promise<void> {
  await sql.begin(async (tx) => {
    await asyncCommit(tx);
    const [row] = await tx<{ id: string }[]>`
      insert into site_pages (id, site_id, generation, url, depth, title, status_code, body, content_hash, etag, last_modified, links, fetched_at)
      values (${newId()}, ${siteId}, ${generation}, ${page.url}, ${page.depth}, ${page.title}, ${page.statusCode}, ${page.text},
        ${page.contentHash}, ${page.etag}, ${page.lastModified}, ${page.links}, ${page.fetchedAt})
      on conflict (site_id, generation, url) do nothing returning id`;
    if (!row) return;
    const rows = chunks.map((c, ord) => ({ page_id: row.id, site_id: siteId, generation, ord, text: c.text, section: c.section, embedding: c.embedding ?? null, language }));
    if (rows.length) await tx`insert into page_chunks ${tx(rows)}`;
    if (rows.length && reuseVectors) {
      await tx`update page_chunks c set embedding = o.embedding
        from site_pages op join page_chunks o on o.page_id = op.id
        where c.page_id = ${row.id} and c.embedding is null and op.site_id = ${siteId} and op.generation = ${generation - 1} and op.url = ${page.url}
          and o.embedding is not null and o.text = c.text and o.section is not distinct from c.section`;
    }
  });
}

/** A page the server says is unchanged: its stored copy and passages move into the new generation. */
export async function carryUnchangedPage(sql: Sql, siteId: string, generation: number, page: Pick<StoredPage, 'url' | 'depth' | 'etag' | 'lastModified' | 'fetchedAt'>): Promise<void> {
  await sql.begin(async (tx) => {
    await asyncCommit(tx);
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
    await tx`insert into page_chunks (page_id, site_id, generation, ord, text, section, embedding, language)
      select ${id}, site_id, ${generation}, ord, text, section, embedding, language from page_chunks where page_id = ${old.id}`;
  });
}

/** The pages already stored in a generation (a resumed crawl skips them). */
export async function pagesOfGeneration(db: Db, siteId: string, generation: number): Promise<{ url: string; depth: number; links: string[] }[]> {
  return db<{ url: string; depth: number; links: string[] }[]>`
    select url, depth, links from site_pages where site_id = ${siteId} and generation = ${generation}`;
}

/** What the previous generation knew of each page, for conditional requests. */
export async function validatorsOfGeneration(db: Db, siteId: string, generation: number):
  Promise<{ url: string; etag: string | null; last_modified: string | null; links: string[] }[]> {
  return db<{ url: string; etag: string | null; last_modified: string | null; links: string[] }[]>`
    select url, etag, last_modified, links from site_pages where site_id = ${siteId} and generation = ${generation}`;
}

export async function countPagesOfGeneration(db: Db, siteId: string, generation: number): Promise<number> {
  const [count] = await db<{ n: number }[]>`select count(*)::int as n from site_pages where site_id = ${siteId} and generation = ${generation}`;
  return count?.n ?? 0;
}

/** Deletes the site's pages of generations from `from` on (an interrupted or failed crawl's). */
export async function deletePagesFromGeneration(db: Db, siteId: string, from: number): Promise<void> {
  await db`delete from site_pages where site_id = ${siteId} and generation >= ${from}`;
}

/** Deletes the site's pages of generations before `before` (the index swapped out). */
export async function deletePagesBeforeGeneration(db: Db, siteId: string, before: number): Promise<void> {
  await db`delete from site_pages where site_id = ${siteId} and generation < ${before}`;
}

/** Deletes up to `batchSize` crawled pages (and their passages, ON DELETE CASCADE) of an agent's own sites; returns how many. */
export async function deletePagesOfAgentBatch(db: Db, agentId: string, batchSize: number): Promise<number> {
  return (await db`
    delete from site_pages where id in (
      select p.id from site_pages p join sites s on s.id = p.site_id where s.agent_id = ${agentId} limit ${batchSize})`).count;
}

/** Passages of a generation still without a vector, after `afterId` in id order, at most `limit`. */
export async function chunksWithoutVectors(db: Db, siteId: string, generation: number, afterId: string, limit: number):
  Promise<{ id: string; text: string; section: string | null }[]> {
  return db<{ id: string; text: string; section: string | null }[]>`
    select id::text as id, text, section from page_chunks
    where site_id = ${siteId} and generation = ${generation} and embedding is null and id > ${afterId}::bigint
    order by page_chunks.id limit ${limit}`;
}

/**
 * Counts again, on the site, the passages of its generation still waiting for a vector: those without one after
 * `afterId` (one before it the encoder could not read is not counted as waiting). Once per attempt of
 * `fillPassageVectors`: each step then subtracts what it stored (`storeChunkVectors`). The site's row is locked first,
 * so that a step committing meanwhile (a timed-out attempt still running beside its retry) is counted or subtracted,
 * never both.
 */
export async function countChunksWaiting(sql: Sql, siteId: string, generation: number, afterId: string): Promise<number> {
  return sql.begin(async (tx) => {
    const [locked] = await tx`select 1 from sites where id = ${siteId} and generation = ${generation} for update`;
    if (!locked) return 0;
    const [site] = await tx<{ passages_embedding: number }[]>`
      update sites set passages_embedding = (select count(*)::int from page_chunks
        where site_id = ${siteId} and generation = ${generation} and embedding is null and id > ${afterId}::bigint)
      where id = ${siteId} and generation = ${generation} returning passages_embedding`;
    return site?.passages_embedding ?? 0;
  });
}

/**
 * Stores passages' vectors and subtracts from the site's count of passages waiting (`passages_embedding`, while it
 * still serves `generation`) those that had none: a passage given its vector already (by an earlier attempt of the
 * same step) is neither written again nor subtracted twice, and the count never goes below zero. Returns the count left.
 */
export async function storeChunkVectors(sql: Sql, siteId: string, generation: number, vectors: { id: string; embedding: Buffer }[]):
  Promise<number> {
  return sql.begin(async (tx) => {
    // Pipelined in the one transaction: a round trip for them all.
    const updated = await Promise.all(vectors.map((v) => tx`update page_chunks set embedding = ${v.embedding}
      where id = ${v.id}::bigint and site_id = ${siteId} and embedding is null`));
    const stored = updated.reduce((n, r) => n + r.count, 0);
    const [site] = await tx<{ passages_embedding: number }[]>`
      update sites set passages_embedding = greatest(passages_embedding - ${stored}::int, 0)
      where id = ${siteId} and generation = ${generation} returning passages_embedding`;
    return site?.passages_embedding ?? 0;
  });
}

/** A site's passages no longer wait for vectors (none will be computed: the encoder is off). */
export async function clearPassagesEmbedding(db: Db, siteId: string, generation: number): Promise<void> {
  await db`update sites set passages_embedding = 0 where id = ${siteId} and generation = ${generation}`;
}
