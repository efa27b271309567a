import type { AgentDeleteHook, AgentRowsFate } from '../agents/delete-hooks.ts';
import { deleteSimulationsOfAgent } from '../db/simulations.ts';
import { workflowIds } from '../temporal/ids.ts';
import { stopWorkflow } from '../temporal/start.ts';

/** Runs where the agent is under test or the caller (their conversations go with the purge); running ones stop after commit. */
export const agentDeleteHooks: Record<string, AgentDeleteHook> = {
  simulations: async (tx, { agentId }) => {
    const running = (await deleteSimulationsOfAgent(tx, agentId)).filter((s) => s.status === 'running');
    if (running.length === 0) return undefined;
    return async (deps) => {
      for (const s of running) {
        await stopWorkflow(deps, s.kind === 'web' ? workflowIds.webSimulation(s.id) : workflowIds.simulation(s.id), 'terminate', 'agent deleted');
      }
    };
  },
};

/** Both columns: a run goes whether the agent was under test (`agent_id`) or the caller (`caller_agent_id`). */
export const agentTables: Record<string, AgentRowsFate> = {
  simulations: { deleteHook: 'simulations' },
};
