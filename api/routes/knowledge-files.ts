import { Type } from '@sinclair/typebox';
import { notFound, validationError } from '../../src/errors.ts';
import { findKnowledgeBase } from '../../src/db/knowledge-bases.ts';
import { findKnowledgeFile, listKnowledgeFiles, publicFile } from '../../src/db/knowledge-files.ts';
import { removeKnowledgeFile, uploadKnowledgeFile } from '../../src/knowledge/files.ts';
import { IdParams, PageQuery } from '../../src/schemas/common.ts';
import { KNOWLEDGE_FILE_LIMITS, KnowledgeFileListSchema, KnowledgeFileParams, KnowledgeFileSchema } from '../../src/schemas/knowledge-files.ts';
import { pageReply, route, type RouteFamily } from '../routing.ts';

const BASE = '/api/v1/rest';
const L = KNOWLEDGE_FILE_LIMITS;

/** The JSON form of an upload (for MCP clients and small files): the bytes in base64. */
const KnowledgeFileUploadSchema = Type.Object({
  name: Type.String({ minLength: 1, maxLength: L.maxNameLength, description: 'The file name; the same name again replaces the file' }),
  content_base64: Type.String({ minLength: 1, description: 'The file\'s bytes, base64 (the JSON body is at most 1 MiB; send larger files as multipart/form-data)' }),
  content_type: Type.Optional(Type.String({ maxLength: 200, description: 'The media type the client knows it by; the kind is read from the bytes' })),
}, { $id: 'KnowledgeFileUpload', additionalProperties: false });

const LIMITS_TEXT = `Accepted: PDF, DOCX, Markdown, plain text, HTML and CSV, told apart by their bytes (a PDF renamed .txt is a PDF; `
  + `an image named .pdf is refused with 415 \`unsupported_file_type\`). Limits: ${L.maxBytes / 1024 / 1024} MiB a file (413 \`file_too_large\`), `
  + `${L.maxPages} pages a PDF, ${L.maxRows} rows a CSV, a DOCX unpacking to at most ${L.maxUnpackedBytes / 1024 / 1024} MiB and ${L.maxPackRatio} `
  + `times a part's packed size (422 \`unsafe_file\`), ${L.maxFiles} files a knowledge base (409 \`too_many_files\`). An encrypted PDF is `
  + '422 `encrypted_file`, a damaged file 422 `unreadable_file`; nothing is stored then.';

export const knowledgeFilesFamily: RouteFamily = {
  base: BASE,
  order: 101,
  tag: 'Knowledge files',
  description: 'Documents uploaded to a knowledge base (menus, price lists, policies, manuals), read into the same index as crawled pages '
    + 'and cited by file name and page or heading, "(Price list, page 2)". Read with `sites.read`, change with `knowledge.write`.',
  routes: [
    route({
      method: 'POST', path: '/knowledge-bases/:id/files', operationId: 'upload_knowledge_file', summary: 'Upload a file to a knowledge base',
      description: 'Takes `multipart/form-data` with the file in the field `file` (and optionally `name`), or JSON `{name, content_base64}`. '
        + 'The file is checked and stored at once and read by a workflow: it answers `processing`, and `GET` shows `ready` (its passages '
        + 'are in the index) or `failed` with `error`. Uploading a name the knowledge base already holds replaces that file (200): its old '
        + `passages are served until the new ones replace them, in one step. ${LIMITS_TEXT}`,
      permissions: ['knowledge.write'], params: IdParams, body: KnowledgeFileUploadSchema,
      acceptsUpload: { maxBytes: L.maxBytes, description: 'The file (PDF, DOCX, Markdown, plain text, HTML or CSV)' },
      responses: {
        201: { description: 'The new file, being read', schema: KnowledgeFileSchema },
        200: { description: 'The file of that name, replaced, being read', schema: KnowledgeFileSchema },
      },
      async handler({ params, body, upload, principal, deps }) {
        const file = upload
          ? { name: upload.fields.name ?? upload.fileName, contentType: upload.contentType, bytes: upload.bytes }
          : { name: body.name, contentType: body.content_type ?? '', bytes: decodeBase64(body.content_base64) };
        const stored = await uploadKnowledgeFile(deps, principal.orgId, params.id, file);
        if (!stored) throw notFound('knowledge base');
        const status = stored.replaced ? 200 : 201;
        return { status, body: publicFile(stored.file), headers: { Location: `${BASE}/knowledge-bases/${params.id}/files/${stored.file.id}` } };
      },
    }),
    route({
      method: 'GET', path: '/knowledge-bases/:id/files', operationId: 'list_knowledge_files', summary: 'List a knowledge base\'s files, newest first',
      permissions: ['sites.read'], params: IdParams, query: PageQuery,
      responses: { 200: { description: 'A page of files', schema: KnowledgeFileListSchema } },
      async handler({ params, query, principal, deps }) {
        if (!(await findKnowledgeBase(deps.sql, principal.orgId, params.id))) throw notFound('knowledge base');
        const page = await listKnowledgeFiles(deps.sql, principal.orgId, params.id, query);
        return pageReply({ data: page.data.map(publicFile), total: page.total }, query);
      },
    }),
    route({
      method: 'GET', path: '/knowledge-bases/:id/files/:fileId', operationId: 'get_knowledge_file', summary: 'Get a file and the status of its reading',
      permissions: ['sites.read'], params: KnowledgeFileParams,
      responses: { 200: { description: 'The file', schema: KnowledgeFileSchema } },
      async handler({ params, principal, deps }) {
        const file = await findKnowledgeFile(deps.sql, principal.orgId, params.id, params.fileId);
        if (!file) throw notFound('file');
        return { status: 200, body: publicFile(file) };
      },
    }),
    route({
      method: 'DELETE', path: '/knowledge-bases/:id/files/:fileId', operationId: 'delete_knowledge_file', summary: 'Delete a file and its passages',
      description: 'Agents stop answering from it at once; its stored bytes are deleted.',
      permissions: ['knowledge.write'], params: KnowledgeFileParams,
      responses: { 204: { description: 'Deleted' } },
      async handler({ params, principal, deps }) {
        if (!(await removeKnowledgeFile(deps, principal.orgId, params.id, params.fileId))) throw notFound('file');
        return { status: 204 };
      },
    }),
  ],
};

/** Strict base64 (padding optional): a body that is not is 400 on `content_base64`. */
function decodeBase64(text: string): Buffer {
  const clean = text.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean) || clean.length % 4 === 1) {
    throw validationError([{ field: 'content_base64', code: 'invalid_base64', message: 'content_base64 must be base64' }]);
  }
  return Buffer.from(clean, 'base64');
}
