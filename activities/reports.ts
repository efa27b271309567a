import {
  aggregateRunStep, completeRunStep, failRunStep, mailRunStep, prepareScheduledRun, renderRunStep,
} from '../src/reports/runs.ts';
import type { ActivityDeps } from './index.ts';

/** The steps of a report run, each idempotent on the run's row (a step of a run that has ended does nothing). */
export function createReportActivities(deps: Pick<ActivityDeps, 'sql' | 'config' | 'log' | 'secrets'>) {
  return {
    /** A Schedule's firing: the run of the period just closed, charged, or failed with insufficient_credits. */
    prepareScheduledRun: (input: { reportId: string; firedAt: string }) => prepareScheduledRun(deps, input),
    aggregateReportRun: (input: { runId: string }) => aggregateRunStep(deps, input.runId),
    renderReportRun: (input: { runId: string }) => renderRunStep(deps, input.runId),
    mailReportRun: (input: { runId: string }) => mailRunStep(deps, input.runId),
    completeReportRun: (input: { runId: string }) => completeRunStep(deps, input.runId),
    failReportRun: (input: { runId: string; error: string }) => failRunStep(deps, input.runId, input.error),
  };
}
export type ReportActivities = ReturnType<typeof createReportActivities>;
