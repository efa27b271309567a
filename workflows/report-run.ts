import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { ApplicationFailure, executeChild, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { ReportActivities } from '../activities/reports.ts';
import { scheduleIds, workflowIds, workflowKind } from '../src/temporal/ids.ts';

const steps = proxyActivities<ReportActivities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '2 minutes',
  // A database or mail server's bad moment is ridden out; what still fails after that fails the run.
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '2 minutes', maximumAttempts: 8 },
});

const settle = proxyActivities<ReportActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', maximumInterval: '10 minutes', maximumAttempts: 100 },
});

export interface GenerateReportInput { runId: string }

const reasonOf = (err: unknown): string => {
  let e: unknown = err;
  // An activity's failure wraps the cause that says what went wrong.
  while (e instanceof Error && (e as { cause?: unknown }).cause instanceof Error) e = (e as { cause: unknown }).cause;
  if (e instanceof ApplicationFailure && e.type) return `${e.type}: ${e.message}`;
  return e instanceof Error ? e.message : String(e);
};

/**
 * One report run, `report-run:<run id>`: aggregate in SQL, render, store the artifact, mail it,
 * then mark the run succeeded. Each step is an activity with retries; a run that still fails is
 * marked `failed` with the reason and its charge refunded through the ledger, once.
 */
export async function generateReport(input: GenerateReportInput): Promise<'succeeded' | 'failed'> {
  try {
    await steps.aggregateReportRun(input);
    await steps.renderReportRun(input);
    await steps.mailReportRun(input);
    await settle.completeReportRun(input);
    return 'succeeded';
  } catch (err) {
    await settle.failReportRun({ runId: input.runId, error: reasonOf(err).slice(0, 500) });
    return 'failed';
  }
}

/** Set by Temporal on a run a Schedule starts: the time it was due (not when it started). */
const SCHEDULED_START = defineSearchAttributeKey('TemporalScheduledStartTime', SearchAttributeType.DATETIME);

/**
 * When this firing was due: a catch-up after an outage (or a backfill) covers the period closed at
 * its scheduled time, not the one closed when it got to start. Started otherwise, its start time.
 */
function firedAt(): Date {
  const info = workflowInfo();
  const typed: unknown = info.typedSearchAttributes.get(SCHEDULED_START);
  if (typed instanceof Date) return typed;
  const raw = (info.searchAttributes as Record<string, unknown[] | undefined> | undefined)?.TemporalScheduledStartTime?.[0];
  const parsed = raw instanceof Date ? raw : typeof raw === 'string' ? new Date(raw) : null;
  return parsed && !Number.isNaN(parsed.getTime()) ? parsed : info.startTime;
}

/**
 * What a report's Schedule (`report-schedule:<report id>`) starts at each firing: the run of the
 * period just closed, charged (or recorded `failed` with `insufficient_credits`, nothing mailed),
 * then generated as its own `report-run:<run id>`. A second firing for the same period finds the
 * first run and starts nothing.
 */
export async function scheduledReportRun(input: { reportId: string }): Promise<{ runId: string | null; status: string }> {
  const info = workflowInfo();
  const prepared = await settle.prepareScheduledRun({ reportId: input.reportId, firedAt: firedAt().toISOString() });
  if (prepared.status !== 'generating' || !prepared.runId) return prepared;
  const status = await executeChild(generateReport, {
    workflowId: workflowIds.reportRun(prepared.runId), args: [{ runId: prepared.runId }],
    typedSearchAttributes: info.typedSearchAttributes,
  });
  return { runId: prepared.runId, status };
}

/** How the API starts a run's generation: once per run, on the maintenance queue. */
export const generateReportKind = workflowKind(generateReport, { queue: 'maintenance', reuse: 'rejectDuplicate', id: workflowIds.reportRun });

/** What a report's Schedule starts (`scheduleWorkflow`): each firing is a run of its own, under the Schedule's id. */
export const scheduledReportRunKind = workflowKind(scheduledReportRun, { queue: 'maintenance', reuse: 'allowDuplicate', id: scheduleIds.report });
