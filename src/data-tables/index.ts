import type { Readable } from 'node:stream';
import { agentIsLive } from '../db/transfer-rules.ts';
import {
  deleteDataRow, deleteDataTable, findDataTable, insertDataTable, listDataRowsPage, listDataTablesPage, updateDataTable,
} from '../db/data-tables.ts';
import type { FamilyDeps } from '../deps.ts';
import { duplicateColumns } from '../domain/data-rows.ts';
import { AppError, notFound, validationError } from '../errors.ts';
import { DATA_TABLE_LIMITS, type DataTable, type DataTableCreate } from '../schemas/data-tables.ts';
import { addDataRows, dataRowsCsv } from './rows.ts';

/**
 * The data tables family's use cases: an agent's typed tables and their rows. Each checks first that
 * the agent is the organization's and not deleted (404 `agent`), then the table (404 `data table`).
 */
type Deps = Pick<FamilyDeps, 'sql'>;

async function assertAgent(deps: Deps, orgId: string, agentId: string): Promise<void> {
  if (!(await agentIsLive(deps.sql, orgId, agentId))) throw notFound('agent');
}

/** A table of a live agent of the organization (its columns and row count). */
export async function getDataTable(deps: Deps, orgId: string, agentId: string, tableId: string): Promise<DataTable> {
  await assertAgent(deps, orgId, agentId);
  const table = await findDataTable(deps.sql, orgId, agentId, tableId);
  if (!table) throw notFound('data table');
  return table;
}

/** A page of an agent's tables, newest first. */
export async function listDataTables(deps: Deps, orgId: string, agentId: string, page: { limit: number; offset: number }) {
  await assertAgent(deps, orgId, agentId);
  return listDataTablesPage(deps.sql, orgId, agentId, page);
}

/** Creates a table: column names unique (400), then at most `tablesPerAgent` per agent, counted in the insert's transaction (409 `invalid_state`). */
export async function createDataTable(deps: Deps, orgId: string, agentId: string, body: DataTableCreate): Promise<DataTable> {
  const duplicates = duplicateColumns(body.columns);
  if (duplicates.length) throw validationError(duplicates);
  await assertAgent(deps, orgId, agentId);
  const table = await deps.sql.begin((tx) => insertDataTable(tx, orgId, agentId, body));
  if (table === 'limit') throw new AppError(409, 'invalid_state', `this agent already has ${DATA_TABLE_LIMITS.tablesPerAgent} data tables, the most it may have`);
  return table;
}

/** Renames a table or changes its description. */
export async function patchDataTable(deps: Deps, orgId: string, agentId: string, tableId: string, patch: { name?: string; description?: string | null }): Promise<DataTable> {
  await assertAgent(deps, orgId, agentId);
  const table = await updateDataTable(deps.sql, orgId, agentId, tableId, patch);
  if (!table) throw notFound('data table');
  return table;
}

/** Deletes a table and its rows. */
export async function removeDataTable(deps: Deps, orgId: string, agentId: string, tableId: string): Promise<void> {
  await assertAgent(deps, orgId, agentId);
  if (!(await deleteDataTable(deps.sql, orgId, agentId, tableId))) throw notFound('data table');
}

/** A page of a table's rows, in the order they were added. */
export async function listDataRows(deps: Deps, orgId: string, agentId: string, tableId: string, page: { limit: number; offset: number }) {
  const table = await getDataTable(deps, orgId, agentId, tableId);
  return listDataRowsPage(deps.sql, table.id, page);
}

/** Every row of a table as a CSV stream, with the table (whose name the download is named after). */
export async function exportDataRows(deps: Deps, orgId: string, agentId: string, tableId: string): Promise<{ table: DataTable; csv: Readable }> {
  const table = await getDataTable(deps, orgId, agentId, tableId);
  return { table, csv: dataRowsCsv(deps.sql, table) };
}

/** Adds JSON rows or a CSV body's rows, all or nothing; how many were inserted. */
export async function insertRows(
  deps: Deps, orgId: string, agentId: string, tableId: string, input: { csv?: string | undefined; rows?: Record<string, unknown>[] | undefined },
): Promise<{ table: DataTable; inserted: number }> {
  const table = await getDataTable(deps, orgId, agentId, tableId);
  return { table, inserted: await addDataRows(deps.sql, table, agentId, input) };
}

/** Deletes one row of a table. */
export async function removeDataRow(deps: Deps, orgId: string, agentId: string, tableId: string, rowId: string): Promise<void> {
  const table = await getDataTable(deps, orgId, agentId, tableId);
  if (!(await deps.sql.begin((tx) => deleteDataRow(tx, table.id, rowId)))) throw notFound('row');
}
