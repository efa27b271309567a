import { createHash } from 'node:crypto';
import { listPage, type Db, type Sql } from './index.ts';
import { newId } from '../ids.ts';
import type { KnowledgeFile, KnowledgeFileKind, KnowledgeFileStatus } from '../schemas/knowledge-files.ts';

/**
 * The knowledge_files table, and the pages and passages a file becomes: pages of its knowledge base's one source of
 * kind `files` (a `sites` row never crawled nor listed), so that retrieval reads them with the crawled pages.
 */

interface FileRow {
  id: string; org_id: string; kb_id: string; name: string; kind: KnowledgeFileKind; content_type: string; size_bytes: number;
  sha256: string; revision: number; blob_key: string; status: KnowledgeFileStatus; error: string | null; pages: number | null;
  chunks: number; parsed_at: Date | null; created_at: Date; updated_at: Date;
}

/** What the parse needs beyond the API shape. */
export interface KnowledgeFileRecord extends KnowledgeFile { orgId: string; blobKey: string }

const toFile = (row: FileRow): KnowledgeFileRecord => ({
  id: row.id, kb_id: row.kb_id, name: row.name, kind: row.kind, content_type: row.content_type, size_bytes: row.size_bytes,
  sha256: row.sha256, revision: row.revision, status: row.status, error: row.error, pages: row.pages, chunks: row.chunks,
  parsed_at: row.parsed_at?.toISOString() ?? null, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
  orgId: row.org_id, blobKey: row.blob_key,
});

/** The API shape of a file. */
export function publicFile(file: KnowledgeFileRecord): KnowledgeFile {
  const { orgId: _o, blobKey: _b, ...rest } = file;
  return rest;
}

/** Where a revision's bytes are kept: built from ids only. */
export const fileBlobKey = (orgId: string, kbId: string, fileId: string, revision: number) => `knowledge-files/${orgId}/${kbId}/${fileId}/${revision}`;
/** Every blob of a file, or of a knowledge base's files. */
export const fileBlobPrefix = (orgId: string, kbId: string, fileId?: string) => `knowledge-files/${orgId}/${kbId}${fileId ? `/${fileId}` : ''}`;

export async function findKnowledgeFile(db: Db, orgId: string, kbId: string, id: string): Promise<KnowledgeFileRecord | null> {
  const [row] = await db<FileRow[]>`select * from knowledge_files where id = ${id} and kb_id = ${kbId} and org_id = ${orgId}`;
  return row ? toFile(row) : null;
}

/** A file by id alone, for its parse (null once deleted). */
export async function findKnowledgeFileById(db: Db, id: string): Promise<KnowledgeFileRecord | null> {
  const [row] = await db<FileRow[]>`select * from knowledge_files where id = ${id}`;
  return row ? toFile(row) : null;
}

export async function listKnowledgeFiles(db: Db, orgId: string, kbId: string, q: { limit: number; offset: number }): Promise<{ data: KnowledgeFileRecord[]; total: number }> {
  const from = db`from knowledge_files where org_id = ${orgId} and kb_id = ${kbId}`;
  return listPage(db, { columns: db`*`, from, order: db`created_at desc, id desc`, limit: q.limit, offset: q.offset }, toFile);
}

/**
 * How many files a knowledge base holds, and whether one of this name is among them. In a transaction, it holds the
 * knowledge base's uploads until the commit, so the count stays true for the insert that follows.
 */
export async function countKnowledgeFiles(db: Db, kbId: string, name: string): Promise<{ total: number; named: boolean }> {
  await db`select pg_advisory_xact_lock(hashtextextended(${`knowledge-files:${kbId}`}, 0))`;
  const [row] = await db<{ total: number; named: boolean }[]>`
    select count(*)::int as total, coalesce(bool_or(name = ${name}), false) as named from knowledge_files where kb_id = ${kbId}`;
  return row ?? { total: 0, named: false };
}

/**
 * Records an upload: a new file, or a new revision of the file of the same name (its old passages are served until the
 * new revision's parse swaps them). Answers the file, `processing`, with the key its bytes go to.
 */
