import {
  ScheduleAlreadyRunning, ScheduleNotFoundError, WorkflowExecutionAlreadyStartedError, WorkflowIdConflictPolicy,
  WorkflowIdReusePolicy, WorkflowNotFoundError, type Client, type ScheduleOptions,
} from '@temporalio/client';
import type { Logger } from 'pino';
import { AppError } from '../errors.ts';
import { colocatedClient } from './eager.ts';
import { taskQueues, type TaskQueueKind } from './ids.ts';
import { SEARCH_ATTRIBUTES } from './search-attributes.ts';
import type { crawlSite } from '../../workflows/crawl-site.ts';
import type { conversationLifecycle } from '../../workflows/conversation.ts';
import type { deliverWebhook } from '../../workflows/deliver-webhook.ts';
import type { purgeAgent } from '../../workflows/purge-agent.ts';
import type { sendEmailReply } from '../../workflows/send-email-reply.ts';
import type { generateReport } from '../../workflows/report-run.ts';

/**
 * The one way the service starts, stops and schedules work in Temporal. A new family with a
 * workflow adds one line to KINDS (and its id to ids.ts); everything else is shared: the task
 * queue, id policies, search attributes, the one-line summary shown in the Web UI, eager start
 * next to a worker, and how a failure is logged and answered.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyWorkflow = (...args: any[]) => Promise<unknown>;
interface KindDef<W extends AnyWorkflow = AnyWorkflow> {
  workflowType: string;
  queue: TaskQueueKind;
  /** REJECT_DUPLICATE: the id runs once, ever (a second start of a finished one is a no-op). */
  reuse: WorkflowIdReusePolicy;
  /** Start eagerly when a worker of this process polls the queue (the first task comes back in the start response). */
  eager?: boolean;
  /** Phantom: the workflow function, for the type of its arguments. */
  workflow?: W;
}
const kind = <W extends AnyWorkflow>(def: Omit<KindDef<W>, 'workflow'>): KindDef<W> => def;

/** Every kind of workflow the service starts, by name. */
export const KINDS = {
  crawl: kind<typeof crawlSite>({ workflowType: 'crawlSite', queue: 'crawls', reuse: WorkflowIdReusePolicy.ALLOW_DUPLICATE }),
  conversation: kind<typeof conversationLifecycle>({ workflowType: 'conversationLifecycle', queue: 'conversations', reuse: WorkflowIdReusePolicy.REJECT_DUPLICATE }),
  emailReply: kind<typeof sendEmailReply>({ workflowType: 'sendEmailReply', queue: 'conversations', reuse: WorkflowIdReusePolicy.REJECT_DUPLICATE }),
  agentPurge: kind<typeof purgeAgent>({ workflowType: 'purgeAgent', queue: 'maintenance', reuse: WorkflowIdReusePolicy.REJECT_DUPLICATE }),
  reportRun: kind<typeof generateReport>({ workflowType: 'generateReport', queue: 'maintenance', reuse: WorkflowIdReusePolicy.REJECT_DUPLICATE }),
  webhookDelivery: kind<typeof deliverWebhook>({ workflowType: 'deliverWebhook', queue: 'webhooks', reuse: WorkflowIdReusePolicy.REJECT_DUPLICATE, eager: true }),
};
export type WorkflowKind = keyof typeof KINDS;
type ArgsOf<K extends WorkflowKind> = (typeof KINDS)[K] extends KindDef<infer W> ? Parameters<W> : never;

/** What every run carries: the organization and agent it concerns (search attributes) and its one-line summary. */
export interface RunAttributes { orgId: string; agentId?: string | null; summary: string }

export interface StartDeps { temporal: Client; config: { TASK_QUEUE_PREFIX: string }; log: Logger }

/** The search attributes of a run or schedule, so an operator can filter by organization or agent. */
export function searchAttributesOf(attrs: Pick<RunAttributes, 'orgId' | 'agentId'>) {
  return [
    { key: SEARCH_ATTRIBUTES.OrganizationId, value: attrs.orgId },
    ...(attrs.agentId ? [{ key: SEARCH_ATTRIBUTES.AgentId, value: attrs.agentId }] : []),
  ];
}

/** Summaries are one line of at most 200 characters (the Web UI shows them in lists). */
export const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim().slice(0, 200);

/** The service's answer when Temporal cannot take work: the caller's transaction rolls back with it. */
export function workflowServiceUnavailable(): AppError {
  return new AppError(503, 'service_unavailable', 'the workflow service is unavailable; nothing was changed, try again', {
    headers: { 'Retry-After': '5' },
  });
}

/**
 * Starts a workflow of `kind` under `workflowId`, or joins the one already running with that id
 * (`restart` terminates it and starts afresh: the crawl of a site that now points elsewhere).
 * False when a run-once id already ran to its end. Any other failure is logged and thrown as 503.
 */
export async function startWorkflow<K extends WorkflowKind>(deps: StartDeps, kindName: K, workflowId: string, args: ArgsOf<K>,
  attrs: RunAttributes, opts: { restart?: boolean } = {}): Promise<boolean> {
  const def: KindDef = KINDS[kindName];
  const taskQueue = taskQueues(deps.config)[def.queue];
  const eager = def.eager ? colocatedClient(deps.temporal.options.namespace, taskQueue) : undefined;
  try {
    await (eager ?? deps.temporal).workflow.start(def.workflowType, {
      workflowId, taskQueue, args,
      requestEagerStart: eager !== undefined,
      // restart terminates: the old run crawls a URL the site no longer has, and nothing of it must run after.
      workflowIdConflictPolicy: opts.restart ? WorkflowIdConflictPolicy.TERMINATE_EXISTING : WorkflowIdConflictPolicy.USE_EXISTING,
      workflowIdReusePolicy: def.reuse,
      typedSearchAttributes: searchAttributesOf(attrs),
      staticSummary: oneLine(attrs.summary),
    });
    return true;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    deps.log.error({ err, workflow_id: workflowId, workflow_kind: kindName }, 'could not start the workflow');
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

/** Creates a Schedule, or brings an existing one up to date (spec, action, policies), keeping its paused state. */
export async function upsertSchedule(temporal: Client, options: ScheduleOptions): Promise<void> {
  try {
    await temporal.schedule.create(options);
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await temporal.schedule.getHandle(options.scheduleId).update((previous) => ({
      spec: options.spec, action: options.action, policies: options.policies, state: previous.state,
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
