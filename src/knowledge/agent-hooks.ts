import { deleteKnowledgeBases, knowledgeBasesOnlyUsedBy } from '../db/knowledge-bases.ts';
import { deletePagesOfAgentBatch } from '../db/site-pages.ts';
import { siteIdsOfAgent } from '../db/sites.ts';
import type { AgentDeleteHook, AgentPurgeStep, AgentRowsFate } from '../agents/delete-hooks.ts';
import { stopSiteWork } from './sites.ts';
import { deleteKnowledgeBaseFiles } from './files.ts';

export const agentDeleteHooks: Record<string, AgentDeleteHook> = {
  // The agent's own sites (their rows go with the purge) and, with delete_kbs, the knowledge
  // bases no other live agent uses: their Schedules and running crawls stop, and their files' bytes go, after commit.
  knowledge: async (tx, { orgId, agentId, deleteKbs }) => {
    const own = await siteIdsOfAgent(tx, agentId);
    const kbIds = deleteKbs ? await knowledgeBasesOnlyUsedBy(tx, agentId) : [];
    const kbSites = await deleteKnowledgeBases(tx, orgId, kbIds);
    const siteIds = [...own, ...kbSites];
    if (!siteIds.length && !kbIds.length) return undefined;
    return async (deps) => {
      await stopSiteWork(deps, siteIds);
      await deleteKnowledgeBaseFiles(deps, orgId, kbIds);
    };
  },
};

/** Crawled pages (and their passages) of the agent's own sites; the site rows go with the agent. */
export const agentPurgeSteps: Record<string, AgentPurgeStep> = {
  site_pages: deletePagesOfAgentBatch,
};

/** The sites' work stops in the delete hook; their pages go in the purge, the rows with the agent's. */
export const agentTables: Record<string, AgentRowsFate> = {
  sites: { withAgentRow: true },
  agent_knowledge_bases: { withAgentRow: true },
};
