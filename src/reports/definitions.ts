import type { Db } from '../db/index.ts';
import { agentExists } from '../db/agents.ts';
import { blobStoreOf } from '../storage/store.ts';
import { artifactBlobPrefix } from './runs.ts';
import { deleteReport, findReport, insertReport, toReportBody, updateReport } from '../db/reports.ts';
import { isTimeZone } from '../domain/report-periods.ts';
import { fieldError, notFound, validationError } from '../errors.ts';
import type { Report, ReportCreate, ReportPatch } from '../schemas/reports.ts';
import { scheduleIds } from '../temporal/ids.ts';
import { unscheduleWorkflow } from '../temporal/start.ts';
import { syncReportSchedule, type ScheduleDeps } from './schedules.ts';
import type { Sql } from '../db/index.ts';

/**
 * Report definitions. Each change and its Schedule go together: the row is written, then the
 * Schedule created, updated or removed inside the same transaction, so a Temporal that cannot
 * take it (503) leaves the definition as it was.
 */

export interface ReportDeps extends ScheduleDeps { sql: Sql }

/** The checks no schema can say: a known time zone, and agents of this organization. */
async function checkFields(db: Db, orgId: string, input: { timezone?: string | undefined; widget_ids?: string[] | undefined }): Promise<void> {
  if (input.timezone !== undefined && !isTimeZone(input.timezone)) {
    throw fieldError('timezone', 'invalid_timezone', 'timezone must be an IANA time zone, e.g. UTC or Europe/Paris');
  }
  const unknown: string[] = [];
  for (const [i, id] of (input.widget_ids ?? []).entries()) {
    if (!(await agentExists(db, orgId, id))) unknown.push(`widget_ids[${i}]`);
  }
  if (unknown.length) {
    throw validationError(unknown.map((field) => ({ field, code: 'unknown_agent', message: `${field} names no agent of this organization` })));
  }
}

export async function createReport(deps: ReportDeps, orgId: string, input: ReportCreate): Promise<Report> {
  return deps.sql.begin(async (tx) => {
    await checkFields(tx, orgId, input);
    const report = await insertReport(tx, orgId, input);
    await syncReportSchedule(deps, report);
    return toReportBody(report);
  });
}

export async function patchReport(deps: ReportDeps, orgId: string, id: string, patch: ReportPatch): Promise<Report> {
  return deps.sql.begin(async (tx) => {
    await checkFields(tx, orgId, patch);
    const before = await findReport(tx, orgId, id, { forUpdate: true });
    if (!before) throw notFound('report');
    const report = (await updateReport(tx, orgId, id, patch))!;
    const scheduleFields = ['frequency', 'schedule_enabled', 'timezone', 'send_at', 'name', 'format', 'widget_ids'] as const;
    if (scheduleFields.some((k) => patch[k] !== undefined)) await syncReportSchedule(deps, report);
    return toReportBody(report);
  });
}

export async function removeReport(deps: ReportDeps, orgId: string, id: string): Promise<void> {
  await deps.sql.begin(async (tx) => {
    if (!(await deleteReport(tx, orgId, id))) throw notFound('report');
    await unscheduleWorkflow(deps, scheduleIds.report(id));
  });
  // Its runs went with it; their artifacts' bytes go after the commit (best effort: nothing names them any more).
  await blobStoreOf(deps.config).deletePrefix(artifactBlobPrefix(id))
    .catch((err: unknown) => deps.log.warn({ err, report_id: id }, 'could not delete the artifacts of a deleted report'));
}
