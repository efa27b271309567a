/**
 * Workflow, Schedule and task queue names: business keys, in one module that imports nothing, so
 * workflows (bundled without I/O) use the very same names as the code that starts them.
 * A new family declares its workflow's kind and id in the workflow's own file (`workflowKind`);
 * the ids below are those of the families that came before, which code and tests use by name.
 */

/** One task queue per kind of work, so each can be scaled and isolated on its own: `<prefix>-<kind>`. */
export const TASK_QUEUE_KINDS = ['maintenance', 'webhooks', 'crawls', 'conversations', 'campaigns'] as const;
export type TaskQueueKind = (typeof TASK_QUEUE_KINDS)[number];

/** The task queues of a deployment (TASK_QUEUE_PREFIX), by kind. */
export function taskQueues(config: { TASK_QUEUE_PREFIX: string }): Record<TaskQueueKind, string> {
  return Object.fromEntries(TASK_QUEUE_KINDS.map((kind) => [kind, `${config.TASK_QUEUE_PREFIX}-${kind}`])) as Record<TaskQueueKind, string>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyWorkflow = (...args: any[]) => Promise<unknown>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type IdOf = (...keys: any[]) => string;

/**
 * A kind of workflow the service starts, declared beside the workflow in its own file
 * (`export const crawlSiteKind = workflowKind(crawlSite, {...})`): `startWorkflow` takes it, so no
 * central list of kinds grows with each family. Plain data, so the bundled workflow may hold it too.
 */
export interface WorkflowKind<W extends AnyWorkflow = AnyWorkflow, I extends IdOf = IdOf> {
  /** The workflow's exported name: what the worker runs. */
  workflowType: string;
  queue: TaskQueueKind;
  /** rejectDuplicate: the id runs once, ever (a second start of a finished one is a no-op). */
  reuse: 'allowDuplicate' | 'rejectDuplicate';
  /** Start eagerly when a worker of this process polls the queue (the first task comes back in the start response). */
  eager?: boolean;
  /** The business-key id of a run. */
  id: I;
  /** Phantom: the workflow function, for the type of its arguments. */
  workflow?: W;
}

/** Declares the kind of `workflow` (its type is the function's name). */
export function workflowKind<W extends AnyWorkflow, I extends IdOf>(workflow: W, def: Pick<WorkflowKind<W, I>, 'queue' | 'reuse' | 'eager' | 'id'>): WorkflowKind<W, I> {
  return { workflowType: workflow.name, ...def };
}

/**
 * Workflow ids are business keys: one purge per agent, ever; one delivery per event and endpoint
 * (and per manual retry); one crawl of a site at a time; one re-crawl Schedule per site.
 */
export const workflowIds = {
  crawl: (siteId: string) => `crawl:${siteId}`,
  crawlSchedule: (siteId: string) => `crawl-schedule:${siteId}`,
  conversation: (conversationId: string) => `conversation:${conversationId}`,
  conversationEvaluation: (conversationId: string) => `conversation-evaluation:${conversationId}`,
  /** One outgoing email per reply, keyed by its first message. */
  emailReply: (messageId: string) => `email-reply:${messageId}`,
  /** The business told once per conversation and reason (notification_email, notification_phone). */
  notifyBusiness: (conversationId: string, reason: string) => `notify:${conversationId}:${reason}`,
  /** A conversation waiting for a person, until a member takes it over (issue 45). */
  assignment: (conversationId: string) => `assignment:${conversationId}`,
  /** A turn-based simulation run, driven by its `step` Updates (or playing itself in `auto` mode). */
  simulation: (simulationId: string) => `simulation:${simulationId}`,
  /** A web simulation run: a scripted visitor in headless Chromium. */
  webSimulation: (simulationId: string) => `web-simulation:${simulationId}`,
  agentPurge: (agentId: string) => `agent-purge:${agentId}`,
  /** One parse per uploaded revision of a knowledge file. */
  knowledgeFileParse: (fileId: string, revision: number) => `knowledge-file-parse:${fileId}:${revision}`,
  /** One generation per report run. */
  reportRun: (runId: string) => `report-run:${runId}`,
  /** A campaign's queue and concurrency, and one child per call attempt. */
  campaign: (campaignId: string) => `campaign:${campaignId}`,
  campaignCall: (callId: string) => `campaign-call:${callId}`,
  /** One run per large export (issue 45): it leaves the file in the BlobStore. */
  dataExport: (exportId: string) => `data-export:${exportId}`,
  /** One run per contacts CSV import. */
  contactImport: (importId: string) => `contact-import:${importId}`,
  /** The deployment's one long-lived webhook recovery sweeper (scoped by TASK_QUEUE_PREFIX, as its queue is). */
  webhookRecoverySweeper: (config: { TASK_QUEUE_PREFIX: string }) => `webhook-recovery-sweeper:${config.TASK_QUEUE_PREFIX}`,
  /** A retention run asked for by hand (the Schedule's own runs are `retention:<org id>-<time>`). */
  retentionRun: (orgId: string, requestedAt: string) => `retention-run:${orgId}:${requestedAt}`,
  /** The deletion of the Temporal histories of an erased contact's conversations, once per contact. */
  contactErase: (contactId: string) => `contact-erase:${contactId}`,
  webhookDelivery: (eventId: string, endpointId: string, retryNumber?: number) =>
    `webhook-delivery:${eventId}:${endpointId}${retryNumber === undefined ? '' : `:retry-${retryNumber}`}`,
};

/**
 * Schedule ids. Scoped by TASK_QUEUE_PREFIX because the schedule targets that deployment's task
 * queue: two deployments sharing a namespace (or the test files of one run) each keep their own.
 * In production (prefix `ams`) the sweep is `webhook-recovery-sweep:ams`.
 */
export const scheduleIds = {
  /** Until issue 42 the sweep's Schedule; workers delete it at start (the sweeper replaced it). */
  webhookRecoverySweep: (config: { TASK_QUEUE_PREFIX: string }) => `webhook-recovery-sweep:${config.TASK_QUEUE_PREFIX}`,
  crawl: (siteId: string) => workflowIds.crawlSchedule(siteId),
  /** One monthly billing Schedule per phone number (number ids are unique across deployments). */
  numberBilling: (numberId: string) => `number-billing:${numberId}`,
  /** One Schedule per report definition with a frequency (report ids are unique across deployments). */
  report: (reportId: string) => `report-schedule:${reportId}`,
  /** One retention Schedule per organization with a retention policy (issue 47). */
  retention: (orgId: string) => `retention:${orgId}`,
};
