import {
  ScheduleAlreadyRunning, ScheduleNotFoundError, WorkflowExecutionAlreadyStartedError, WorkflowIdConflictPolicy,
  WorkflowIdReusePolicy, WorkflowNotFoundError, type Client, type ScheduleOptions, type ScheduleOverlapPolicy,
  type ScheduleSpec, type SignalDefinition,
} from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import type { Logger } from 'pino';
import { holdUntilCommit } from '../db/commit-gate.ts';
import type { Db } from '../db/index.ts';
import { AppError } from '../errors.ts';
import { colocatedClient } from './eager.ts';
import { taskQueues, type WorkflowKind } from './ids.ts';
import { SEARCH_ATTRIBUTES } from './search-attributes.ts';

/**
 * The one way the service starts, stops and schedules work in Temporal. A new family with a
 * workflow declares its kind beside the workflow (`workflowKind` in ids.ts) and passes it here;
 * everything else is shared: the task queue, id policies, search attributes, the one-line summary
 * shown in the Web UI, eager start next to a worker, and how a failure is logged and answered.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type ArgsOf<K extends WorkflowKind> = K extends WorkflowKind<infer W, any> ? Parameters<W> : never;

const REUSE = { allowDuplicate: WorkflowIdReusePolicy.ALLOW_DUPLICATE, rejectDuplicate: WorkflowIdReusePolicy.REJECT_DUPLICATE } as const;

/** What every run carries: the organization and agent it concerns (search attributes) and its one-line summary. */
export interface RunAttributes {
  orgId: string; agentId?: string | null; campaignId?: string | null; summary: string;
  /** Simulations: the agent playing the caller (`builtin` for the built-in one). */
  callerId?: string | null;
}

export interface StartDeps { temporal: Client; config: { TASK_QUEUE_PREFIX: string }; log: Logger }

/** The search attributes of a run or schedule, so an operator can filter by organization or agent. */
export function searchAttributesOf(attrs: Pick<RunAttributes, 'orgId' | 'agentId' | 'campaignId' | 'callerId'>) {
  return [
    { key: SEARCH_ATTRIBUTES.OrganizationId, value: attrs.orgId },
    ...(attrs.agentId ? [{ key: SEARCH_ATTRIBUTES.AgentId, value: attrs.agentId }] : []),
    ...(attrs.campaignId ? [{ key: SEARCH_ATTRIBUTES.CampaignId, value: attrs.campaignId }] : []),
    ...(attrs.callerId ? [{ key: SEARCH_ATTRIBUTES.CallerAgentId, value: attrs.callerId }] : []),
  ];
}

/** Summaries are one line of at most 200 characters (the Web UI shows them in lists). */
export const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim().slice(0, 200);

/**
 * The service's one answer when Temporal cannot take work (a start, a signal, an update, a
 * Schedule), whatever the family: 503 `temporal_unavailable`. The caller's transaction rolls back with it.
 */
export function workflowServiceUnavailable(): AppError {
  return new AppError(503, 'temporal_unavailable', 'the workflow service is unavailable; nothing was changed, try again', {
    headers: { 'Retry-After': '5' },
  });
}

/**
 * Starts a workflow of kind `def` under `workflowId`, or joins the one already running with that id
 * (`restart` terminates it and starts afresh: the crawl of a site that now points elsewhere).
 * False when a run-once id already ran to its end. Any other failure is logged and thrown as 503.
 *
 * `transaction`: the transaction that wrote the rows the workflow reads. The start holds the id's commit gate
 * (`src/db/commit-gate.ts`) until it ends, and the workflow's first activity reads through `readAfterCommit`.
 */
export async function startWorkflow<K extends WorkflowKind>(deps: StartDeps, def: K, workflowId: string, args: ArgsOf<K>,
  attrs: RunAttributes, opts: { restart?: boolean; transaction?: Db } = {}): Promise<boolean> {
  if (opts.transaction) await holdUntilCommit(opts.transaction, workflowId);
  const taskQueue = taskQueues(deps.config)[def.queue];
  const eager = def.eager ? colocatedClient(deps.temporal.options.namespace, taskQueue) : undefined;
  try {
    await (eager ?? deps.temporal).workflow.start(def.workflowType, {
      workflowId, taskQueue, args,
      requestEagerStart: eager !== undefined,
      // restart terminates: the old run crawls a URL the site no longer has, and nothing of it must run after.
      workflowIdConflictPolicy: opts.restart ? WorkflowIdConflictPolicy.TERMINATE_EXISTING : WorkflowIdConflictPolicy.USE_EXISTING,
      workflowIdReusePolicy: REUSE[def.reuse],
      typedSearchAttributes: searchAttributesOf(attrs),
      staticSummary: oneLine(attrs.summary),
    });
    return true;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    deps.log.error({ err, workflow_id: workflowId, workflow_kind: def.workflowType }, 'could not start the workflow');
    throw workflowServiceUnavailable();
  }
}

/**
 * Starts a workflow of kind `def` under `workflowId` with `signal` (its definition, exported by the
 * workflow's file) as its first event, or, when one
 * runs under that id already, sends it `signal`: the running workflow learns it was asked again (a
 * re-crawl asked for while a crawl runs). Any failure is logged and thrown as 503. `transaction`: as for `startWorkflow`.
 */
