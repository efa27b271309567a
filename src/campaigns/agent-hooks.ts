import type { AgentDeleteHook, AgentRowsFate } from '../agents/delete-hooks.ts';
import { cancelCampaignsOfAgent, signalCampaignsCanceled } from './index.ts';

/**
 * A running or paused campaign of a deleted agent is canceled at once (code review F8: before,
 * it kept dialing from its stored number until the purge removed its rows); campaigns and
 * their calls then go with the agent row.
 */
export const agentDeleteHooks: Record<string, AgentDeleteHook> = {
  campaigns: async (tx, { agentId }) => {
    const canceled = await cancelCampaignsOfAgent(tx, agentId);
    return canceled.length ? (deps) => signalCampaignsCanceled(deps, canceled) : undefined;
  },
};

export const agentTables: Record<string, AgentRowsFate> = {
  campaigns: { withAgentRow: true }, // canceled by the hook above; the rows (and their calls) go with the agent row
};
