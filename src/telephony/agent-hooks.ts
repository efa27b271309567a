import type { AgentDeleteHook, AgentRowsFate } from '../agents/delete-hooks.ts';
import { detachAgentNumbers } from './numbers.ts';

/** Bought numbers go back to the carrier (billing stops), imported ones are parked in the pool. */
export const agentDeleteHooks: Record<string, AgentDeleteHook> = {
  phone_numbers: (tx, { agentId }) => detachAgentNumbers(tx, agentId),
};

export const agentTables: Record<string, AgentRowsFate> = {
  phone_numbers: { deleteHook: 'phone_numbers' },
  carrier_sessions: { withAgentRow: true },
};
