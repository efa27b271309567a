import { Type } from '@sinclair/typebox';
import type { Readable } from 'node:stream';
import { AppError, fieldError, notFound } from '../../src/errors.ts';
import { findExport, listExports, publicExport } from '../../src/db/data-transfers.ts';
import { CONTENT_TYPES, createExport, exportedTable, exportFileName, exportStream } from '../../src/data-transfers/export.ts';
import { dryRunImport, getImport, mergeContact, startImport } from '../../src/data-transfers/import.ts';
import { IdParams } from '../../src/schemas/common.ts';
import { ContactSchema } from '../../src/schemas/contacts.ts';
import { DataTableParams } from '../../src/schemas/data-tables.ts';
import {
  ContactImportDryRunSchema, ContactImportQuery, ContactImportSchema, ContactMergeSchema, ConversationExportQuery, DataExportCreateSchema,
  DataExportListSchema, DataExportSchema, ExportListQuery, FormatQuery, type ExportFormat, type ExportResource,
} from '../../src/schemas/data-transfers.ts';
import type { Permission } from '../../src/schemas/permissions.ts';
import { blobStoreOf } from '../../src/storage/store.ts';
import { pageReply, route, type RouteFamily } from '../routing.ts';

const BASE = '/api/v1/rest';

const Download = (what: string) => ({
  description: `${what}, streamed as it is read: CSV (\`text/csv\`) or NDJSON (\`application/x-ndjson\`)`,
  schema: Type.Unsafe<Readable>({ type: 'string', description: 'CSV or NDJSON' }),
});

/** The streamed answer: its type, a download name, no caching. */
const streamed = (body: Readable, resource: ExportResource, format: ExportFormat) => ({
  status: 200, body,
  headers: {
    'Content-Type': CONTENT_TYPES[format], 'Content-Disposition': `attachment; filename="${exportFileName(resource, format)}"`,
    'Cache-Control': 'private, no-store', 'X-Content-Type-Options': 'nosniff',
  },
});

/** The permission reading a resource takes: exporting it needs the same. */
const READ: Record<ExportResource, Permission> = { conversations: 'conversations.read', contacts: 'campaigns.read', data_table_rows: 'agents.read' };

