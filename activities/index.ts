import type { Client } from '@temporalio/client';
import type { Sql } from '../src/db/index.ts';
import type { Logger } from 'pino';
import type { Config } from '../src/config.ts';
import type { AgentRuntime } from '../src/runtime/types.ts';
import type { SecretBox } from '../src/crypto/secret-box.ts';
import { createPurgeActivities } from './purge.ts';
import { createWebhookActivities } from './webhooks.ts';
import { createCrawlActivities } from './crawl.ts';
import { createConversationActivities } from './conversations.ts';
import { createPhoneNumberActivities } from './phone-numbers.ts';
import { createEmailActivities } from './email.ts';
import { createAgentToolActivities } from './agent-tools.ts';
import { createReportActivities } from './reports.ts';

/**
 * What activities are given; they build nothing themselves. `temporal` lets an activity start
 * workflows (the webhook recovery sweep hands deliveries over); `runtime` answers and evaluates;
 * `secrets` opens what is sealed at rest (webhook signing secrets).
 */
export interface ActivityDeps { sql: Sql; config: Config; temporal: Client; log: Logger; runtime: AgentRuntime; secrets: SecretBox }

/** Activities grouped by the task queue whose worker runs them. */
export function createActivities(deps: ActivityDeps) {
  return {
    maintenance: { ...createPurgeActivities(deps), ...createPhoneNumberActivities(deps), ...createReportActivities(deps) },
    webhooks: { ...createWebhookActivities(deps) },
    crawls: { ...createCrawlActivities(deps) },
    conversations: { ...createConversationActivities(deps), ...createEmailActivities(deps), ...createAgentToolActivities(deps) },
  };
}