export async function upsertKnowledgeFile(db: Db, orgId: string, kbId: string, input: {
  name: string; kind: KnowledgeFileKind; contentType: string; sizeBytes: number; sha256: string;
}): Promise<KnowledgeFileRecord> {
  const id = newId();
  const [row] = await db<{ id: string; revision: number }[]>`
    insert into knowledge_files (id, org_id, kb_id, name, kind, content_type, size_bytes, sha256, blob_key, status)
    values (${id}, ${orgId}, ${kbId}, ${input.name}, ${input.kind}, ${input.contentType}, ${input.sizeBytes}, ${input.sha256},
      ${fileBlobKey(orgId, kbId, id, 1)}, 'processing')
    on conflict (kb_id, name) do update set kind = excluded.kind, content_type = excluded.content_type, size_bytes = excluded.size_bytes,
      sha256 = excluded.sha256, revision = knowledge_files.revision + 1, status = 'processing', error = null, updated_at = now()
    returning id, revision`;
  const [updated] = await db<FileRow[]>`update knowledge_files set blob_key = ${fileBlobKey(orgId, kbId, row!.id, row!.revision)}
    where id = ${row!.id} returning *`;
  return toFile(updated!);
}

/** The knowledge base's `files` source, made on first use. */
async function filesSource(db: Db, orgId: string, kbId: string): Promise<string> {
  await db`insert into sites (id, org_id, kb_id, url, status, kind, crawl_cadence)
    values (${newId()}, ${orgId}, ${kbId}, ${`files:${kbId}`}, 'ready', 'files', 'off')
    on conflict (kb_id) where kind = 'files' do nothing`;
  const [row] = await db<{ id: string }[]>`select id from sites where kb_id = ${kbId} and kind = 'files'`;
  return row!.id;
}

/** A page a file became, with its passages. */
export interface FilePage {
  url: string; title: string; text: string;
  chunks: { text: string; section: string | null; embedding?: Buffer | null }[];
  language: 'english' | 'french';
}

/**
 * Swaps a file's pages and passages for those of `revision`, in one transaction: retrieval reads either the old ones
 * or the new ones, never a mix. False (and nothing written) when the file is gone or a newer revision was uploaded.
 */
export async function replaceFilePages(sql: Sql, fileId: string, revision: number, pages: FilePage[]): Promise<boolean> {
  return sql.begin(async (tx) => {
    const [file] = await tx<{ org_id: string; kb_id: string; revision: number }[]>`
      select org_id, kb_id, revision from knowledge_files where id = ${fileId} for update`;
    if (!file || file.revision !== revision) return false;
    const siteId = await filesSource(tx, file.org_id, file.kb_id);
    await tx`delete from site_pages where file_id = ${fileId}`;
    let chunks = 0;
    for (const page of pages) {
      const pageId = newId();
      const hash = createHash('sha256').update(page.text).digest('hex');
      await tx`insert into site_pages (id, site_id, generation, url, depth, title, status_code, body, content_hash, links, fetched_at, file_id)
        values (${pageId}, ${siteId}, 0, ${page.url}, 0, ${page.title}, 200, ${page.text}, ${hash}, '{}', now(), ${fileId})`;
      const rows = page.chunks.map((c, ord) => ({
        page_id: pageId, site_id: siteId, generation: 0, ord, text: c.text, section: c.section, embedding: c.embedding ?? null, language: page.language,
      }));
      if (rows.length) await tx`insert into page_chunks ${tx(rows)}`;
      chunks += rows.length;
    }
    await tx`update knowledge_files set status = 'ready', error = null, pages = ${pages.length}, chunks = ${chunks}, parsed_at = now(), updated_at = now()
      where id = ${fileId}`;
    return true;
  });
}

/** Marks a revision that could not be read; its previous passages (if any) stay served. False when it is no longer current. */
export async function markFileFailed(db: Db, fileId: string, revision: number, error: string): Promise<boolean> {
  const done = await db`update knowledge_files set status = 'failed', error = ${error.slice(0, 500)}, updated_at = now()
    where id = ${fileId} and revision = ${revision}`;
  return done.count > 0;
}

/** Deletes a file with its pages and passages; answers it (its blobs must go too), or null when there is none. */
export async function deleteKnowledgeFile(db: Db, orgId: string, kbId: string, id: string): Promise<KnowledgeFileRecord | null> {
  const [row] = await db<FileRow[]>`delete from knowledge_files where id = ${id} and kb_id = ${kbId} and org_id = ${orgId} returning *`;
  return row ? toFile(row) : null;
}
