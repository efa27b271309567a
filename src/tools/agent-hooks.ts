import type { AgentDeleteHook, AgentRowsFate } from '../agents/delete-hooks.ts';
import { deleteAgentToolsOfAgent } from '../db/agent-tools.ts';

/** The spec's "tool definitions": no call goes out for a deleted agent, and their sealed secrets go at once. */
export const agentDeleteHooks: Record<string, AgentDeleteHook> = {
  agent_tools: async (tx, { agentId }) => { await deleteAgentToolsOfAgent(tx, agentId); },
};

export const agentTables: Record<string, AgentRowsFate> = {
  agent_tools: { deleteHook: 'agent_tools' },
  agent_tool_calls: { deleteHook: 'agent_tools' }, // through agent_tools' cascade
};
