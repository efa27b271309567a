import { deleteConversationsOfAgentBatch } from '../db/conversations.ts';
import { deleteEmailInboxesOfAgent } from '../db/email-inboxes.ts';
import type { AgentDeleteHook, AgentPurgeStep, AgentRowsFate } from '../agents/delete-hooks.ts';

/** Inbox addresses are unique across the service: free them when the agent is deleted, not when the purge runs. */
export const agentDeleteHooks: Record<string, AgentDeleteHook> = {
  email_inboxes: async (tx, { agentId }) => { await deleteEmailInboxesOfAgent(tx, agentId); },
};

/** Messages go with their conversation (ON DELETE CASCADE); usage records have no foreign key and stay. */
export const agentPurgeSteps: Record<string, AgentPurgeStep> = {
  conversations: deleteConversationsOfAgentBatch,
};

export const agentTables: Record<string, AgentRowsFate> = {
  email_inboxes: { deleteHook: 'email_inboxes' },
  conversations: { purgeStep: 'conversations' },
  conversation_counts: { withAgentRow: true }, // also kept in step by triggers as conversations go
  usage_records: { kept: 'usage is billing history: it stays (no foreign key), naming an agent that no longer exists' },
};
