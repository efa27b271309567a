import { listPage, patchFields, type Db } from './index.ts';
import { newId } from '../ids.ts';
import type { Cell, Column } from '../domain/data-rows.ts';
import { DATA_TABLE_LIMITS, DataTablePatchSchema, type DataRow, type DataTable, type DataTableCreate } from '../schemas/data-tables.ts';

interface TableRow { id: string; name: string; description: string | null; columns: Column[]; row_count: number; created_at: Date; updated_at: Date }
interface RowRow { id: string; data: Record<string, Cell>; created_at: Date }

const COLUMNS = ['id', 'name', 'description', 'columns', 'row_count', 'created_at', 'updated_at'];

const toTable = (row: TableRow): DataTable => ({
  id: row.id, name: row.name, description: row.description, columns: row.columns, row_count: row.row_count,
  created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
});
const toRow = (row: RowRow): DataRow => ({ id: row.id, data: row.data, created_at: row.created_at.toISOString() });

/** A new table, or 'limit' when the agent holds the most tables already (its row is locked meanwhile). */
export async function insertDataTable(db: Db, orgId: string, agentId: string, input: DataTableCreate): Promise<DataTable | 'limit'> {
  await db`select id from agents where id = ${agentId} and org_id = ${orgId} for update`;
  const [count] = await db<{ n: number }[]>`select count(*)::int as n from data_tables where agent_id = ${agentId}`;
  if (count!.n >= DATA_TABLE_LIMITS.tablesPerAgent) return 'limit';
  const [row] = await db<TableRow[]>`
    insert into data_tables (id, org_id, agent_id, name, description, columns)
    values (${newId()}, ${orgId}, ${agentId}, ${input.name}, ${input.description ?? null}, ${db.json(input.columns)})
    returning ${db(COLUMNS)}`;
  return toTable(row!);
}

export async function findDataTable(db: Db, orgId: string, agentId: string, id: string): Promise<DataTable | null> {
  const [row] = await db<TableRow[]>`select ${db(COLUMNS)} from data_tables where id = ${id} and agent_id = ${agentId} and org_id = ${orgId}`;
  return row ? toTable(row) : null;
}

export async function listDataTablesPage(db: Db, orgId: string, agentId: string, q: { limit: number; offset: number }): Promise<{ data: DataTable[]; total: number }> {
  return listPage(db, {
    ...q, columns: db(COLUMNS), from: db`from data_tables where agent_id = ${agentId} and org_id = ${orgId}`, order: db`created_at desc, id desc`,
  }, toTable);
}

/** Every table of the agent, oldest first (export, clone). */
export async function listDataTables(db: Db, agentId: string): Promise<DataTable[]> {
  const rows = await db<TableRow[]>`select ${db(COLUMNS)} from data_tables where agent_id = ${agentId} order by created_at, id`;
  return rows.map(toTable);
}

export async function updateDataTable(db: Db, orgId: string, agentId: string, id: string, patch: { name?: string; description?: string | null }): Promise<DataTable | null> {
  const fields = patchFields(DataTablePatchSchema, patch);
  if (Object.keys(fields).length === 0) return findDataTable(db, orgId, agentId, id);
  const [row] = await db<TableRow[]>`
    update data_tables set ${db(fields)}, updated_at = now()
    where id = ${id} and agent_id = ${agentId} and org_id = ${orgId} returning ${db(COLUMNS)}`;
  return row ? toTable(row) : null;
}

export async function deleteDataTable(db: Db, orgId: string, agentId: string, id: string): Promise<boolean> {
  const rows = await db`delete from data_tables where id = ${id} and agent_id = ${agentId} and org_id = ${orgId} returning id`;
  return rows.length > 0;
}

/** Rows inserted per statement: three parameters a row stays far below PostgreSQL's 65,535. */
const BATCH = 2000;

/**
 * Adds rows to a table, all or none: 'limit' when they would take it past its row limit. Pass a
 * transaction: the table row is locked, so its count stays exact.
 */
export async function insertDataRows(db: Db, tableId: string, agentId: string, rows: Record<string, Cell>[]): Promise<number | 'limit'> {
  const [table] = await db<{ row_count: number }[]>`select row_count from data_tables where id = ${tableId} for update`;
  if (!table) return 0;
  if (table.row_count + rows.length > DATA_TABLE_LIMITS.rowsPerTable) return 'limit';
  for (let i = 0; i < rows.length; i += BATCH) {
    const values = rows.slice(i, i + BATCH).map((data) => ({ id: newId(), table_id: tableId, agent_id: agentId, data: db.json(data) }));
    await db`insert into data_table_rows ${db(values, 'id', 'table_id', 'agent_id', 'data')}`;
  }
  await db`update data_tables set row_count = row_count + ${rows.length}, updated_at = now() where id = ${tableId}`;
  return rows.length;
}

