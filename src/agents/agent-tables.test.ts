import { expect, it } from 'vitest';
import { agentTableProblems } from './agent-tables.ts';

const hook = async () => undefined;

it('names a table no family declares, a stale or doubled declaration, a missing hook and a foreign key that does not cascade', () => {
  const problems = agentTableProblems(
    [
      { table: 'notes', column: 'agent_id', onAgentDelete: 'CASCADE' },
      { table: 'stickers', column: 'agent_id', onAgentDelete: null },
      { table: 'loose', column: 'agent_id', onAgentDelete: null },
    ],
    [
      { family: 'a', hooks: { agentDeleteHooks: { notes: hook }, agentTables: { notes: { deleteHook: 'notes' }, gone: { withAgentRow: true } } } },
      { family: 'b', hooks: { agentTables: { notes: { kept: 'x' }, stickers: { withAgentRow: true }, loose: { purgeStep: 'loose' } } } },
    ],
  );
  expect(problems).toEqual([
    'src/a/agent-hooks.ts declares gone, but the schema has no such table with an agent_id column',
    'table notes is declared by both src/a and src/b',
    'src/b/agent-hooks.ts declares stickers going with the agent row, but stickers.agent_id has no foreign key to agents that cascades or sets null',
    'src/b/agent-hooks.ts declares loose cleared by purge step loose, which it does not declare in agentPurgeSteps',
  ]);
  expect(agentTableProblems([{ table: 'notes', column: 'agent_id', onAgentDelete: 'CASCADE' }], [])).toEqual([
    "table notes (agent_id) names an agent, but no family's agent-hooks.ts says in agentTables what becomes of its rows when the agent is deleted",
  ]);
});
