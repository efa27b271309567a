import type { Db } from './index.ts';

/** A column naming an agent (`agent_id`, `caller_agent_id`, ...) and what its foreign key does when the agent row goes. */
export interface AgentColumn { table: string; column: string; onAgentDelete: 'CASCADE' | 'SET NULL' | null }

/**
 * Every column of the service's schema that names an agent, from information_schema: named `agent_id`,
 * `*_agent_id`, `agent_ids`, `*_agent_ids`, `widget_id` or `widget_ids` (the API's name for an agent), or
 * holding a foreign key to `agents` whatever its name (issue 43); with the delete rule of that foreign
 * key (null when it has none): what an agent's delete must account for (src/agents/agent-tables.ts).
 */
export async function agentColumns(db: Db): Promise<AgentColumn[]> {
  const rows = await db<{ table: string; column: string; rule: string | null }[]>`
    select c.table_name as table, c.column_name as column,
      (select rc.delete_rule from information_schema.key_column_usage k
         join information_schema.referential_constraints rc
           on rc.constraint_schema = k.constraint_schema and rc.constraint_name = k.constraint_name
         join information_schema.constraint_column_usage u
           on u.constraint_schema = rc.unique_constraint_schema and u.constraint_name = rc.unique_constraint_name
        where k.table_schema = c.table_schema and k.table_name = c.table_name and k.column_name = c.column_name
          and u.table_name = 'agents' limit 1) as rule
    from information_schema.columns c
    join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
    where c.table_schema = current_schema() and t.table_type = 'BASE TABLE'
      and (c.column_name in ('agent_id', 'agent_ids', 'widget_id', 'widget_ids') or c.column_name like '%\\_agent\\_id'
        or c.column_name like '%\\_agent\\_ids'
        or exists (select 1 from information_schema.key_column_usage k
             join information_schema.referential_constraints rc
               on rc.constraint_schema = k.constraint_schema and rc.constraint_name = k.constraint_name
             join information_schema.constraint_column_usage u
               on u.constraint_schema = rc.unique_constraint_schema and u.constraint_name = rc.unique_constraint_name
            where k.table_schema = c.table_schema and k.table_name = c.table_name and k.column_name = c.column_name and u.table_name = 'agents'))
    order by 1, 2`;
  return rows.map((r) => ({ table: r.table, column: r.column, onAgentDelete: r.rule === 'CASCADE' || r.rule === 'SET NULL' ? r.rule : null }));
}
