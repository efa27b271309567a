import { ScheduleOverlapPolicy, type CalendarSpec, type Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { ReportRecord } from '../db/reports.ts';
import { scheduleIds } from '../temporal/ids.ts';
import { deleteSchedule, scheduleWorkflow, unscheduleWorkflow } from '../temporal/start.ts';
import { scheduledReportRunKind } from '../../workflows/report-run.ts';

/**
 * A report with a frequency other than `manual` is one Temporal Schedule,
 * `report-schedule:<report id>`, firing at `send_at` in the report's time zone: every day, on
 * Mondays, or on the 1st of each month. `schedule_enabled: false` pauses it; `manual` or a
 * deleted report has none.
 */

export interface ScheduleDeps { temporal: Client; config: Config; log: Logger }

/** The calendar of a report's firings. */
export function reportCalendar(report: Pick<ReportRecord, 'frequency' | 'send_at'>): CalendarSpec {
  const [hour, minute] = report.send_at.split(':').map(Number) as [number, number];
  if (report.frequency === 'weekly') return { dayOfWeek: 'MONDAY', hour, minute, comment: `Mondays at ${report.send_at}` };
  if (report.frequency === 'monthly') return { dayOfMonth: 1, hour, minute, comment: `the 1st of each month at ${report.send_at}` };
  return { hour, minute, comment: `every day at ${report.send_at}` };
}

/**
 * Brings the report's Schedule in line with its definition: created or updated (and paused or
 * unpaused), or removed for `manual`. Temporal unreachable is a 503 the caller's transaction
 * rolls back with.
 */
export async function syncReportSchedule(deps: ScheduleDeps, report: ReportRecord): Promise<void> {
  const id = scheduledReportRunKind.id(report.id);
  if (report.frequency === 'manual') {
    await unscheduleWorkflow(deps, id);
    return;
  }
  const summary = `Report "${report.name}" (${report.format}), ${report.frequency} at ${report.send_at} ${report.timezone}`;
  await scheduleWorkflow(deps, scheduledReportRunKind, id, [{ reportId: report.id }],
    { orgId: report.orgId, agentId: report.widget_ids.length === 1 ? report.widget_ids[0] : null, summary }, {
      spec: { calendars: [reportCalendar(report)], timezone: report.timezone },
      // A firing missed while Temporal was down still runs within a day (the period is the one just
      // closed at the firing, so a late run covers the right one). A firing due while the previous
      // one is still finishing waits for it instead of being dropped: no period is lost.
      overlap: ScheduleOverlapPolicy.BUFFER_ONE, catchupWindow: '1 day',
      state: { paused: !report.schedule_enabled, note: report.schedule_enabled ? 'enabled' : 'schedule_enabled is false' },
    });
}

/** Removes report Schedules (a deleted report, an agent's delete); best effort, logged. */
export async function removeReportSchedules(deps: Pick<ScheduleDeps, 'temporal' | 'log'>, reportIds: string[]): Promise<void> {
  for (const id of reportIds) {
    await deleteSchedule(deps.temporal, scheduleIds.report(id)).catch((err: unknown) => deps.log.warn({ err, report_id: id }, 'could not delete the report Schedule'));
  }
}
