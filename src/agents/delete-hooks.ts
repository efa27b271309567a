import type { Db } from '../db/index.ts';
import { deleteEmailInboxesOfAgent } from '../db/email-inboxes.ts';
import { deleteDataTablesOfAgent } from '../db/data-tables.ts';
import { deleteTrainingNotesOfAgent } from '../db/training-notes.ts';
import { deleteAgentToolsOfAgent } from '../db/agent-tools.ts';
import { deleteKnowledgeBases, knowledgeBasesOnlyUsedBy } from '../db/knowledge-bases.ts';
import { siteIdsOfAgent } from '../db/sites.ts';
import { stopSiteWork, type KnowledgeDeps } from '../knowledge/sites.ts';
import { detachAgentNumbers } from '../telephony/numbers.ts';
import { removeAgentFromReports } from '../db/reports.ts';
import { removeReportSchedules } from '../reports/schedules.ts';

/** What a family's hook is told of the agent being deleted. */
export interface AgentDeleteContext { orgId: string; agentId: string; deleteKbs: boolean }

/**
 * A family's part of an agent's delete: runs inside the delete's transaction (the agent is
 * already hidden); may answer work to do after commit (stopping workflows), which is best effort.
 */
export type AgentDeleteHook = (tx: Db, agent: AgentDeleteContext) => Promise<((deps: KnowledgeDeps) => Promise<void>) | void>;

/**
 * Per-family hooks of `deleteAgent`, in order. A new family whose rows must go at once (not in
 * the purge, see purge-steps.ts) adds one line here instead of a branch in deleteAgent.
 */
export const AGENT_DELETE_HOOKS: Record<string, AgentDeleteHook> = {
  // Inbox addresses are unique across the service: free them now, not when the purge runs.
  // Bought numbers go back to the carrier (billing stops), imported ones are parked in the pool.
  phone_numbers: (tx, { agentId }) => detachAgentNumbers(tx, agentId),
  // A report of this agent alone goes (with its Schedule); others no longer name it.
  reports: async (tx, { orgId, agentId }) => {
    const gone = await removeAgentFromReports(tx, orgId, agentId);
    return gone.length ? (deps) => removeReportSchedules(deps, gone) : undefined;
  },
  email_inboxes: async (tx, { agentId }) => { await deleteEmailInboxesOfAgent(tx, agentId); },
  // What the business taught the agent: notes, and data tables with their rows (at most 20 × 10,000).
  training_notes: async (tx, { agentId }) => { await deleteTrainingNotesOfAgent(tx, agentId); },
  data_tables: async (tx, { agentId }) => { await deleteDataTablesOfAgent(tx, agentId); },
  // The spec's "tool definitions": no call goes out for a deleted agent, and their sealed secrets go at once.
  agent_tools: async (tx, { agentId }) => { await deleteAgentToolsOfAgent(tx, agentId); },
  // The agent's own sites (their rows go with the purge) and, with delete_kbs, the knowledge
  // bases no other live agent uses: their Schedules and running crawls stop after commit.
  knowledge: async (tx, { orgId, agentId, deleteKbs }) => {
    const own = await siteIdsOfAgent(tx, agentId);
    const kbSites = deleteKbs ? await deleteKnowledgeBases(tx, orgId, await knowledgeBasesOnlyUsedBy(tx, agentId)) : [];
    const siteIds = [...own, ...kbSites];
    return siteIds.length ? (deps) => stopSiteWork(deps, siteIds) : undefined;
  },
};
