import { Readable } from 'node:stream';
import type { Sql } from '../db/index.ts';
import { streamConversations } from '../db/conversations.ts';
import { streamContacts } from '../db/contacts.ts';
import { findDataTable, streamDataRows } from '../db/data-tables.ts';
import { completeExport, failExport, findExport, insertExport, markExportRunning, publicExport } from '../db/data-transfers.ts';
import { csvCellText, csvLine } from '../domain/data-rows.ts';
import type { FamilyDeps } from '../deps.ts';
import { fieldError } from '../errors.ts';
import type { Conversation, ConversationListQuery, TranscriptMessage } from '../schemas/conversations.ts';
import type { Contact } from '../schemas/contacts.ts';
import type { DataExport, DataExportCreate, ExportFormat, ExportResource } from '../schemas/data-transfers.ts';
import type { DataTable } from '../schemas/data-tables.ts';
import { blobStoreOf } from '../storage/store.ts';
import { startWorkflow } from '../temporal/start.ts';
import { dataExportKind } from '../../workflows/data-transfers.ts';

/** What one export covers. */
export type ExportSpec =
  | { resource: 'conversations'; format: ExportFormat; transcripts: boolean; filters: Omit<ConversationListQuery, 'limit' | 'offset'> }
  | { resource: 'contacts'; format: ExportFormat }
  | { resource: 'data_table_rows'; format: ExportFormat; table: DataTable };

/** Any value as a CSV cell: text a spreadsheet would run as a formula is prefixed with `'`; objects as JSON. */
const cell = (value: unknown): string => {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return csvCellText(JSON.stringify(value));
  return csvCellText(value as string | number | boolean);
};
const row = (values: unknown[]) => csvLine(values.map(cell));

const CONVERSATION_COLUMNS = ['id', 'widget_id', 'surface', 'is_simulated', 'status', 'started_at', 'ended_at', 'duration_seconds', 'page_url',
  'intent', 'outcome', 'contact_id', 'labels', 'extracted_data'] as const;
const CONTACT_COLUMNS = ['id', 'phone_e164', 'email_lower', 'first_name', 'last_name', 'do_not_call', 'conversation_count', 'first_seen_at',
  'last_seen_at', 'created_at', 'updated_at', 'visitor_ids', 'facts'] as const;

const transcriptText = (messages: TranscriptMessage[]) => messages.map((m) => `[${m.ts}] ${m.role}: ${m.text}`).join('\n');

function conversationCells(c: Conversation & { messages?: TranscriptMessage[] }, transcripts: boolean): unknown[] {
  const cells: unknown[] = CONVERSATION_COLUMNS.map((k) => (k === 'labels' ? c.labels.join(';') : c[k]));
  if (transcripts) cells.push(transcriptText(c.messages ?? []));
  return cells;
}

/**
 * The export's lines, as they are read from the database in batches: the CSV header then one line per record,
 * or one JSON object per line. The caller hands the connection pool (a cursor holds one of its connections); the reads are the repositories' stream functions.
 */
export async function* exportLines(sql: Sql, orgId: string, spec: ExportSpec, counter?: { rows: number }): AsyncGenerator<string> {
  const csv = spec.format === 'csv';
  const emit = (n: number) => { if (counter) counter.rows += n; };
  if (spec.resource === 'conversations') {
    if (csv) yield row([...CONVERSATION_COLUMNS, ...(spec.transcripts ? ['transcript'] : [])]);
    for await (const batch of streamConversations(sql, orgId, spec.filters, { transcripts: spec.transcripts })) {
      emit(batch.length);
      yield batch.map((c) => (csv ? row(conversationCells(c, spec.transcripts)) : `${JSON.stringify(c)}\n`)).join('');
    }
  } else if (spec.resource === 'contacts') {
    if (csv) yield row([...CONTACT_COLUMNS]);
    for await (const batch of streamContacts(sql, orgId)) {
      emit(batch.length);
      yield batch.map((c: Contact) => (csv ? row(CONTACT_COLUMNS.map((k) => (k === 'visitor_ids' ? c.visitor_ids.join(';') : c[k]))) : `${JSON.stringify(c)}\n`)).join('');
    }
  } else {
    const names = spec.table.columns.map((c) => c.name);
    if (csv) yield row(names);
    for await (const batch of streamDataRows(sql, spec.table.id)) {
      emit(batch.length);
      yield batch.map((r) => (csv ? csvLine(names.map((n) => csvCellText(r[n] ?? null))) : `${JSON.stringify(r)}\n`)).join('');
    }
  }
}

