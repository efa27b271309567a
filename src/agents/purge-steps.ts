import { familyAgentHooks, mergeDeclared, type AgentPurgeStep } from './delete-hooks.ts';

/**
 * What depends on an agent, deleted in this order, a batch at a time, by the purge workflow: the
 * `agentPurgeSteps` each family declares in its src/<family>/agent-hooks.ts, by folder name (the
 * agent row itself goes last, in the purge activity). The workflow reads the list once through an
 * activity, so a change here never breaks the replay of a running purge.
 */
export async function agentPurgeSteps(): Promise<Record<string, AgentPurgeStep>> {
  return mergeDeclared((await familyAgentHooks()).map((m) => m.hooks.agentPurgeSteps), 'purge step');
}
