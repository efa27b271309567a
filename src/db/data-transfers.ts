import type { Db } from './index.ts';
import { newId } from '../ids.ts';
import type { ContactImport, DataExport, ExportFormat, ExportResource } from '../schemas/data-transfers.ts';
import type { RowError } from '../domain/contact-import.ts';

/** The export and import jobs (data_exports, contact_imports): their only repository. */

interface ExportRow {
  id: string; org_id: string; resource: ExportResource; format: ExportFormat; params: Record<string, unknown>; status: DataExport['status'];
  row_count: number | null; byte_count: number | null; blob_key: string | null; error: string | null; created_at: Date; completed_at: Date | null;
}

export type ExportJob = DataExport & { orgId: string; params: Record<string, unknown>; blobKey: string | null };

const toExport = (r: ExportRow): ExportJob => ({
  id: r.id, resource: r.resource, format: r.format, status: r.status, row_count: r.row_count, byte_count: r.byte_count === null ? null : Number(r.byte_count),
  error: r.error, download_path: r.status === 'succeeded' ? `/api/v1/rest/exports/${r.id}/download` : null,
  created_at: r.created_at.toISOString(), completed_at: r.completed_at ? r.completed_at.toISOString() : null,
  orgId: r.org_id, params: r.params, blobKey: r.blob_key,
});

/** The API shape of a job (without what only the workflow reads). */
export const publicExport = ({ orgId: _o, params: _p, blobKey: _b, ...job }: ExportJob): DataExport => job;

export async function insertExport(db: Db, orgId: string, input: { resource: ExportResource; format: ExportFormat; params: Record<string, unknown> }): Promise<ExportJob> {
  const [row] = await db<ExportRow[]>`insert into data_exports (id, org_id, resource, format, params)
    values (${newId()}, ${orgId}, ${input.resource}, ${input.format}, ${db.json(input.params as never)}) returning *`;
  return toExport(row!);
}

/** A job by id, within an organization (the API) or by id alone (the workflow). */
export async function findExport(db: Db, id: string, orgId?: string): Promise<ExportJob | null> {
  const [row] = await db<ExportRow[]>`select * from data_exports where id = ${id} ${orgId ? db`and org_id = ${orgId}` : db``}`;
  return row ? toExport(row) : null;
}

export async function listExports(db: Db, orgId: string, q: { limit: number; offset: number }): Promise<{ data: DataExport[]; total: number }> {
  const [rows, [count]] = await Promise.all([
    db<ExportRow[]>`select * from data_exports where org_id = ${orgId} order by created_at desc, id desc limit ${q.limit} offset ${q.offset}`,
    db<{ n: number }[]>`select count(*)::bigint as n from data_exports where org_id = ${orgId}`,
  ]);
  return { data: rows.map((r) => publicExport(toExport(r))), total: count?.n ?? 0 };
}

export async function markExportRunning(db: Db, id: string): Promise<void> {
  await db`update data_exports set status = 'running' where id = ${id} and status = 'queued'`;
}

/** Records the finished file; a job already finished keeps its first result (a retried activity). */
export async function completeExport(db: Db, id: string, result: { blobKey: string; rows: number; bytes: number }): Promise<void> {
  await db`update data_exports set status = 'succeeded', blob_key = ${result.blobKey}, row_count = ${result.rows}, byte_count = ${result.bytes},
    completed_at = now() where id = ${id} and status in ('queued', 'running')`;
}

export async function failExport(db: Db, id: string, error: string): Promise<void> {
  await db`update data_exports set status = 'failed', error = ${error}, completed_at = now() where id = ${id} and status in ('queued', 'running')`;
}

interface ImportRow {
  id: string; org_id: string; status: ContactImport['status']; blob_key: string; row_count: number; created: number; updated: number; skipped: number;
  errors: RowError[]; error: string | null; created_at: Date; completed_at: Date | null;
}

export type ImportJob = ContactImport & { orgId: string; blobKey: string };

const toImport = (r: ImportRow): ImportJob => ({
  id: r.id, status: r.status, rows: r.row_count, created: r.created, updated: r.updated, skipped: r.skipped, errors: r.errors, error: r.error,
  created_at: r.created_at.toISOString(), completed_at: r.completed_at ? r.completed_at.toISOString() : null, orgId: r.org_id, blobKey: r.blob_key,
});

export const publicImport = ({ orgId: _o, blobKey: _b, ...job }: ImportJob): ContactImport => job;

export async function insertImport(db: Db, input: { id: string; orgId: string; blobKey: string; rows: number }): Promise<ImportJob> {
  const [row] = await db<ImportRow[]>`insert into contact_imports (id, org_id, blob_key, row_count)
    values (${input.id}, ${input.orgId}, ${input.blobKey}, ${input.rows}) returning *`;
  return toImport(row!);
}

export async function findImport(db: Db, id: string, orgId?: string): Promise<ImportJob | null> {
  const [row] = await db<ImportRow[]>`select * from contact_imports where id = ${id} ${orgId ? db`and org_id = ${orgId}` : db``}`;
  return row ? toImport(row) : null;
}

export async function markImportRunning(db: Db, id: string): Promise<void> {
  await db`update contact_imports set status = 'running' where id = ${id} and status = 'queued'`;
}

export async function completeImport(db: Db, id: string, result: { created: number; updated: number; skipped: number; errors: RowError[] }): Promise<void> {
  await db`update contact_imports set status = 'succeeded', created = ${result.created}, updated = ${result.updated}, skipped = ${result.skipped},
    errors = ${db.json(result.errors as never)}, completed_at = now() where id = ${id} and status in ('queued', 'running')`;
}

export async function failImport(db: Db, id: string, error: string): Promise<void> {
  await db`update contact_imports set status = 'failed', error = ${error}, completed_at = now() where id = ${id} and status in ('queued', 'running')`;
}