export async function listDataRowsPage(db: Db, tableId: string, q: { limit: number; offset: number }): Promise<{ data: DataRow[]; total: number }> {
  return listPage(db, {
    ...q, columns: db`id, data, created_at`, from: db`from data_table_rows where table_id = ${tableId}`, order: db`ord`,
  }, toRow);
}

/** A table's rows in order, at most `limit` (export and clone). */
export async function listDataRows(db: Db, tableId: string, limit: number): Promise<Record<string, Cell>[]> {
  const rows = await db<{ data: Record<string, Cell> }[]>`select data from data_table_rows where table_id = ${tableId} order by ord limit ${limit}`;
  return rows.map((r) => r.data);
}

/** A table's rows in order, read in batches through a cursor (a CSV export streams them). */
export async function* streamDataRows(db: Db, tableId: string, batch = 500): AsyncGenerator<Record<string, Cell>[]> {
  for await (const rows of db<{ data: Record<string, Cell> }[]>`select data from data_table_rows where table_id = ${tableId} order by ord`.cursor(batch)) {
    yield rows.map((r) => r.data);
  }
}

/** Deletes one row and keeps the table's count; false when the table holds no such row. */
export async function deleteDataRow(db: Db, tableId: string, rowId: string): Promise<boolean> {
  const rows = await db`delete from data_table_rows where id = ${rowId} and table_id = ${tableId} returning id`;
  if (rows.length) await db`update data_tables set row_count = row_count - 1, updated_at = now() where id = ${tableId}`;
  return rows.length > 0;
}

export interface RowCandidate { tableId: string; tableName: string; columns: Column[]; data: Record<string, Cell> }

/** Words made safe for `websearch_to_tsquery`: letters, digits and inner hyphens only. */
const clean = (words: string[]) => [...new Set(words.map((w) => w.toLowerCase().replace(/[^\p{L}\p{N}-]+/gu, '').replace(/^-+|-+$/g, '')).filter(Boolean))];

/**
 * The agent's rows whose text cells hold any of `words` (stemmed full text over the generated
 * column), best first by `ts_rank_cd`, at most `limit`, with their table's columns. `q` is materialized: the query is
 * parsed once, not again for every row by a prepared statement's generic plan (issue 39).
 */
export async function findRowsWithAnyWord(db: Db, agentId: string, words: string[], limit: number): Promise<RowCandidate[]> {
  const list = clean(words);
  if (!list.length) return [];
  const rows = await db<{ table_id: string; name: string; columns: Column[]; data: Record<string, Cell> }[]>`
    with q as materialized (select websearch_to_tsquery('english', ${list.join(' or ')}) as query)
    select r.table_id, t.name, t.columns, r.data
    from q, data_table_rows r join data_tables t on t.id = r.table_id
    where r.agent_id = ${agentId} and r.tsv @@ q.query
    order by ts_rank_cd(r.tsv, q.query) desc, r.ord
    limit ${limit}`;
  return rows.map((r) => ({ tableId: r.table_id, tableName: r.name, columns: r.columns, data: r.data }));
}

/** An agent's tables and rows go at once with its delete (the rows cascade with their tables). */
export async function deleteDataTablesOfAgent(db: Db, agentId: string): Promise<void> {
  await db`delete from data_tables where agent_id = ${agentId}`;
}

/** Copies every table of an agent, rows included and in order, onto another agent (clone). */
export async function copyDataTables(db: Db, orgId: string, fromAgentId: string, toAgentId: string): Promise<void> {
  for (const table of await listDataTables(db, fromAgentId)) {
    const id = newId();
    await db`insert into data_tables (id, org_id, agent_id, name, description, columns, row_count)
      values (${id}, ${orgId}, ${toAgentId}, ${table.name}, ${table.description}, ${db.json(table.columns)}, ${table.row_count})`;
    await db`insert into data_table_rows (id, table_id, agent_id, data)
      select gen_random_uuid(), ${id}, ${toAgentId}, data from data_table_rows where table_id = ${table.id} order by ord`;
  }
}

/** A new table with its rows (import), bypassing nothing: the caller checked the limits and the cells. */
export async function insertDataTableWithRows(db: Db, orgId: string, agentId: string, input: DataTableCreate, rows: Record<string, Cell>[]): Promise<void> {
  const [row] = await db<{ id: string }[]>`
    insert into data_tables (id, org_id, agent_id, name, description, columns)
    values (${newId()}, ${orgId}, ${agentId}, ${input.name}, ${input.description ?? null}, ${db.json(input.columns)}) returning id`;
  await insertDataRows(db, row!.id, agentId, rows);
}
