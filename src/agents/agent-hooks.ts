import { deleteDataTablesOfAgent } from '../db/data-tables.ts';
import { deleteTrainingNotesOfAgent } from '../db/training-notes.ts';
import type { AgentDeleteHook, AgentRowsFate } from './delete-hooks.ts';

/** What the business taught the agent goes with it at once: notes, and data tables with their rows (at most 20 × 10,000). */
export const agentDeleteHooks: Record<string, AgentDeleteHook> = {
  training_notes: async (tx, { agentId }) => { await deleteTrainingNotesOfAgent(tx, agentId); },
  data_tables: async (tx, { agentId }) => { await deleteDataTablesOfAgent(tx, agentId); },
};

export const agentTables: Record<string, AgentRowsFate> = {
  training_notes: { deleteHook: 'training_notes' },
  data_tables: { deleteHook: 'data_tables' },
  data_table_rows: { deleteHook: 'data_tables' }, // through data_tables' cascade
  transfer_rules: { withAgentRow: true },
};
