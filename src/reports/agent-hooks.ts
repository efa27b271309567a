import type { AgentDeleteHook, AgentPurgeStep, AgentRowsFate } from '../agents/delete-hooks.ts';
import { removeAgentFromReports } from '../db/reports.ts';
import { deleteRollupsOfAgentBatch } from '../db/report-rollups.ts';
import { removeReportSchedules } from './schedules.ts';

/** A report of this agent alone goes (with its Schedule); others no longer name it. */
export const agentDeleteHooks: Record<string, AgentDeleteHook> = {
  reports: async (tx, { orgId, agentId }) => {
    const gone = await removeAgentFromReports(tx, orgId, agentId);
    return gone.length ? (deps) => removeReportSchedules(deps, gone) : undefined;
  },
};

/** Rollup rows of the agent's conversations (after the conversations' step: folder order), without waiting for a refresh. */
export const agentPurgeSteps: Record<string, AgentPurgeStep> = {
  report_rollups: deleteRollupsOfAgentBatch,
};

export const agentTables: Record<string, AgentRowsFate> = {
  // `widget_ids` names the agents a report covers: the delete hook removes the agent from it (or the report, when it is the only one).
  reports: { deleteHook: 'reports' },
  report_rollups: { purgeStep: 'report_rollups' },
};
