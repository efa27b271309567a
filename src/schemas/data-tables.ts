import { Type, type Static } from '@sinclair/typebox';
import { Identifier, ListEnvelope, Nullable, StringEnum, Timestamp, Uuid } from './common.ts';

/** Limits of the contract (Agent sub-resources). */
export const DATA_TABLE_LIMITS = { tablesPerAgent: 20, columnsPerTable: 50, rowsPerTable: 10_000, rowsPerJsonRequest: 1000 } as const;

export const COLUMN_TYPES = ['string', 'number', 'boolean', 'date'] as const;
export type ColumnType = (typeof COLUMN_TYPES)[number];

const Column = Type.Object({
  name: { ...Identifier, description: 'Column name: an identifier, unique in the table (at most 64 characters)' },
  type: StringEnum(COLUMN_TYPES, { description: '`string`, `number`, `boolean` or `date` (YYYY-MM-DD)' }),
}, { additionalProperties: false });

const Columns = Type.Array(Column, { minItems: 1, maxItems: DATA_TABLE_LIMITS.columnsPerTable, description: '1 to 50 typed columns with unique names' });
const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'Display name, 1 to 200 characters' });
const Description = Type.String({ maxLength: 2000, description: 'What the table holds, up to 2,000 characters' });

/** A table the agent looks things up in: a price list, a stock list, a timetable. */
export const DataTableSchema = Type.Object({
  id: Uuid,
  name: Type.String(),
  description: Nullable(Type.String()),
  columns: Type.Array(Type.Object({ name: Type.String(), type: StringEnum(COLUMN_TYPES) }, { additionalProperties: false })),
  row_count: Type.Integer({ minimum: 0 }),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'DataTable', additionalProperties: false, description: 'Typed rows the agent answers from ("how much is the X?" finds the row whose text matches X)' });
export type DataTable = Static<typeof DataTableSchema>;

export const DataTableCreateSchema = Type.Object({
  name: Name,
  description: Type.Optional(Nullable(Description)),
  columns: Columns,
}, { $id: 'DataTableCreate', additionalProperties: false });
export type DataTableCreate = Static<typeof DataTableCreateSchema>;

export const DataTablePatchSchema = Type.Object({
  name: Type.Optional(Name),
  description: Type.Optional(Nullable(Description)),
}, { $id: 'DataTablePatch', additionalProperties: false, description: 'Name and description; the columns are fixed once rows may exist (create a new table to change them)' });

export const DataTableListSchema = ListEnvelope(DataTableSchema, 'DataTableList');

const Cell = Type.Union([Type.String({ maxLength: 2000 }), Type.Number(), Type.Boolean(), Type.Null()]);
export const RowData = Type.Record(Type.String(), Cell);

export const DataRowSchema = Type.Object({
  id: Uuid,
  data: Type.Record(Type.String(), Cell, { description: 'The row\'s cells by column name (typed: strings, numbers, booleans; dates as YYYY-MM-DD)' }),
  created_at: Timestamp,
}, { $id: 'DataRow', additionalProperties: false });
export type DataRow = Static<typeof DataRowSchema>;

export const DataRowListSchema = Type.Object({
  data: Type.Array(DataRowSchema),
  total: Type.Integer({ minimum: 0 }),
  limit: Type.Integer(),
  offset: Type.Integer(),
}, { $id: 'DataRowList', additionalProperties: false, description: 'Rows in the order they were added' });

export const DataRowsInsertSchema = Type.Object({
  rows: Type.Array(Type.Record(Type.String({ maxLength: 64 }), Cell), {
    minItems: 1, maxItems: DATA_TABLE_LIMITS.rowsPerJsonRequest, description: '1 to 1,000 rows, each an object of column name to value',
  }),
}, { $id: 'DataRowsInsert', additionalProperties: false, description: 'Rows as JSON; or send a `text/csv` body with a header line instead (up to 10,000 rows)' });

export const DataRowsInsertedSchema = Type.Object({ inserted: Type.Integer({ minimum: 0 }) }, { $id: 'DataRowsInserted', additionalProperties: false });

export const DataTableParams = Type.Object({ id: Uuid, tableId: Uuid }, { additionalProperties: false });
export const DataRowParams = Type.Object({ id: Uuid, tableId: Uuid, rowId: Uuid }, { additionalProperties: false });
