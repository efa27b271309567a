import type { AgentRowsFate } from '../agents/delete-hooks.ts';

/** Feedback goes with its conversation (the conversations purge step, ON DELETE CASCADE), and with the agent row at the latest. */
export const agentTables: Record<string, AgentRowsFate> = {
  feedback: { withAgentRow: true },
};
