import type { AgentRowsFate } from '../agents/delete-hooks.ts';

/** An agent's retention overrides and redaction settings go with the agent row. */
export const agentTables: Record<string, AgentRowsFate> = {
  agent_governance: { withAgentRow: true },
};
