import type { Client } from '@temporalio/client';
import type { Sql } from '../src/db/index.ts';
import type { Logger } from 'pino';
import type { Config } from '../src/config.ts';
import type { AgentRuntime } from '../src/runtime/types.ts';
import { createPurgeActivities } from './purge.ts';
import { createWebhookActivities } from './webhooks.ts';
import { createCrawlActivities } from './crawl.ts';
import { createConversationActivities } from './conversations.ts';
import { createEmailActivities } from './email.ts';

/**
 * What activities are given; they build nothing themselves. `temporal` lets an activity start
 * workflows (the webhook recovery sweep dispatches deliveries); `runtime` answers and evaluates.
 */
export interface ActivityDeps { sql: Sql; config: Config; temporal: Client; log: Logger; runtime: AgentRuntime }

/** Activities grouped by the task queue whose worker runs them. */
export function createActivities(deps: ActivityDeps) {
  return {
    maintenance: { ...createPurgeActivities(deps) },
    webhooks: { ...createWebhookActivities(deps) },
    crawls: { ...createCrawlActivities(deps) },
    conversations: { ...createConversationActivities(deps), ...createEmailActivities(deps) },
  };
}
