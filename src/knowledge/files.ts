import { createHash } from 'node:crypto';
import { chunkSections } from '../crawler/chunk.ts';
import type { FamilyDeps } from '../deps.ts';
import { AppError, validationError } from '../errors.ts';
import { findKnowledgeBase } from '../db/knowledge-bases.ts';
import {
  countKnowledgeFiles, deleteKnowledgeFile, fileBlobKey, fileBlobPrefix, findKnowledgeFileById, markFileFailed, replaceFilePages, upsertKnowledgeFile,
  type FilePage, type KnowledgeFileRecord,
} from '../db/knowledge-files.ts';
import { languageOfText } from '../answers/phrases.ts';
import { KNOWLEDGE_FILE_LIMITS } from '../schemas/knowledge-files.ts';
import { blobStoreOf } from '../storage/store.ts';
import { startWorkflow } from '../temporal/start.ts';
import { parseKnowledgeFileKind } from '../../workflows/parse-knowledge-file.ts';
import { extractFile, inspectUpload } from './file-formats.ts';
import { embedPassages } from '../answers/meaning.ts';

/**
 * Files in knowledge bases (issue 46): an upload is checked and stored in one request, then read into the index by
 * the `parseKnowledgeFile` workflow; replacing a file swaps its passages at once, deleting it removes them and its bytes.
 */

/** A file as the client sent it. */
export interface UploadedFile { name: string; contentType: string; bytes: Buffer }

/** The name a file is kept under: its last path segment, without control characters, 1 to 200 characters. */
function fileName(raw: string): string {
  const name = raw.split(/[\\/]/).pop()!.replace(/[\p{Cc}\p{Cf}]+/gu, '').trim();
  if (!name) throw validationError([{ field: 'name', code: 'required', message: 'the file needs a name (the part\'s filename, or a "name" field)' }]);
  if (name.length > KNOWLEDGE_FILE_LIMITS.maxNameLength) {
    throw validationError([{ field: 'name', code: 'too_long', message: `the file name is over ${KNOWLEDGE_FILE_LIMITS.maxNameLength} characters` }]);
  }
  return name;
}

/**
 * Stores an upload in a knowledge base and starts its parse: a new file, or the next revision of the file of the same
 * name (whose passages are served until the new ones replace them). Anything refused (a limit, a kind, an encrypted or
 * damaged file) throws its 4xx problem before anything is stored. Null when there is no such knowledge base.
 */
export async function uploadKnowledgeFile(deps: FamilyDeps, orgId: string, kbId: string, upload: UploadedFile):
  Promise<{ file: KnowledgeFileRecord; replaced: boolean } | null> {
  const name = fileName(upload.name);
  const { kind, contentType } = await inspectUpload(upload.bytes, name, upload.contentType);
  const blobs = blobStoreOf(deps.config);
  const stored = await deps.sql.begin(async (tx) => {
    if (!(await findKnowledgeBase(tx, orgId, kbId))) return null;
    const { total, named } = await countKnowledgeFiles(tx, kbId, name);
    if (!named && total >= KNOWLEDGE_FILE_LIMITS.maxFiles) {
      throw new AppError(409, 'too_many_files', `a knowledge base holds at most ${KNOWLEDGE_FILE_LIMITS.maxFiles} files`);
    }
    const sha256 = createHash('sha256').update(upload.bytes).digest('hex');
    const file = await upsertKnowledgeFile(tx, orgId, kbId, { name, kind, contentType, sizeBytes: upload.bytes.length, sha256 });
    // Written before the commit: a file row always has its bytes (a failed commit leaves an unnamed blob, never the reverse).
    await blobs.put(file.blobKey, upload.bytes, contentType);
    return { file, replaced: named };
  });
  if (!stored) return null;
  const { file } = stored;
  try {
    await startWorkflow(deps, parseKnowledgeFileKind, parseKnowledgeFileKind.id(file.id, file.revision), [{ fileId: file.id, revision: file.revision }], {
      orgId, summary: `Read ${file.name} into knowledge base ${kbId}`,
    });
  } catch (err) {
    await markFileFailed(deps.sql, file.id, file.revision, 'the file could not be queued for reading; upload it again');
    throw err;
  }
  return stored;
}

