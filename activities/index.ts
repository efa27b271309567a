import type { Client } from '@temporalio/client';
import type { Sql } from '../src/db/index.ts';
import type { Config } from '../src/config.ts';
import { createPurgeActivities } from './purge.ts';
import { createWebhookActivities } from './webhooks.ts';
import { createCrawlActivities } from './crawl.ts';
import { createConversationActivities } from './conversations.ts';

/** `temporal` lets an activity start workflows (the webhook recovery sweep dispatches deliveries). */
export interface ActivityDeps { sql: Sql; config: Config; temporal: Client }

/** Activities grouped by the task queue whose worker runs them. */
export function createActivities(deps: ActivityDeps) {
  return {
    maintenance: { ...createPurgeActivities(deps) },
    webhooks: { ...createWebhookActivities(deps) },
    crawls: { ...createCrawlActivities(deps) },
    conversations: { ...createConversationActivities(deps) },
  };
}
