import { Client, Connection } from '@temporalio/client';
import { defineSearchAttributeKey } from '@temporalio/common';
import type { Config } from '../config.ts';

/**
 * Custom search attributes every workflow of ours carries, so an operator can find the runs of
 * one organization or one agent in the Temporal Web UI (`OrganizationId = "..."`).
 */
export const SEARCH_ATTRIBUTES = {
  OrganizationId: defineSearchAttributeKey('OrganizationId', 'KEYWORD'),
  AgentId: defineSearchAttributeKey('AgentId', 'KEYWORD'),
} as const;

/** One task queue per kind of work, so each can be scaled and isolated on its own. */
export function taskQueues(config: Pick<Config, 'TASK_QUEUE_PREFIX'>) {
  return {
    maintenance: `${config.TASK_QUEUE_PREFIX}-maintenance`,
    webhooks: `${config.TASK_QUEUE_PREFIX}-webhooks`,
    crawls: `${config.TASK_QUEUE_PREFIX}-crawls`,
    conversations: `${config.TASK_QUEUE_PREFIX}-conversations`,
  } as const;
}
export type TaskQueueKind = keyof ReturnType<typeof taskQueues>;

/**
 * Workflow ids are business keys: one purge per agent, ever; one delivery per event and endpoint
 * (and per manual retry); one crawl of a site at a time; one re-crawl Schedule per site.
 */
export const workflowIds = {
  crawl: (siteId: string) => `crawl:${siteId}`,
  crawlSchedule: (siteId: string) => `crawl-schedule:${siteId}`,
  conversation: (conversationId: string) => `conversation:${conversationId}`,
  conversationEvaluation: (conversationId: string) => `conversation-evaluation:${conversationId}`,
  agentPurge: (agentId: string) => `agent-purge:${agentId}`,
  webhookDelivery: (eventId: string, endpointId: string, retryNumber?: number) =>
    `webhook-delivery:${eventId}:${endpointId}${retryNumber === undefined ? '' : `:retry-${retryNumber}`}`,
};

export async function connectTemporal(config: Pick<Config, 'TEMPORAL_NAMESPACE'>, address: string): Promise<{ connection: Connection; client: Client }> {
  const connection = await Connection.connect({ address });
  return { connection, client: new Client({ connection, namespace: config.TEMPORAL_NAMESPACE }) };
}

/**
 * Registers our search attributes on the namespace when missing (the dev server and a real cluster
 * alike). Registration is idempotent; a cluster that forbids it (Temporal Cloud) needs them added by
 * its operator, which the error says.
 */
export async function ensureSearchAttributes(connection: Connection, namespace: string): Promise<void> {
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = Object.keys(SEARCH_ATTRIBUTES).filter((name) => !(name in (customAttributes ?? {})));
  if (missing.length === 0) return;
  const KEYWORD = 2; // temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD
  try {
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((name) => [name, KEYWORD])),
    });
  } catch (err) {
    const again = await connection.operatorService.listSearchAttributes({ namespace });
    if (missing.every((name) => name in (again.customAttributes ?? {}))) return; // another process registered them first
    throw new Error(`could not register search attributes ${missing.join(', ')} on namespace ${namespace}: ${(err as Error).message}`);
  }
}
