import type { Db } from '../db/index.ts';

/**
 * What depends on an agent, deleted in this order, a batch at a time, by the purge workflow.
 * A later family adds its step here (before `agent`, which must stay last). The workflow reads the
 * list once through an activity, so a change here never breaks the replay of a running purge.
 */
export const AGENT_PURGE_STEPS: Record<string, (db: Db, agentId: string, batchSize: number) => Promise<number>> = {
  // Crawled pages (and their passages, ON DELETE CASCADE) of the agent's own sites; the site rows go with the agent.
  site_pages: async (db, agentId, batchSize) => (await db`
    delete from site_pages where id in (
      select p.id from site_pages p join sites s on s.id = p.site_id where s.agent_id = ${agentId} limit ${batchSize})`).count,
  // Messages go with their conversation (ON DELETE CASCADE); usage records have no foreign key and stay.
  conversations: async (db, agentId, batchSize) => (await db`
    delete from conversations where id in (
      select id from conversations where agent_id = ${agentId} limit ${batchSize})`).count,
};

export const AGENT_PURGE_STEP_NAMES = Object.keys(AGENT_PURGE_STEPS);
