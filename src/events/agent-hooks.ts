import type { AgentRowsFate } from '../agents/delete-hooks.ts';

/** The event log is the organization's history, and webhook deliveries point into it: an agent's delete adds to it, never removes from it. */
export const agentTables: Record<string, AgentRowsFate> = {
  events: { kept: "the organization's event log (webhook deliveries reference its rows); no foreign key to agents" },
};
