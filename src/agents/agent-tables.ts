import type { Db } from '../db/index.ts';
import { agentColumns, type AgentColumn } from '../db/agent-columns.ts';
import { familyAgentHooks, type FamilyAgentHooks } from './delete-hooks.ts';

/**
 * What is wrong between the schema's agent columns and the families' `agentTables`: a table with
 * an agent column that no family accounts for (or two do), a declared table the schema does not
 * have, a fate naming a hook or step its family does not declare, a `withAgentRow` table whose
 * foreign key to `agents` neither cascades nor sets null. Empty when all is accounted for.
 */
export function agentTableProblems(columns: AgentColumn[], families: FamilyAgentHooks[]): string[] {
  const problems: string[] = [];
  const owner = new Map<string, string>();
  for (const { family, hooks } of families) {
    for (const [table, fate] of Object.entries(hooks.agentTables ?? {})) {
      const other = owner.get(table);
      if (other) problems.push(`table ${table} is declared by both src/${other} and src/${family}`);
      owner.set(table, family);
      const at = `src/${family}/agent-hooks.ts declares ${table}`;
      const own = columns.filter((c) => c.table === table);
      if (own.length === 0) problems.push(`${at}, but the schema has no such table with an agent_id column`);
      if ('deleteHook' in fate && !hooks.agentDeleteHooks?.[fate.deleteHook]) problems.push(`${at} cleared by delete hook ${fate.deleteHook}, which it does not declare in agentDeleteHooks`);
      if ('purgeStep' in fate && !hooks.agentPurgeSteps?.[fate.purgeStep]) problems.push(`${at} cleared by purge step ${fate.purgeStep}, which it does not declare in agentPurgeSteps`);
      if ('kept' in fate && !fate.kept.trim()) problems.push(`${at} kept, without saying why`);
      if ('withAgentRow' in fate) {
        for (const c of own.filter((c) => c.onAgentDelete === null)) problems.push(`${at} going with the agent row, but ${table}.${c.column} has no foreign key to agents that cascades or sets null`);
      }
    }
  }
  for (const table of new Set(columns.map((c) => c.table))) {
    if (!owner.has(table)) {
      const cols = columns.filter((c) => c.table === table).map((c) => c.column).join(', ');
      problems.push(`table ${table} (${cols}) names an agent, but no family's agent-hooks.ts says in agentTables what becomes of its rows when the agent is deleted`);
    }
  }
  return problems;
}

/**
 * Refuses to start a service whose schema has a table naming an agent that no family accounts for
 * (see src/agents/README.md): a new family's table cannot be forgotten by an agent's delete.
 */
export async function assertAgentTablesAccountedFor(db: Db): Promise<void> {
  const problems = agentTableProblems(await agentColumns(db), await familyAgentHooks());
  if (problems.length) throw new Error(`agent delete hooks are incomplete:\n  ${problems.join('\n  ')}`);
}