/** Deletes a file, its passages (at once) and its bytes. False when there is no such file. */
export async function removeKnowledgeFile(deps: FamilyDeps, orgId: string, kbId: string, fileId: string): Promise<boolean> {
  const file = await deleteKnowledgeFile(deps.sql, orgId, kbId, fileId);
  if (!file) return false;
  await deleteBlobsBestEffort(deps, fileBlobPrefix(orgId, kbId, fileId));
  return true;
}

/** Removes the bytes of knowledge bases' files once their rows are gone (after the commit that deleted them). */
export async function deleteKnowledgeBaseFiles(deps: Pick<FamilyDeps, 'config' | 'log'>, orgId: string, kbIds: string[]): Promise<void> {
  for (const kbId of kbIds) await deleteBlobsBestEffort(deps, fileBlobPrefix(orgId, kbId));
}

async function deleteBlobsBestEffort(deps: Pick<FamilyDeps, 'config' | 'log'>, prefix: string): Promise<void> {
  try {
    await blobStoreOf(deps.config).deletePrefix(prefix);
  } catch (err) {
    // The rows are gone, so nothing serves or lists these bytes; an operator may sweep the prefix.
    deps.log.warn({ err, prefix }, 'could not delete the stored bytes of deleted knowledge files');
  }
}

/**
 * The parse (run by the workflow's activity): reads the revision's bytes, extracts its parts, cuts them into
 * passages with their vectors and swaps them in. A file that cannot be read is marked `failed` with the reason and
 * answers `failed` (no retry reads it better); a revision no longer current answers `superseded` and writes nothing.
 */
export async function parseKnowledgeFileRevision(deps: Pick<FamilyDeps, 'sql' | 'config' | 'log'>, fileId: string, revision: number):
  Promise<'ready' | 'failed' | 'superseded'> {
  const file = await findKnowledgeFileById(deps.sql, fileId);
  if (!file || file.revision !== revision) return 'superseded';
  const blobs = blobStoreOf(deps.config);
  const blob = await blobs.get(file.blobKey);
  const fail = async (reason: string) => ((await markFileFailed(deps.sql, fileId, revision, reason)) ? 'failed' as const : 'superseded' as const);
  if (!blob) return fail('the stored file is missing; upload it again');
  let parts;
  try {
    parts = await extractFile(blob.bytes, file.kind, file.name);
  } catch (err) {
    return fail(err instanceof Error ? err.message : 'the file could not be read');
  }
  if (!parts.length) return fail('no text could be read from the file (a scanned PDF has no text layer)');
  const pages: FilePage[] = [];
  for (const part of parts) {
    const chunks = chunkSections(part.text, part.sectionTitle);
    const vectors = await embedPassages(chunks.map((c) => (c.section ? `${c.section}\n${c.text}` : c.text)));
    pages.push({
      url: part.url, title: part.title, text: part.text,
      chunks: chunks.map((c, i) => ({ ...c, embedding: vectors?.[i] ?? null })),
      language: languageOfText(part.text) === 'fr' ? 'french' : 'english',
    });
  }
  if (!(await replaceFilePages(deps.sql, fileId, revision, pages))) return 'superseded';
  // The revisions before this one are no longer served: their bytes go.
  for (let r = Math.max(1, revision - 20); r < revision; r++) {
    await blobs.delete(fileBlobKey(file.orgId, file.kb_id, fileId, r)).catch((err: unknown) => deps.log.warn({ err, file_id: fileId }, 'could not delete an old revision'));
  }
  return 'ready';
}