export const dataTransfersFamily: RouteFamily = {
  base: BASE,
  order: 135,
  tag: 'Exports and imports',
  description: 'Conversations (with or without transcripts), contacts and data-table rows as CSV or NDJSON, streamed; a large export as a '
    + 'job that leaves a download; contacts from CSV (a dry run with per-row errors, then the import as a job); merging two contacts.',
  routes: [
    route({
      method: 'GET', path: '/exports/conversations', operationId: 'export_conversations', summary: 'Export conversations (streamed)',
      description: 'The conversations the list\'s filters keep (every one, not a page), newest first; `transcripts=true` adds each '
        + 'conversation\'s messages. CSV text cells a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab, CR) are prefixed with `\'`.',
      permissions: ['conversations.read'], query: ConversationExportQuery,
      responses: { 200: Download('The conversations') },
      async handler({ query, principal, deps }) {
        const { format = 'csv', transcripts = false, ...filters } = query;
        return streamed(exportStream(deps.sql, principal.orgId, { resource: 'conversations', format, transcripts, filters }), 'conversations', format);
      },
    }),
    route({
      method: 'GET', path: '/exports/contacts', operationId: 'export_contacts', summary: 'Export contacts (streamed)',
      permissions: ['campaigns.read'], query: FormatQuery,
      responses: { 200: Download('The contacts, newest first') },
      async handler({ query, principal, deps }) {
        const format = query.format ?? 'csv';
        return streamed(exportStream(deps.sql, principal.orgId, { resource: 'contacts', format }), 'contacts', format);
      },
    }),
    route({
      method: 'GET', path: '/agents/:id/data-tables/:tableId/rows/export', operationId: 'export_data_rows', summary: 'Export a data table\'s rows (streamed)',
      permissions: ['agents.read'], params: DataTableParams, query: FormatQuery,
      responses: { 200: Download('The rows, in the order they were added') },
      async handler({ params, query, principal, deps }) {
        const format = query.format ?? 'csv';
        const table = await exportedTable(deps.sql, principal.orgId, params.id, params.tableId).catch(() => { throw notFound('data table'); });
        return streamed(exportStream(deps.sql, principal.orgId, { resource: 'data_table_rows', format, table }), 'data_table_rows', format);
      },
    }),
    route({
      method: 'POST', path: '/exports', operationId: 'create_export', summary: 'Start a large export (a job that leaves a download)',
      description: 'Answers 202 with the job (`queued`); a workflow writes the file and the job becomes `succeeded` with its `download_path` '
        + '(or `failed` with `error`). `conversations` takes `transcripts` and the list\'s `filters`; `data_table_rows` takes `widget_id` and `table_id`. '
        + 'Reading the resource\'s permission is needed (conversations.read, campaigns.read for contacts, agents.read for rows).',
      permissions: [], body: DataExportCreateSchema, extraPermissions: ({ body }) => [READ[body.resource]],
      responses: { 202: { description: 'The queued job', schema: DataExportSchema } },
      async handler({ body, principal, deps }) {
        const job = await createExport(deps, principal.orgId, body);
        return { status: 202, body: job, headers: { Location: `${BASE}/exports/${job.id}` } };
      },
    }),
    route({
      method: 'GET', path: '/exports', operationId: 'list_exports', summary: 'List export jobs, newest first',
      permissions: ['org.read'], query: ExportListQuery,
      responses: { 200: { description: 'A page of jobs', schema: DataExportListSchema } },
      async handler({ query, principal, deps }) {
        return pageReply(await listExports(deps.sql, principal.orgId, query), query);
      },
    }),
    route({
      method: 'GET', path: '/exports/:id', operationId: 'get_export', summary: 'An export job',
      permissions: [], params: IdParams,
      responses: { 200: { description: 'The job', schema: DataExportSchema } },
      async handler({ params, principal, deps }) {
        const job = await findExport(deps.sql, params.id, principal.orgId);
        if (!job || !principal.permissions.has(READ[job.resource])) throw notFound('export');
        return { status: 200, body: publicExport(job) };
      },
    }),
    route({
      method: 'GET', path: '/exports/:id/download', operationId: 'download_export', summary: 'Download a finished export',
      description: 'The file a `succeeded` job left; 409 `invalid_state` before that.',
      permissions: [], params: IdParams,
      responses: { 200: Download('The file') },
      async handler({ params, principal, deps }) {
        const job = await findExport(deps.sql, params.id, principal.orgId);
        if (!job || !principal.permissions.has(READ[job.resource])) throw notFound('export');
        const file = job.blobKey ? await blobStoreOf(deps.config).open(job.blobKey) : null;
        if (job.status !== 'succeeded' || !file) throw invalidState(job.status);
        return streamed(file.stream, job.resource, job.format);
      },
    }),
    route({
      method: 'POST', path: '/contacts/import', operationId: 'import_contacts', summary: 'Import contacts from CSV (dry run, or the import as a job)',
      description: 'A `text/csv` body (UTF-8, 1 MiB at most) whose header names a `phone` (E.164) or `email` column, and optionally `first_name`, '
        + '`last_name`, `do_not_call`; any other column becomes a fact. `dry_run=true` answers 200 with every refused cell by row and what the '
        + 'import would create or update, changing nothing. Without it: 202 with the job; a workflow creates or updates each valid row\'s contact '
        + '(matched by phone, then email) and skips the refused ones. A header it cannot use is 400 and nothing is queued.',
      permissions: ['campaigns.write'], query: ContactImportQuery, acceptsCsv: true,
      responses: {
        200: { description: 'The dry run', schema: ContactImportDryRunSchema },
        202: { description: 'The queued import', schema: ContactImportSchema },
      },
      async handler({ query, csv, principal, deps }) {
        if (csv === undefined) throw fieldError('', 'csv_required', 'send the contacts as a text/csv body');
        if (query.dry_run) return { status: 200, body: await dryRunImport(deps.sql, principal.orgId, csv) };
        const job = await startImport(deps, principal.orgId, csv);
        return { status: 202, body: job, headers: { Location: `${BASE}/contacts/imports/${job.id}` } };
      },
    }),
    route({
      method: 'GET', path: '/contacts/imports/:id', operationId: 'get_contact_import', summary: 'A contacts import job',
      permissions: ['campaigns.read'], params: IdParams,
      responses: { 200: { description: 'The job', schema: ContactImportSchema } },
      async handler({ params, principal, deps }) {
        return { status: 200, body: await getImport(deps.sql, principal.orgId, params.id) };
      },
    }),
    route({
      method: 'POST', path: '/contacts/:id/merge', operationId: 'merge_contacts', summary: 'Merge another contact into this one',
      description: 'The other contact\'s conversations, web fingerprints and campaign enrolments move here, then it is deleted. This contact '
        + 'keeps its names, phone and email, taking the other\'s where it has none; facts merge with this contact\'s winning; '
        + '`do_not_call` holds if either had it.',
      permissions: ['campaigns.write'], params: IdParams, body: ContactMergeSchema,
      responses: { 200: { description: 'The merged contact', schema: ContactSchema } },
      async handler({ params, body, principal, deps }) {
        return { status: 200, body: await mergeContact(deps.sql, principal.orgId, params.id, body.source_contact_id) };
      },
    }),
  ],
};

function invalidState(status: string) {
  return new AppError(409, 'invalid_state', `the export is ${status}: its file is there once it has succeeded`);
}
