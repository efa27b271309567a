import type { AgentDeleteHook, AgentRowsFate } from '../agents/delete-hooks.ts';
import { agentHasActiveCampaign } from '../db/campaigns.ts';
import { AppError } from '../errors.ts';

/**
 * An agent with a running or paused campaign is not deleted: 409 `active_campaign`, as releasing
 * its number is refused (issue 43), and the delete's transaction rolls back, changing nothing.
 * A campaign's start holds the agent row (FOR SHARE), so a start and a delete never both pass.
 * Campaigns that ended (and drafts) go with the agent row, and their calls with them.
 */
export const agentDeleteHooks: Record<string, AgentDeleteHook> = {
  campaigns: async (tx, { agentId }) => {
    if (await agentHasActiveCampaign(tx, agentId)) {
      throw new AppError(409, 'active_campaign', 'the agent has a running or paused campaign: cancel it (POST /campaigns/:id/cancel) or let it finish before deleting the agent');
    }
  },
};

export const agentTables: Record<string, AgentRowsFate> = {
  campaigns: { withAgentRow: true }, // no active campaign is left (the hook above refuses); the rows (and their calls) go with the agent row
};
