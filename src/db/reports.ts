import { PAYLOAD_KEPT_FIELDS, redactValue, type RedactionPolicy } from '../domain/redaction.ts';
import type { RedactionSettings } from '../schemas/governance.ts';
import { listPage, type Db } from './index.ts';
import { newId } from '../ids.ts';
import type { Report, ReportCreate, ReportPatch, ReportRun, RunTrigger } from '../schemas/reports.ts';

/** Report definitions and their runs (the artifact stays in the row until the run is deleted with its report). */

interface ReportRow {
  id: string; org_id: string; name: string; widget_ids: string[]; data_categories: string[]; format: string; frequency: string;
  recipients: string[]; schedule_enabled: boolean; timezone: string; send_at: string; created_at: Date; updated_at: Date;
}
const COLUMNS = ['id', 'org_id', 'name', 'widget_ids', 'data_categories', 'format', 'frequency', 'recipients', 'schedule_enabled', 'timezone', 'send_at', 'created_at', 'updated_at'];

export interface ReportRecord extends Report { orgId: string }

const toReport = (r: ReportRow): ReportRecord => ({
  orgId: r.org_id,
  id: r.id, name: r.name, widget_ids: r.widget_ids, data_categories: r.data_categories as Report['data_categories'],
  format: r.format as Report['format'], frequency: r.frequency as Report['frequency'], recipients: r.recipients,
  schedule_enabled: r.schedule_enabled, timezone: r.timezone, send_at: r.send_at,
  created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString(),
});

/**
 * The API shape of a record (without the organization). A `manual` report has no Schedule, so it
 * answers `schedule_enabled: false`; the stored choice is kept for when a frequency is set again.
 */
export function toReportBody({ orgId: _orgId, ...report }: ReportRecord): Report {
  return { ...report, schedule_enabled: report.frequency !== 'manual' && report.schedule_enabled };
}

export async function insertReport(db: Db, orgId: string, input: ReportCreate): Promise<ReportRecord> {
  const [row] = await db<ReportRow[]>`
    insert into reports (id, org_id, name, widget_ids, data_categories, format, frequency, recipients, schedule_enabled, timezone, send_at)
    values (${newId()}, ${orgId}, ${input.name}, ${input.widget_ids ?? []}::uuid[], ${input.data_categories}::text[], ${input.format}, ${input.frequency},
      ${input.recipients ?? []}::text[], ${input.schedule_enabled ?? true}, ${input.timezone ?? 'UTC'}, ${input.send_at ?? '06:00'})
    returning ${db(COLUMNS)}`;
  return toReport(row!);
}

export async function findReport(db: Db, orgId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<ReportRecord | null> {
  const [row] = opts.forUpdate
    ? await db<ReportRow[]>`select ${db(COLUMNS)} from reports where id = ${id} and org_id = ${orgId} for update`
    : await db<ReportRow[]>`select ${db(COLUMNS)} from reports where id = ${id} and org_id = ${orgId}`;
  return row ? toReport(row) : null;
}

/** A report by id alone: for workflows, which carry ids, not organizations. */
export async function findReportById(db: Db, id: string): Promise<ReportRecord | null> {
  const [row] = await db<ReportRow[]>`select ${db(COLUMNS)} from reports where id = ${id}`;
  return row ? toReport(row) : null;
}

export async function listReports(db: Db, orgId: string, q: { limit: number; offset: number }): Promise<{ data: Report[]; total: number }> {
  return listPage(db, {
    ...q, columns: db(COLUMNS), from: db`from reports where org_id = ${orgId}`, order: db`created_at desc, id desc`,
  }, (row: ReportRow) => toReportBody(toReport(row)));
}

export async function updateReport(db: Db, orgId: string, id: string, patch: ReportPatch): Promise<ReportRecord | null> {
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(patch)) if (value !== undefined) fields[key] = value;
  if (Object.keys(fields).length === 0) return findReport(db, orgId, id);
  const [row] = await db<ReportRow[]>`
    update reports set
      name = coalesce(${patch.name ?? null}, name),
      widget_ids = coalesce(${patch.widget_ids ?? null}::uuid[], widget_ids),
      data_categories = coalesce(${patch.data_categories ?? null}::text[], data_categories),
      format = coalesce(${patch.format ?? null}, format),
      frequency = coalesce(${patch.frequency ?? null}, frequency),
      recipients = coalesce(${patch.recipients ?? null}::text[], recipients),
      schedule_enabled = coalesce(${patch.schedule_enabled ?? null}::boolean, schedule_enabled),
      timezone = coalesce(${patch.timezone ?? null}, timezone),
      send_at = coalesce(${patch.send_at ?? null}, send_at),
      updated_at = now()
    where id = ${id} and org_id = ${orgId}
    returning ${db(COLUMNS)}`;
  return row ? toReport(row) : null;
}

