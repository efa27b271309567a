import type { AgentRowsFate } from '../agents/delete-hooks.ts';

/** Which members serve an agent and which teams it is routed to: gone with the agent's row (ON DELETE CASCADE). */
export const agentTables: Record<string, AgentRowsFate> = {
  member_agents: { withAgentRow: true },
  team_agents: { withAgentRow: true },
};