export async function signalWithStart<K extends WorkflowKind>(deps: StartDeps, def: K, workflowId: string, args: ArgsOf<K>,
  attrs: RunAttributes, signal: SignalDefinition<[]>, opts: { transaction?: Db } = {}): Promise<void> {
  if (opts.transaction) await holdUntilCommit(opts.transaction, workflowId);
  try {
    await deps.temporal.workflow.signalWithStart(def.workflowType, {
      workflowId, taskQueue: taskQueues(deps.config)[def.queue], args, signal, signalArgs: [],
      workflowIdReusePolicy: REUSE[def.reuse],
      typedSearchAttributes: searchAttributesOf(attrs),
      staticSummary: oneLine(attrs.summary),
    });
  } catch (err) {
    deps.log.error({ err, workflow_id: workflowId, workflow_kind: def.workflowType }, 'could not signal or start the workflow');
    throw workflowServiceUnavailable();
  }
}

/**
 * Stops a workflow if it still runs. `cancel` lets it run its cleanup; `terminate` is for work
 * after which nothing must run (its rows are gone). Best effort: a failure is logged, not thrown.
 */
export async function stopWorkflow(deps: Pick<StartDeps, 'temporal' | 'log'>, workflowId: string, how: 'cancel' | 'terminate', reason: string): Promise<void> {
  try {
    const handle = deps.temporal.workflow.getHandle(workflowId);
    if (how === 'cancel') await handle.cancel();
    // Terminate only for callers whose rows are already gone: nothing (no cleanup) must run after.
    else await handle.terminate(reason);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return;
    deps.log.warn({ err, workflow_id: workflowId, reason }, `could not ${how} the workflow`);
  }
}

/** When a Schedule fires and what a firing does when it is late or the previous run still runs. */
export interface ScheduleTiming {
  spec: ScheduleSpec;
  overlap: ScheduleOverlapPolicy;
  /** How late a firing missed while Temporal was down may still run. */
  catchupWindow: Duration;
  /**
   * Given: every upsert pauses (with `note`) or unpauses the Schedule (a report's `schedule_enabled`).
   * Absent: a new Schedule runs, an existing one keeps the state it has.
   */
  state?: { paused: boolean; note: string };
}

/**
 * The options of the Schedule `scheduleId` starting a workflow of kind `def` (its type and task
 * queue) with `args`: each run's id is the Schedule's, and the Schedule and its runs carry the
 * search attributes and one-line summary of `attrs`.
 */
function scheduleOptions<K extends WorkflowKind>(config: { TASK_QUEUE_PREFIX: string }, def: K, scheduleId: string, args: ArgsOf<K>,
  attrs: Omit<RunAttributes, 'callerId'>, timing: ScheduleTiming): ScheduleOptions {
  const typedSearchAttributes = searchAttributesOf(attrs);
  const summary = oneLine(attrs.summary);
  return {
    scheduleId,
    spec: timing.spec,
    action: {
      type: 'startWorkflow', workflowType: def.workflowType, workflowId: scheduleId,
      taskQueue: taskQueues(config)[def.queue], args, typedSearchAttributes, staticSummary: summary,
    },
    policies: { overlap: timing.overlap, catchupWindow: timing.catchupWindow },
    ...(timing.state ? { state: { paused: timing.state.paused, note: timing.state.paused ? timing.state.note : undefined } } : {}),
    typedSearchAttributes,
    memo: { summary },
  };
}

/**
 * The Schedule twin of `startWorkflow`: creates the Schedule `scheduleId` that starts a workflow of
 * kind `def`, or brings the existing one up to date (spec, action, policies; its paused state
 * only when `timing.state` is given). Idempotent. Any failure is logged and thrown as 503
 * `temporal_unavailable`, so the caller's transaction rolls back with it.
 */
export async function scheduleWorkflow<K extends WorkflowKind>(deps: StartDeps, def: K, scheduleId: string, args: ArgsOf<K>,
  attrs: Omit<RunAttributes, 'callerId'>, timing: ScheduleTiming): Promise<void> {
  const options = scheduleOptions(deps.config, def, scheduleId, args, attrs, timing);
  try {
    await upsertSchedule(deps.temporal, options, timing.state);
  } catch (err) {
    deps.log.error({ err, schedule_id: scheduleId, workflow_kind: def.workflowType }, 'could not create or update the Schedule');
    throw workflowServiceUnavailable();
  }
}

/** Removes the Schedule `scheduleId` (one already gone is fine); any other failure is logged and thrown as 503. */
export async function unscheduleWorkflow(deps: Pick<StartDeps, 'temporal' | 'log'>, scheduleId: string): Promise<void> {
  try {
    await deleteSchedule(deps.temporal, scheduleId);
  } catch (err) {
    deps.log.error({ err, schedule_id: scheduleId }, 'could not delete the Schedule');
    throw workflowServiceUnavailable();
  }
}

async function upsertSchedule(temporal: Client, options: ScheduleOptions, state: ScheduleTiming['state']): Promise<void> {
  try {
    await temporal.schedule.create(options);
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await temporal.schedule.getHandle(options.scheduleId).update((previous) => ({
      spec: options.spec, action: options.action, policies: options.policies,
      state: state ? { ...previous.state, paused: state.paused, note: state.note } : previous.state,
    }));
  }
}

/** Removes a Schedule; one already gone is fine. */
export async function deleteSchedule(temporal: Client, scheduleId: string): Promise<void> {
  try {
    await temporal.schedule.getHandle(scheduleId).delete();
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
  }
}
