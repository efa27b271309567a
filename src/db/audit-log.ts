import type { Db, Sql } from './index.ts';
import { newId } from '../ids.ts';
import type { AuditChannel, AuditEntry, AuditLogQuery, AuditOutcome } from '../schemas/audit-log.ts';

/** The audit log's one repository: append, read, and the retention sweep (the only delete). */

export interface AuditRecord {
  orgId: string; apiKeyId: string; memberId: string | null; channel: AuditChannel; method: string; path: string;
  operation: string; resourceId: string | null; status: number; outcome: AuditOutcome; errorCode: string | null;
  clientAddress: string | null; requestId: string | null;
}

export async function appendAuditEntry(db: Db, r: AuditRecord): Promise<void> {
  await db`insert into audit_log (id, org_id, api_key_id, member_id, channel, method, path, operation, resource_id, status, outcome,
      error_code, client_address, request_id)
    values (${newId()}, ${r.orgId}, ${r.apiKeyId}, ${r.memberId}, ${r.channel}, ${r.method}, ${r.path}, ${r.operation}, ${r.resourceId},
      ${r.status}, ${r.outcome}, ${r.errorCode}, ${r.clientAddress}, ${r.requestId})`;
}

/** Many entries in one statement, in their order (each row's `at` is its own clock reading, so their order holds). */
export async function appendAuditEntries(db: Db, records: AuditRecord[]): Promise<void> {
  if (records.length === 0) return;
  const col = <T>(pick: (r: AuditRecord) => T) => records.map(pick);
  await db`insert into audit_log (id, org_id, api_key_id, member_id, channel, method, path, operation, resource_id, status, outcome,
      error_code, client_address, request_id)
    select * from unnest(${col(() => newId())}::uuid[], ${col((r) => r.orgId)}::uuid[], ${col((r) => r.apiKeyId)}::uuid[],
      ${col((r) => r.memberId)}::uuid[], ${col((r) => r.channel)}::text[], ${col((r) => r.method)}::text[], ${col((r) => r.path)}::text[],
      ${col((r) => r.operation)}::text[], ${col((r) => r.resourceId)}::text[], ${col((r) => r.status)}::smallint[], ${col((r) => r.outcome)}::text[],
      ${col((r) => r.errorCode)}::text[], ${col((r) => r.clientAddress)}::text[], ${col((r) => r.requestId)}::text[])`;
}

interface Row {
  id: string; at: Date; api_key_id: string; member_id: string | null; channel: AuditChannel; method: AuditEntry['method']; path: string;
  operation: string; resource_id: string | null; status: number; outcome: AuditOutcome; error_code: string | null;
  client_address: string | null; request_id: string | null;
}

const toEntry = (r: Row): AuditEntry => ({
  id: r.id, at: r.at.toISOString(),
  actor: { type: r.member_id ? 'member' : 'api_key', api_key_id: r.api_key_id, member_id: r.member_id },
  channel: r.channel, operation: r.operation, method: r.method, path: r.path, resource_id: r.resource_id, status: r.status,
  outcome: r.outcome, error_code: r.error_code, client_address: r.client_address, request_id: r.request_id,
});

/** A page of an organization's entries, newest first, with the filters of `GET /audit-log`. */
export async function listAuditEntries(db: Db, orgId: string, q: AuditLogQuery & { limit: number; offset: number }):
  Promise<{ data: AuditEntry[]; total: number }> {
  const where = db`org_id = ${orgId}
    ${q.from ? db`and at >= ${new Date(q.from)}` : db``} ${q.to ? db`and at < ${new Date(q.to)}` : db``}
    ${q.operation ? db`and operation = ${q.operation}` : db``} ${q.resource_id ? db`and resource_id = ${q.resource_id}` : db``}
    ${q.api_key_id ? db`and api_key_id = ${q.api_key_id}` : db``} ${q.member_id ? db`and member_id = ${q.member_id}` : db``}
    ${q.channel ? db`and channel = ${q.channel}` : db``} ${q.outcome ? db`and outcome = ${q.outcome}` : db``}`;
  const [rows, [count]] = await Promise.all([
    db<Row[]>`select * from audit_log where ${where} order by at desc, id desc limit ${q.limit} offset ${q.offset}`,
    db<{ total: number }[]>`select count(*)::bigint as total from audit_log where ${where}`,
  ]);
  return { data: rows.map(toEntry), total: count?.total ?? 0 };
}

/**
 * The retention sweep: deletes the entries older than `cutoff` (of one organization, or of all), in
 * batches of `batchSize`; answers how many went. The only delete the append-only trigger lets through,
 * because this transaction says so (`ams.audit_retention`).
 */
export async function deleteAuditEntriesBefore(sql: Sql, cutoff: Date, opts: { orgId?: string; batchSize?: number } = {}): Promise<number> {
  const batch = opts.batchSize ?? 10_000;
  let total = 0;
  for (;;) {
    const n = await sql.begin(async (tx) => {
      await tx`select set_config('ams.audit_retention', 'on', true)`;
      return (await tx`delete from audit_log where id in (select id from audit_log where at < ${cutoff}
        ${opts.orgId ? tx`and org_id = ${opts.orgId}` : tx``} limit ${batch})`).count;
    });
    total += n;
    if (n < batch) return total;
  }
}

/** One retention batch (issue 47's `audit_log` key): up to `limit` entries of the organization older than `cutoff`. */
export async function deleteAuditBatch(tx: Db, orgId: string, cutoff: Date, limit: number): Promise<number> {
  await tx`select set_config('ams.audit_retention', 'on', true)`;
  return (await tx`delete from audit_log where id in (select id from audit_log where org_id = ${orgId} and at < ${cutoff} limit ${limit})`).count;
}
