import {
  ScheduleAlreadyRunning, ScheduleOverlapPolicy, type CalendarSpec, type Client, type ScheduleOptions,
} from '@temporalio/client';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { ReportRecord } from '../db/reports.ts';
import { scheduleIds, taskQueues } from '../temporal/ids.ts';
import { deleteSchedule, oneLine, searchAttributesOf, workflowServiceUnavailable } from '../temporal/start.ts';
import type { scheduledReportRun } from '../../workflows/report-run.ts';

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

export function reportSchedule(config: Config, report: ReportRecord): ScheduleOptions {
  const id = scheduleIds.report(report.id);
  const attrs = searchAttributesOf({ orgId: report.orgId, agentId: report.widget_ids.length === 1 ? report.widget_ids[0] : null });
  const summary = oneLine(`Report "${report.name}" (${report.format}), ${report.frequency} at ${report.send_at} ${report.timezone}`);
  return {
    scheduleId: id,
    spec: { calendars: [reportCalendar(report)], timezone: report.timezone },
    action: {
      type: 'startWorkflow', workflowType: 'scheduledReportRun', workflowId: id,
      taskQueue: taskQueues(config).maintenance,
      args: [{ reportId: report.id }] satisfies Parameters<typeof scheduledReportRun>,
      typedSearchAttributes: attrs, staticSummary: summary,
    },
    // A firing missed while Temporal was down still runs within a day (the period is the one just
    // closed at the firing, so a late run covers the right one). A firing due while the previous
    // one is still finishing waits for it instead of being dropped: no period is lost.
    policies: { overlap: ScheduleOverlapPolicy.BUFFER_ONE, catchupWindow: '1 day' },
    state: { paused: !report.schedule_enabled, note: report.schedule_enabled ? undefined : 'schedule_enabled is false' },
    typedSearchAttributes: attrs,
    memo: { summary },
  };
}

/**
 * Brings the report's Schedule in line with its definition: created or updated (and paused or
 * unpaused), or removed for `manual`. Temporal unreachable is a 503 the caller's transaction
 * rolls back with.
 */
export async function syncReportSchedule(deps: ScheduleDeps, report: ReportRecord): Promise<void> {
  try {
    if (report.frequency === 'manual') {
      await deleteSchedule(deps.temporal, scheduleIds.report(report.id));
      return;
    }
    const options = reportSchedule(deps.config, report);
    try {
      await deps.temporal.schedule.create(options);
    } catch (err) {
      if (!(err instanceof ScheduleAlreadyRunning)) throw err;
      await deps.temporal.schedule.getHandle(options.scheduleId).update((previous) => ({
        spec: options.spec, action: options.action, policies: options.policies,
        state: { ...previous.state, paused: !report.schedule_enabled, note: report.schedule_enabled ? 'enabled' : 'schedule_enabled is false' },
      }));
    }
  } catch (err) {
    deps.log.error({ err, report_id: report.id }, 'could not create or update the report Schedule');
    throw workflowServiceUnavailable();
  }
}

/** Removes report Schedules (a deleted report, an agent's delete); best effort, logged. */
export async function removeReportSchedules(deps: Pick<ScheduleDeps, 'temporal' | 'log'>, reportIds: string[]): Promise<void> {
  for (const id of reportIds) {
    await deleteSchedule(deps.temporal, scheduleIds.report(id)).catch((err: unknown) => deps.log.warn({ err, report_id: id }, 'could not delete the report Schedule'));
  }
}
