import { deleteCallRecordingRowsOfAgent, orgOfAgent } from '../db/voice.ts';
import type { AgentPurgeStep, AgentRowsFate } from '../agents/delete-hooks.ts';
import { agentRecordingsPrefix, recordingStore } from './recordings.ts';

/**
 * An agent's call recordings go in the purge: the blobs by the agent's folder (the conversations'
 * purge step, which runs before this one, has already taken most rows with their conversations),
 * then any row left. Turn timings go with the agent row.
 */
export const agentPurgeSteps: Record<string, AgentPurgeStep> = {
  call_recordings: async (db, agentId, batchSize) => {
    const orgId = await orgOfAgent(db, agentId);
    if (orgId) await recordingStore().deletePrefix(agentRecordingsPrefix(orgId, agentId));
    return deleteCallRecordingRowsOfAgent(db, agentId, batchSize);
  },
};

export const agentTables: Record<string, AgentRowsFate> = {
  call_recordings: { purgeStep: 'call_recordings' },
  voice_turn_timings: { withAgentRow: true },
};
