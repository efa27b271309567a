import { Type, type Static } from '@sinclair/typebox';
import { ListEnvelope, Nullable, StringEnum, Timestamp, Uuid } from './common.ts';

/**
 * Files uploaded to a knowledge base (issue 46): their kinds, decided by their bytes and never by their name,
 * the limits an upload is held to, and the file's API shape.
 */

export const KNOWLEDGE_FILE_KINDS = ['pdf', 'docx', 'markdown', 'text', 'html', 'csv'] as const;
export type KnowledgeFileKind = (typeof KNOWLEDGE_FILE_KINDS)[number];

export const KNOWLEDGE_FILE_STATUSES = ['processing', 'ready', 'failed'] as const;
export type KnowledgeFileStatus = (typeof KNOWLEDGE_FILE_STATUSES)[number];

/** What an upload is held to; documented in the README and the endpoint's description. */
export const KNOWLEDGE_FILE_LIMITS = {
  /** Bytes of one file. */
  maxBytes: 20 * 1024 * 1024,
  /** Pages of one PDF. */
  maxPages: 500,
  /** Bytes a DOCX may unpack to (all its parts): a zip bomb is refused before it is parsed. */
  maxUnpackedBytes: 100 * 1024 * 1024,
  /** How many times larger than its packed size a DOCX part may unpack. */
  maxPackRatio: 200,
  /** Rows of one CSV. */
  maxRows: 50_000,
  /** Files in one knowledge base. */
  maxFiles: 500,
  /** Characters of a file name. */
  maxNameLength: 200,
} as const;

export const KnowledgeFileSchema = Type.Object({
  id: Uuid,
  kb_id: Uuid,
  name: Type.String({ description: 'The file name as uploaded; uploading the same name again replaces the file' }),
  kind: StringEnum(KNOWLEDGE_FILE_KINDS, { description: 'What the bytes are (read from the content, not the name)' }),
  content_type: Type.String({ description: 'The media type of the kind' }),
  size_bytes: Type.Integer({ minimum: 0 }),
  sha256: Type.String({ description: 'Hex SHA-256 of the bytes' }),
  revision: Type.Integer({ minimum: 1, description: 'How many times a file of this name was uploaded' }),
  status: StringEnum(KNOWLEDGE_FILE_STATUSES, {
    description: '`processing`: the text is being extracted (the previous revision, if any, is still served); `ready`: its passages are '
      + 'in the index; `failed`: it could not be read (see `error`)',
  }),
  error: Nullable(Type.String()),
  pages: Nullable(Type.Integer({ minimum: 0, description: 'Pages (PDF) or sections (other kinds) its text became; null while processing' })),
  chunks: Type.Integer({ minimum: 0, description: 'Passages in the index' }),
  parsed_at: Nullable(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'KnowledgeFile', additionalProperties: false, description: 'A file of a knowledge base, read into the same index as crawled pages' });
export type KnowledgeFile = Static<typeof KnowledgeFileSchema>;

export const KnowledgeFileListSchema = ListEnvelope(KnowledgeFileSchema, 'KnowledgeFileList');

export const KnowledgeFileParams = Type.Object({ id: Uuid, fileId: Uuid }, { additionalProperties: false });