export async function deleteReport(db: Db, orgId: string, id: string): Promise<boolean> {
  const rows = await db`delete from reports where id = ${id} and org_id = ${orgId} returning id`;
  return rows.length > 0;
}

/**
 * An agent's delete: a report that covers only this agent is deleted (it must not widen to the
 * whole organization); the agent leaves every other report's `widget_ids`. Answers the ids of the
 * deleted reports, whose Schedules go after commit.
 */
export async function removeAgentFromReports(db: Db, orgId: string, agentId: string): Promise<string[]> {
  const gone = await db<{ id: string }[]>`delete from reports where org_id = ${orgId} and widget_ids = array[${agentId}::uuid] returning id`;
  await db`update reports set widget_ids = array_remove(widget_ids, ${agentId}::uuid), updated_at = now()
    where org_id = ${orgId} and widget_ids @> array[${agentId}::uuid]`;
  return gone.map((r) => r.id);
}

// ---- Runs ----

interface RunRow {
  id: string; org_id: string; report_id: string; status: string; trigger: string; period_start: Date; period_end: Date;
  created_at: Date; completed_at: Date | null; error: string | null;
}
const RUN_COLUMNS = ['id', 'org_id', 'report_id', 'status', 'trigger', 'period_start', 'period_end', 'created_at', 'completed_at', 'error'];

export interface RunRecord { orgId: string; run: Omit<ReportRun, 'download_url'> }

const toRun = (r: RunRow): RunRecord => ({
  orgId: r.org_id,
  run: {
    id: r.id, report_id: r.report_id, status: r.status as ReportRun['status'], trigger: r.trigger as RunTrigger,
    period_start: r.period_start.toISOString(), period_end: r.period_end.toISOString(), created_at: r.created_at.toISOString(),
    completed_at: r.completed_at?.toISOString() ?? null, error: r.error,
  },
});

/** A new run; null for a scheduled run of a period that already has one. */
export async function insertRun(db: Db, input: {
  id?: string; orgId: string; reportId: string; trigger: RunTrigger; periodStart: Date; periodEnd: Date;
  status?: 'generating' | 'failed'; error?: string | null;
}): Promise<RunRecord | null> {
  const status = input.status ?? 'generating';
  const [row] = await db<RunRow[]>`
    insert into report_runs (id, org_id, report_id, trigger, period_start, period_end, status, error, completed_at)
    values (${input.id ?? newId()}, ${input.orgId}, ${input.reportId}, ${input.trigger}, ${input.periodStart}, ${input.periodEnd},
      ${status}, ${input.error ?? null}, ${status === 'failed' ? db`now()` : null})
    on conflict (report_id, period_start) where trigger = 'schedule' do nothing
    returning ${db(RUN_COLUMNS)}`;
  return row ? toRun(row) : null;
}

export async function findRun(db: Db, orgId: string, reportId: string, runId: string): Promise<RunRecord | null> {
  const [row] = await db<RunRow[]>`select ${db(RUN_COLUMNS)} from report_runs where id = ${runId} and report_id = ${reportId} and org_id = ${orgId}`;
  return row ? toRun(row) : null;
}

export async function findRunById(db: Db, runId: string): Promise<RunRecord | null> {
  const [row] = await db<RunRow[]>`select ${db(RUN_COLUMNS)} from report_runs where id = ${runId}`;
  return row ? toRun(row) : null;
}

/** A scheduled run of a period (the one a Schedule firing twice finds again). */
export async function findScheduledRun(db: Db, reportId: string, periodStart: Date): Promise<RunRecord | null> {
  const [row] = await db<RunRow[]>`select ${db(RUN_COLUMNS)} from report_runs where report_id = ${reportId} and trigger = 'schedule' and period_start = ${periodStart}`;
  return row ? toRun(row) : null;
}

export async function listRuns(db: Db, orgId: string, reportId: string, q: { limit: number; offset: number }): Promise<{ data: RunRecord[]; total: number }> {
  return listPage(db, {
    ...q, columns: db(RUN_COLUMNS), from: db`from report_runs where report_id = ${reportId} and org_id = ${orgId}`, order: db`created_at desc, id desc`,
  }, toRun);
}

/** Saves a run's figures, masked as the redaction of the report's agents with the `reports` target asks (issue 47). */
export async function saveRunData(db: Db, runId: string, data: unknown): Promise<void> {
  const policy = await reportRedaction(db, runId);
  const saved = policy ? redactValue(data, policy, PAYLOAD_KEPT_FIELDS) : data;
  await db`update report_runs set data = ${db.json(saved as never)} where id = ${runId} and status = 'generating'`;
}

