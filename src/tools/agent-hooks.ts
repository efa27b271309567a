import type { AgentDeleteHook } from '../agents/delete-hooks.ts';
import { deleteAgentToolsOfAgent } from '../db/agent-tools.ts';

/** The spec's "tool definitions": no call goes out for a deleted agent, and their sealed secrets go at once. */
export const agentDeleteHooks: Record<string, AgentDeleteHook> = {
  agent_tools: async (tx, { agentId }) => { await deleteAgentToolsOfAgent(tx, agentId); },
};
