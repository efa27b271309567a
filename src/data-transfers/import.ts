import { CsvError } from 'csv-parse';
import { parse } from 'csv-parse/sync';
import type { Sql } from '../db/index.ts';
import { contactsByIdentity, findContact, mergeContacts, normalizeEmail, normalizePhone, upsertImportedContact } from '../db/contacts.ts';
import { completeImport, failImport, findImport, insertImport, markImportRunning, publicImport } from '../db/data-transfers.ts';
import { importHeaderErrors, importRow, type ImportedContact, type RowError } from '../domain/contact-import.ts';
import type { FamilyDeps } from '../deps.ts';
import { fieldError, notFound, validationError } from '../errors.ts';
import { newId } from '../ids.ts';
import type { Contact } from '../schemas/contacts.ts';
import type { ContactImport } from '../schemas/data-transfers.ts';
import { blobStoreOf } from '../storage/store.ts';
import { startWorkflow } from '../temporal/start.ts';
import { contactImportKind } from '../../workflows/data-transfers.ts';

/** At most this many rows in one import (the CSV body is 1 MiB at most anyway). */
const MAX_ROWS = 50_000;
/** The refusals a job or a dry run keeps (the count is in `skipped`). */
const MAX_ERRORS = 1_000;
const NORMALIZE = { phone: normalizePhone, email: normalizeEmail };

interface Parsed { header: string[]; rows: Record<string, string>[] }

/** The CSV as a header and records; a malformed file or header is 400 naming what is wrong. */
function parseCsv(csv: string): Parsed {
  let header: string[] = [];
  let rows: Record<string, string>[];
  try {
    rows = parse(csv, {
      bom: true, skip_empty_lines: true, trim: false,
      columns: (names: string[]) => { header = names; return names; },
    }) as Record<string, string>[];
  } catch (err) {
    if (err instanceof CsvError) throw fieldError('', 'invalid_csv', `the CSV cannot be read: ${err.message}`);
    throw err;
  }
  if (!header.length) throw fieldError('', 'invalid_csv', 'the CSV has no header line');
  const headerErrors = importHeaderErrors(header);
  if (headerErrors.length) throw validationError(headerErrors);
  if (rows.length > MAX_ROWS) throw fieldError('', 'too_many_rows', `an import takes ${MAX_ROWS} rows at most`);
  return { header, rows };
}

/** Each row checked: the valid contacts with their row numbers, and every refusal; a phone or email twice in the file is refused the second time. */
function checkRows(parsed: Parsed): { valid: { row: number; contact: ImportedContact }[]; errors: RowError[]; skipped: number } {
  const valid: { row: number; contact: ImportedContact }[] = [];
  const errors: RowError[] = [];
  const seen = new Map<string, number>();
  let skipped = 0;
  parsed.rows.forEach((record, i) => {
    const row = i + 1;
    const result = importRow(record, row, NORMALIZE);
    if ('errors' in result) {
      skipped++;
      errors.push(...result.errors);
      return;
    }
    const ids = [result.contact.phone && `p:${result.contact.phone}`, result.contact.email && `e:${result.contact.email}`].filter(Boolean) as string[];
    const earlier = ids.map((k) => seen.get(k)).find((n) => n !== undefined);
    if (earlier !== undefined) {
      skipped++;
      errors.push({ row, field: '', code: 'duplicate_row', message: `row ${row}: the same phone or email as row ${earlier}` });
      return;
    }
    for (const k of ids) seen.set(k, row);
    valid.push({ row, contact: result.contact });
  });
  return { valid, errors: errors.slice(0, MAX_ERRORS), skipped };
}

