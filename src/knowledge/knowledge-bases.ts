import { agentExists } from '../db/agents.ts';
import { attachKnowledgeBase, deleteKnowledgeBases, findKnowledgeBase } from '../db/knowledge-bases.ts';
import { fieldError } from '../errors.ts';
import type { KnowledgeBase } from '../schemas/sites.ts';
import { stopSiteWork, type KnowledgeDeps } from './sites.ts';
import { deleteKnowledgeBaseFiles } from './files.ts';

/**
 * Deletes a knowledge base with its sites, files and pages, then removes those sites' Schedules,
 * stops their crawls and deletes the files' bytes. False when there is no such knowledge base.
 */
export async function removeKnowledgeBase(deps: KnowledgeDeps, orgId: string, id: string): Promise<boolean> {
  const siteIds = await deps.sql.begin(async (tx) => {
    if (!(await findKnowledgeBase(tx, orgId, id))) return null;
    return deleteKnowledgeBases(tx, orgId, [id]);
  });
  if (siteIds === null) return false;
  await stopSiteWork(deps, siteIds);
  await deleteKnowledgeBaseFiles(deps, orgId, [id]);
  return true;
}

/**
 * Lets an agent of the organization answer from a knowledge base; returns it with its agents.
 * 400 `unknown_agent` for an agent not of this organization; null when there is no such knowledge base.
 */
export async function attachAgent(deps: Pick<KnowledgeDeps, 'sql'>, orgId: string, id: string, agentId: string): Promise<KnowledgeBase | null> {
  return deps.sql.begin(async (tx) => {
    if (!(await agentExists(tx, orgId, agentId))) throw fieldError('agent_id', 'unknown_agent', 'agent_id must name an agent of this organization');
    if (!(await findKnowledgeBase(tx, orgId, id))) return null;
    await attachKnowledgeBase(tx, agentId, id);
    return findKnowledgeBase(tx, orgId, id);
  });
}
