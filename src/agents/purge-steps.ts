import type { Db } from '../db/index.ts';
import { deleteConversationsOfAgentBatch } from '../db/conversations.ts';
import { deletePagesOfAgentBatch } from '../db/site-pages.ts';

/**
 * What depends on an agent, deleted in this order, a batch at a time, by the purge workflow.
 * A later family adds its step here (before `agent`, which must stay last). The workflow reads the
 * list once through an activity, so a change here never breaks the replay of a running purge.
 */
export const AGENT_PURGE_STEPS: Record<string, (db: Db, agentId: string, batchSize: number) => Promise<number>> = {
  // Crawled pages (and their passages) of the agent's own sites; the site rows go with the agent.
  site_pages: deletePagesOfAgentBatch,
  // Messages go with their conversation (ON DELETE CASCADE); usage records have no foreign key and stay.
  conversations: deleteConversationsOfAgentBatch,
};

export const AGENT_PURGE_STEP_NAMES = Object.keys(AGENT_PURGE_STEPS);
