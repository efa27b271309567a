import type { AgentDeleteHook } from '../agents/delete-hooks.ts';
import { removeAgentFromReports } from '../db/reports.ts';
import { removeReportSchedules } from './schedules.ts';

/** A report of this agent alone goes (with its Schedule); others no longer name it. */
export const agentDeleteHooks: Record<string, AgentDeleteHook> = {
  reports: async (tx, { orgId, agentId }) => {
    const gone = await removeAgentFromReports(tx, orgId, agentId);
    return gone.length ? (deps) => removeReportSchedules(deps, gone) : undefined;
  },
};