/** The dry run: every row checked and matched against today's contacts; nothing changes. */
export async function dryRunImport(sql: Sql, orgId: string, csv: string) {
  const parsed = parseCsv(csv);
  const { valid, errors } = checkRows(parsed);
  const holders = await contactsByIdentity(sql, orgId, valid.flatMap((v) => (v.contact.phone ? [v.contact.phone] : [])),
    valid.flatMap((v) => (v.contact.email ? [v.contact.email] : [])));
  const held = new Set(holders.flatMap((h) => [h.phone_e164 && `p:${h.phone_e164}`, h.email_lower && `e:${h.email_lower}`]).filter(Boolean));
  const updates = valid.filter((v) => held.has(`p:${v.contact.phone}`) || held.has(`e:${v.contact.email}`)).length;
  return { dry_run: true as const, rows: parsed.rows.length, valid: valid.length, creates: valid.length - updates, updates, errors };
}

/** The import itself: the CSV goes into the BlobStore and a workflow (`contact-import:<id>`) applies it. */
export async function startImport(deps: FamilyDeps, orgId: string, csv: string): Promise<ContactImport> {
  const parsed = parseCsv(csv);
  const id = newId();
  const blobKey = `imports/${orgId}/${id}.csv`;
  await blobStoreOf(deps.config).put(blobKey, Buffer.from(csv, 'utf8'), 'text/csv; charset=utf-8');
  const job = await insertImport(deps.sql, { id, orgId, blobKey, rows: parsed.rows.length });
  await startWorkflow(deps, contactImportKind, contactImportKind.id(id), [{ importId: id }], { orgId, summary: `import ${parsed.rows.length} contacts` });
  return publicImport(job);
}

/** The workflow's step: applies every valid row, 200 to a transaction; a finished job is left alone. */
export async function runImport(deps: Pick<FamilyDeps, 'sql' | 'config'>, importId: string): Promise<string> {
  const job = await findImport(deps.sql, importId);
  if (!job) return 'gone';
  if (job.status === 'succeeded' || job.status === 'failed') return job.status;
  const blob = await blobStoreOf(deps.config).get(job.blobKey);
  if (!blob) {
    await failImport(deps.sql, importId, 'the uploaded file is gone');
    return 'failed';
  }
  await markImportRunning(deps.sql, importId);
  const { valid, errors, skipped } = checkRows(parseCsv(blob.bytes.toString('utf8')));
  let created = 0, updated = 0, conflicts = 0;
  for (let i = 0; i < valid.length; i += 200) {
    await deps.sql.begin(async (tx) => {
      for (const { row, contact } of valid.slice(i, i + 200)) {
        const outcome = await upsertImportedContact(tx, job.orgId, contact);
        if (outcome === 'created') created++;
        else if (outcome === 'updated') updated++;
        else {
          conflicts++;
          if (errors.length < MAX_ERRORS) errors.push({ row, field: '', code: 'identity_conflict', message: `row ${row}: its phone and its email belong to two different contacts` });
        }
      }
    });
  }
  await completeImport(deps.sql, importId, { created, updated, skipped: skipped + conflicts, errors });
  return 'succeeded';
}

export async function abandonImport(deps: Pick<FamilyDeps, 'sql'>, importId: string, error: string): Promise<void> {
  await failImport(deps.sql, importId, error);
}

export async function getImport(sql: Sql, orgId: string, id: string): Promise<ContactImport> {
  const job = await findImport(sql, id, orgId);
  if (!job) throw notFound('contact import');
  return publicImport(job);
}

/** Merges contact `sourceId` into `targetId` (the source is deleted); 404 for the target, 400 on `source_contact_id` for the source. */
export async function mergeContact(sql: Sql, orgId: string, targetId: string, sourceId: string): Promise<Contact> {
  if (targetId === sourceId) throw fieldError('source_contact_id', 'same_contact', 'a contact cannot be merged into itself');
  return sql.begin(async (tx) => {
    if (!(await findContact(tx, orgId, targetId))) throw notFound('contact');
    const merged = await mergeContacts(tx, orgId, targetId, sourceId);
    if (!merged) throw fieldError('source_contact_id', 'not_found', 'no such contact in this organization');
    return merged;
  });
}
