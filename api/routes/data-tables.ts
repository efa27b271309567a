import type { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import {
  createDataTable, exportDataRows, getDataTable, insertRows, listDataRows, listDataTables, patchDataTable, removeDataRow, removeDataTable,
} from '../../src/data-tables/index.ts';
import { IdParams, PageQuery } from '../../src/schemas/common.ts';
import {
  DATA_TABLE_LIMITS, DataRowListSchema, DataRowParams, DataRowsInsertedSchema, DataRowsInsertSchema, DataTableCreateSchema,
  DataTableListSchema, DataTableParams, DataTablePatchSchema, DataTableSchema,
} from '../../src/schemas/data-tables.ts';
import { pageReply, route, type RouteFamily } from '../routing.ts';

const BASE = '/api/v1/rest';

export const dataTablesFamily: RouteFamily = {
  base: BASE,
  order: 150,
  tag: 'Data tables',
  description: `Typed tables the agent looks things up in (a price list, a stock list): "how much is the X?" finds the row whose text cell reads X and answers with its cells. At most ${DATA_TABLE_LIMITS.tablesPerAgent} tables per agent, ${DATA_TABLE_LIMITS.columnsPerTable} columns and ${DATA_TABLE_LIMITS.rowsPerTable} rows per table.`,
  routes: [
    route({
      method: 'GET', path: '/agents/:id/data-tables', operationId: 'list_data_tables', summary: 'List an agent\'s data tables, newest first',
      permissions: ['agents.read'], params: IdParams, query: PageQuery,
      responses: { 200: { description: 'A page of tables', schema: DataTableListSchema } },
      async handler({ params, query, principal, deps }) {
        return pageReply(await listDataTables(deps, principal.orgId, params.id, query), query);
      },
    }),
    route({
      method: 'GET', path: '/agents/:id/data-tables/:tableId', operationId: 'get_data_table', summary: 'Get a data table (its columns and row count)',
      permissions: ['agents.read'], params: DataTableParams,
      responses: { 200: { description: 'The table', schema: DataTableSchema } },
      async handler({ params, principal, deps }) {
        return { status: 200, body: await getDataTable(deps, principal.orgId, params.id, params.tableId) };
      },
    }),
    route({
      method: 'POST', path: '/agents/:id/data-tables', operationId: 'create_data_table', summary: 'Create a data table',
      description: `1 to ${DATA_TABLE_LIMITS.columnsPerTable} columns with unique identifier names, each \`string\`, \`number\`, \`boolean\` or \`date\`. At most ${DATA_TABLE_LIMITS.tablesPerAgent} tables per agent: one more is 409 \`invalid_state\`.`,
      permissions: ['agents.write'], params: IdParams, body: DataTableCreateSchema,
      responses: { 201: { description: 'The new table', schema: DataTableSchema }, 409: { description: '`invalid_state`: the agent holds the most tables already' } },
      async handler({ params, body, principal, deps }) {
        const table = await createDataTable(deps, principal.orgId, params.id, body);
        return { status: 201, body: table, headers: { Location: `${BASE}/agents/${params.id}/data-tables/${table.id}` } };
      },
    }),
    route({
      method: 'PATCH', path: '/agents/:id/data-tables/:tableId', operationId: 'update_data_table', summary: 'Rename a data table or change its description',
      permissions: ['agents.write'], params: DataTableParams, body: DataTablePatchSchema,
      responses: { 200: { description: 'The updated table', schema: DataTableSchema } },
      async handler({ params, body, principal, deps }) {
        return { status: 200, body: await patchDataTable(deps, principal.orgId, params.id, params.tableId, body) };
      },
    }),
    route({
      method: 'DELETE', path: '/agents/:id/data-tables/:tableId', operationId: 'delete_data_table', summary: 'Delete a data table and its rows',
      permissions: ['agents.write'], params: DataTableParams,
      responses: { 204: { description: 'Deleted' } },
      async handler({ params, principal, deps }) {
        await removeDataTable(deps, principal.orgId, params.id, params.tableId);
        return { status: 204 };
      },
    }),
    route({
      method: 'GET', path: '/agents/:id/data-tables/:tableId/rows', operationId: 'list_data_rows', summary: 'List a table\'s rows, in the order they were added',
      permissions: ['agents.read'], params: DataTableParams, query: PageQuery,
      responses: { 200: { description: 'A page of rows', schema: DataRowListSchema } },
      async handler({ params, query, principal, deps }) {
        return pageReply(await listDataRows(deps, principal.orgId, params.id, params.tableId, query), query);
      },
    }),
    route({
      method: 'GET', path: '/agents/:id/data-tables/:tableId/rows.csv', operationId: 'export_data_rows_csv', summary: 'Download a table\'s rows as CSV',
      description: 'Every row, in the order they were added, as `text/csv` (UTF-8, RFC 4180, CRLF line ends): a header line naming the columns, then one line per row, '
        + 'in the form `add_data_rows` reads back (numbers plain, booleans true/false, dates YYYY-MM-DD, null as an empty cell). '
        + 'A text cell starting with `=`, `+`, `-`, `@`, a tab or a carriage return is prefixed with `\'`, so a spreadsheet shows it instead of running it as a formula (OWASP CSV injection).',
      permissions: ['agents.read'], params: DataTableParams,
      responses: { 200: { description: 'The rows as CSV', schema: Type.Unsafe<Readable>({ type: 'string', contentMediaType: 'text/csv' }) } },
      async handler({ params, principal, deps }) {
        const { table, csv } = await exportDataRows(deps, principal.orgId, params.id, params.tableId);
        const file = `${table.name.replace(/[^\w.-]+/g, '_').slice(0, 100) || 'rows'}.csv`;
        return {
          status: 200, body: csv,
          headers: { 'Content-Type': 'text/csv; charset=utf-8', 'Content-Disposition': `attachment; filename="${file}"`, 'Cache-Control': 'private, no-store' },
        };
      },
    }),
    route({
      method: 'POST', path: '/agents/:id/data-tables/:tableId/rows', operationId: 'add_data_rows', summary: 'Add rows: JSON (up to 1,000) or a CSV body',
      description: 'Either `{rows: [{column: value}]}` (1 to 1,000 rows, values of the column\'s type; a missing column is null) or a `text/csv` body '
        + `(UTF-8, at most 1 MiB) with a header line naming every column, then one line per row (numbers plain, booleans true/false, yes/no or 1/0, dates YYYY-MM-DD, empty cells null). All or nothing: a row that does not fit the columns is 400 \`validation_error\` naming the row and column, and nothing is inserted. Past ${DATA_TABLE_LIMITS.rowsPerTable} rows in the table: 409 \`invalid_state\`.`,
      permissions: ['agents.write'], params: DataTableParams, body: DataRowsInsertSchema, acceptsCsv: true,
      responses: { 201: { description: 'How many rows were inserted', schema: DataRowsInsertedSchema }, 409: { description: '`invalid_state`: the rows would take the table past its row limit' } },
      async handler({ params, body, csv, principal, deps }) {
        const { table, inserted } = await insertRows(deps, principal.orgId, params.id, params.tableId, { csv, rows: body.rows });
        return { status: 201, body: { inserted }, headers: { Location: `${BASE}/agents/${params.id}/data-tables/${table.id}/rows` } };
      },
    }),
    route({
      method: 'DELETE', path: '/agents/:id/data-tables/:tableId/rows/:rowId', operationId: 'delete_data_row', summary: 'Delete a row',
      permissions: ['agents.write'], params: DataRowParams,
      responses: { 204: { description: 'Deleted' } },
      async handler({ params, principal, deps }) {
        await removeDataRow(deps, principal.orgId, params.id, params.tableId, params.rowId);
        return { status: 204 };
      },
    }),
  ],
};