/** The export as a response body, streamed while it is read. */
export function exportStream(sql: Sql, orgId: string, spec: ExportSpec): Readable {
  return Readable.from(exportLines(sql, orgId, spec));
}

export const CONTENT_TYPES: Record<ExportFormat, string> = { csv: 'text/csv; charset=utf-8', ndjson: 'application/x-ndjson; charset=utf-8' };

/** A file name for the download: `<resource>-<date>.<format>`. */
export const exportFileName = (resource: ExportResource, format: ExportFormat) => `${resource}-${new Date().toISOString().slice(0, 10)}.${format}`;

/** The data table an export names, within the organization and agent: 400 on the field otherwise (a body's ids). */
export async function exportedTable(sql: Sql, orgId: string, agentId: string | undefined, tableId: string | undefined): Promise<DataTable> {
  if (!agentId) throw fieldError('widget_id', 'required', 'widget_id is required to export a data table');
  if (!tableId) throw fieldError('table_id', 'required', 'table_id is required to export a data table');
  const table = await findDataTable(sql, orgId, agentId, tableId);
  if (!table) throw fieldError('table_id', 'not_found', 'no such data table for this agent');
  return table;
}

/** Queues a large export: the job row, then its workflow (`data-export:<id>`), which leaves the file in the BlobStore. */
export async function createExport(deps: FamilyDeps, orgId: string, body: DataExportCreate): Promise<DataExport> {
  const params: Record<string, unknown> = {};
  if (body.resource === 'conversations') Object.assign(params, { transcripts: body.transcripts ?? false, filters: body.filters ?? {} });
  if (body.resource === 'data_table_rows') {
    const table = await exportedTable(deps.sql, orgId, body.widget_id, body.table_id);
    Object.assign(params, { agent_id: body.widget_id, table_id: table.id });
  }
  const job = await insertExport(deps.sql, orgId, { resource: body.resource, format: body.format ?? 'csv', params });
  await startWorkflow(deps, dataExportKind, dataExportKind.id(job.id), [{ exportId: job.id }],
    { orgId, agentId: (params.agent_id as string | undefined) ?? null, summary: `export ${job.resource} as ${job.format}` });
  return publicExport(job);
}

/**
 * The workflow's step: writes the whole export into the BlobStore (`exports/<org>/<id>.<format>`) and records it.
 * Idempotent: a finished job is left alone, and a retry writes the same key again.
 */
export async function runExport(deps: Pick<FamilyDeps, 'sql' | 'config'>, exportId: string): Promise<'succeeded' | 'failed' | 'gone'> {
  const job = await findExport(deps.sql, exportId);
  if (!job) return 'gone';
  if (job.status === 'succeeded' || job.status === 'failed') return job.status;
  await markExportRunning(deps.sql, exportId);
  let spec: ExportSpec;
  if (job.resource === 'data_table_rows') {
    const table = await findDataTable(deps.sql, job.orgId, job.params.agent_id as string, job.params.table_id as string);
    if (!table) {
      await failExport(deps.sql, exportId, 'the data table was deleted');
      return 'failed';
    }
    spec = { resource: 'data_table_rows', format: job.format, table };
  } else if (job.resource === 'conversations') {
    spec = { resource: 'conversations', format: job.format, transcripts: job.params.transcripts === true, filters: (job.params.filters ?? {}) as Omit<ConversationListQuery, 'limit' | 'offset'> };
  } else {
    spec = { resource: 'contacts', format: job.format };
  }
  const chunks: Buffer[] = [];
  const counter = { rows: 0 };
  for await (const text of exportLines(deps.sql, job.orgId, spec, counter)) {
    chunks.push(Buffer.from(text, 'utf8'));
  }
  const bytes = Buffer.concat(chunks);
  const blobKey = `exports/${job.orgId}/${job.id}.${job.format}`;
  await blobStoreOf(deps.config).put(blobKey, bytes, CONTENT_TYPES[job.format]);
  await completeExport(deps.sql, exportId, { blobKey, rows: counter.rows, bytes: bytes.length });
  return 'succeeded';
}

/** Marks a job failed (the workflow's last word when its step kept failing). */
export async function abandonExport(deps: Pick<FamilyDeps, 'sql'>, exportId: string, error: string): Promise<void> {
  await failExport(deps.sql, exportId, error);
}