/** The union of what the report's agents (all of the organization's when it names none) hide in reports; null when none hides anything. */
async function reportRedaction(db: Db, runId: string): Promise<RedactionPolicy | null> {
  const rows = await db<{ redaction: RedactionSettings }[]>`select g.redaction from report_runs r join reports p on p.id = r.report_id
    join agent_governance g on g.org_id = r.org_id and (cardinality(p.widget_ids) = 0 or g.agent_id = any(p.widget_ids))
    where r.id = ${runId} and g.redaction is not null and g.redaction->'targets' ? 'reports'`;
  const kinds = [...new Set(rows.flatMap((r) => r.redaction.kinds))];
  if (!kinds.length) return null;
  return { kinds, countries: [...new Set(rows.flatMap((r) => r.redaction.national_id_countries))], patterns: rows.flatMap((r) => r.redaction.patterns) };
}

export async function runData<T>(db: Db, runId: string): Promise<T | null> {
  const [row] = await db<{ data: T | null }[]>`select data from report_runs where id = ${runId}`;
  return row?.data ?? null;
}

/** The period and headline of a run's figures (what its mail says), without reading the rest of them. */
export async function runSummary<T>(db: Db, runId: string): Promise<T | null> {
  const [row] = await db<{ data: T | null }[]>`
    select case when data is not null then jsonb_build_object('period', data->'period', 'headline', data->'headline') end as data
    from report_runs where id = ${runId}`;
  return row?.data ?? null;
}

/** Records a run's artifact, whose bytes the caller put in the blob store under `key`. */
export async function saveRunArtifact(db: Db, runId: string, artifact: { key: string; size: number; contentType: string; fileName: string }): Promise<void> {
  await db`update report_runs set artifact = null, artifact_key = ${artifact.key}, artifact_size = ${artifact.size},
    content_type = ${artifact.contentType}, file_name = ${artifact.fileName}
    where id = ${runId} and status = 'generating'`;
}

/**
 * A run's artifact: its blob store `key` (runs since issue 46), or its `bytes` (runs stored before, kept in the row).
 */
export interface StoredArtifact { key: string | null; bytes: Buffer | null; contentType: string; fileName: string; size: number }

interface ArtifactRow { artifact: Buffer | null; artifact_key: string | null; artifact_size: number | null; content_type: string | null; file_name: string | null }

const toArtifact = (row: ArtifactRow | undefined): StoredArtifact | null => {
  if (!row || (!row.artifact && !row.artifact_key)) return null;
  return {
    key: row.artifact_key, bytes: row.artifact, contentType: row.content_type!, fileName: row.file_name!,
    size: row.artifact?.length ?? row.artifact_size ?? 0,
  };
};

export async function runArtifact(db: Db, runId: string): Promise<StoredArtifact | null> {
  const [row] = await db<ArtifactRow[]>`
    select artifact, artifact_key, artifact_size, content_type, file_name from report_runs where id = ${runId}`;
  return toArtifact(row);
}

/** The artifact of a succeeded run, for the signed download. */
export async function succeededArtifact(db: Db, runId: string): Promise<StoredArtifact | null> {
  const [row] = await db<ArtifactRow[]>`
    select artifact, artifact_key, artifact_size, content_type, file_name from report_runs where id = ${runId} and status = 'succeeded'`;
  return toArtifact(row);
}

/** The recipients a run's mail has gone to already. */
export async function runMailedTo(db: Db, runId: string): Promise<string[]> {
  const [row] = await db<{ mailed_to: string[] }[]>`select mailed_to from report_runs where id = ${runId}`;
  return row?.mailed_to ?? [];
}

export async function markRunMailedTo(db: Db, runId: string, recipient: string): Promise<void> {
  await db`update report_runs set mailed_to = array_append(mailed_to, ${recipient}) where id = ${runId} and not (${recipient} = any(mailed_to))`;
}

export async function markRunMailed(db: Db, runId: string): Promise<void> {
  await db`update report_runs set mailed_at = coalesce(mailed_at, now()) where id = ${runId}`;
}

export async function markRunSucceeded(db: Db, runId: string): Promise<boolean> {
  const rows = await db`update report_runs set status = 'succeeded', completed_at = now() where id = ${runId} and status = 'generating' returning id`;
  return rows.length > 0;
}

/** Marks a generating run failed; false when it had already ended (a retried activity). */
export async function markRunFailed(db: Db, runId: string, error: string): Promise<boolean> {
  const rows = await db`update report_runs set status = 'failed', error = ${error}, completed_at = now() where id = ${runId} and status = 'generating' returning id`;
  return rows.length > 0;
}
