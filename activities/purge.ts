import { ApplicationFailure } from '@temporalio/activity';
import type { Sql } from '../src/db/index.ts';
import { deleteAgentRow } from '../src/db/agents.ts';
import { agentPurgeSteps } from '../src/agents/purge-steps.ts';
import type { ActivityRegistration } from './index.ts';

/** Activities of the agent purge: each is idempotent, so a retry after a crash is harmless. */
export function createPurgeActivities({ sql }: { sql: Sql }) {
  return {
    /** The dependent tables to empty, in order. */
    async listAgentPurgeSteps(): Promise<string[]> {
      return Object.keys(await agentPurgeSteps());
    },

    /** Deletes up to `batchSize` rows of one step; returns how many went. */
    async purgeAgentBatch(input: { agentId: string; step: string; batchSize: number }): Promise<number> {
      const purge = (await agentPurgeSteps())[input.step];
      if (!purge) throw ApplicationFailure.nonRetryable(`unknown purge step ${input.step}`, 'UnknownPurgeStep');
      return purge(sql, input.agentId, input.batchSize);
    },

    /** Removes the agent row itself, once nothing depends on it. Only an agent marked deleted goes. */
    async deleteAgentRecord(input: { agentId: string }): Promise<boolean> {
      return deleteAgentRow(sql, input.agentId);
    },
  };
}
export type PurgeActivities = ReturnType<typeof createPurgeActivities>;

/** Run by the maintenance queue's worker (activities/index.ts finds this module). */
export const registration: ActivityRegistration = { queue: 'maintenance', create: createPurgeActivities };
