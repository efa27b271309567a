/**
 * Workflow, Schedule and task queue names: business keys, in one module that imports nothing, so
 * workflows (bundled without I/O) use the very same names as the code that starts them.
 */

/** One task queue per kind of work, so each can be scaled and isolated on its own: `<prefix>-<kind>`. */
export const TASK_QUEUE_KINDS = ['maintenance', 'webhooks', 'crawls', 'conversations'] as const;
export type TaskQueueKind = (typeof TASK_QUEUE_KINDS)[number];

/** The task queues of a deployment (TASK_QUEUE_PREFIX), by kind. */
export function taskQueues(config: { TASK_QUEUE_PREFIX: string }): Record<TaskQueueKind, string> {
  return Object.fromEntries(TASK_QUEUE_KINDS.map((kind) => [kind, `${config.TASK_QUEUE_PREFIX}-${kind}`])) as Record<TaskQueueKind, string>;
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
  agentPurge: (agentId: string) => `agent-purge:${agentId}`,
  /** One generation per report run. */
  reportRun: (runId: string) => `report-run:${runId}`,
  webhookDelivery: (eventId: string, endpointId: string, retryNumber?: number) =>
    `webhook-delivery:${eventId}:${endpointId}${retryNumber === undefined ? '' : `:retry-${retryNumber}`}`,
};

/**
 * Schedule ids. Scoped by TASK_QUEUE_PREFIX because the schedule targets that deployment's task
 * queue: two deployments sharing a namespace (or the test files of one run) each keep their own.
 * In production (prefix `ams`) the sweep is `webhook-recovery-sweep:ams`.
 */
export const scheduleIds = {
  webhookRecoverySweep: (config: { TASK_QUEUE_PREFIX: string }) => `webhook-recovery-sweep:${config.TASK_QUEUE_PREFIX}`,
  crawl: (siteId: string) => workflowIds.crawlSchedule(siteId),
  /** One monthly billing Schedule per phone number (number ids are unique across deployments). */
  numberBilling: (numberId: string) => `number-billing:${numberId}`,
  /** One Schedule per report definition with a frequency (report ids are unique across deployments). */
  report: (reportId: string) => `report-schedule:${reportId}`,
};
