import { Readable } from 'node:stream';
import { CsvError, parse } from 'csv-parse';
import type { Sql } from '../db/index.ts';
import { insertDataRows, streamDataRows } from '../db/data-tables.ts';
import { csvCellText, csvLine, headerErrors, typedCsvRow, typedJsonRow, type Cell, type Column } from '../domain/data-rows.ts';
import { AppError, validationError } from '../errors.ts';
import { DATA_TABLE_LIMITS, type DataTable } from '../schemas/data-tables.ts';
import type { FieldError } from '../validation.ts';

/**
 * Adding rows to a data table: typed JSON rows, or a CSV body read by csv-parse's streaming
 * parser (RFC 4180: quotes, embedded commas and line breaks). All or nothing: the first row or
 * cell that does not fit the columns refuses the whole request, naming its row and column.
 */

const refuse = (error: FieldError) => validationError([error]);

/** The CSV's records, typed by the table's columns; throws 400 on the first bad line, header, cell, or past the row limit. */
async function csvRows(columns: Column[], csv: string): Promise<Record<string, Cell>[]> {
  const rows: Record<string, Cell>[] = [];
  // The header as written: a record's keys would hide a name given twice (its last cell wins).
  let header: string[] | null = null;
  const checkHeader = () => {
    const errors = headerErrors(columns, header ?? []);
    if (errors.length) throw validationError(errors, `the CSV header does not match the table: ${errors[0]!.message}`);
  };
  const parser = Readable.from([csv]).pipe(parse({
    bom: true, columns: (names: string[]) => (header = names), skip_empty_lines: true, trim: true, info: true, max_record_size: 64 * 1024,
  }));
  let checked = false;
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
      if (!checked) {
        checkHeader();
        checked = true;
      }
      if (rows.length >= DATA_TABLE_LIMITS.rowsPerTable) {
        throw refuse({ field: 'rows', code: 'too_many_rows', message: `the CSV holds more than ${DATA_TABLE_LIMITS.rowsPerTable} rows, the most a table holds` });
      }
      const typed = typedCsvRow(columns, record, rows.length, info.lines);
      if ('error' in typed) throw refuse(typed.error);
      rows.push(typed.row);
    }
  } catch (err) {
    parser.destroy();
    if (err instanceof CsvError) {
      const line = (err as CsvError & { lines?: number }).lines;
      throw refuse({ field: 'body', code: 'invalid_csv', message: `the CSV does not parse${line ? ` at line ${line}` : ''}: ${err.message.slice(0, 300)}` });
    }
    throw err;
  }
  if (!header) throw refuse({ field: 'body', code: 'invalid_csv', message: 'the CSV holds no rows: send a header line naming the columns, then one line per row' });
  if (!checked) checkHeader();
  if (!rows.length) throw refuse({ field: 'body', code: 'invalid_csv', message: 'the CSV holds no rows: send a header line naming the columns, then one line per row' });
  return rows;
}

/**
 * Adds the rows of a JSON body (`rows`) or a CSV body to the table; answers how many. Pass the
 * table as the caller found it (same organization and agent).
 */
export async function addDataRows(sql: Sql, table: DataTable, agentId: string, input: { csv?: string | undefined; rows?: Record<string, unknown>[] | undefined }): Promise<number> {
  let rows: Record<string, Cell>[];
  if (input.csv !== undefined) rows = await csvRows(table.columns, input.csv);
  else {
    rows = [];
    for (const [i, raw] of (input.rows ?? []).entries()) {
      const typed = typedJsonRow(table.columns, raw, i);
      if ('error' in typed) throw refuse(typed.error);
      rows.push(typed.row);
    }
  }
  if (!rows.length) return 0;
  const inserted = await sql.begin((tx) => insertDataRows(tx, table.id, agentId, rows));
  if (inserted === 'limit') {
    throw new AppError(409, 'invalid_state', `these ${rows.length} rows would take the table past ${DATA_TABLE_LIMITS.rowsPerTable} rows, the most it holds; nothing was inserted`);
  }
  return inserted;
}

/**
 * The table as CSV, streamed: a header line naming the columns, then one line per row in order,
 * in the form the CSV import reads (numbers plain, booleans true/false, dates YYYY-MM-DD, null
 * empty). Text a spreadsheet would run as a formula is prefixed with `'` (issue 40, I9).
 */
export function dataRowsCsv(sql: Sql, table: DataTable): Readable {
  const names = table.columns.map((c) => c.name);
  return Readable.from((async function* lines() {
    yield csvLine(names);
    for await (const rows of streamDataRows(sql, table.id)) {
      yield rows.map((row) => csvLine(names.map((name) => csvCellText(row[name] ?? null)))).join('');
    }
  })());
}
