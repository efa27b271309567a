import type { ColumnType } from '../schemas/data-tables.ts';
import type { FieldError } from '../validation.ts';

/**
 * Rows of a data table, typed by its columns: a JSON row's values must already have the
 * column's type; a CSV row's texts are read as that type ("899" as 899, "yes" as true). A
 * missing or empty cell is null. Pure: the use case parses and stores.
 */

export type Cell = string | number | boolean | null;
export interface Column { name: string; type: ColumnType }

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;
const TRUE = new Set(['true', 'yes', 'y', '1']);
const FALSE = new Set(['false', 'no', 'n', '0']);

function isDate(text: string): boolean {
  const m = DATE.exec(text);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}

/** Where a bad row is reported: `rows[i].column`, and a message naming the row (1-based) and, for CSV, its line. */
function cellError(index: number, column: string, code: string, problem: string, line?: number): FieldError {
  const where = line === undefined ? `row ${index + 1}` : `row ${index + 1} (CSV line ${line})`;
  return { field: `rows[${index}].${column}`, code, message: `${where}, column ${column}: ${problem}` };
}

/** A JSON row as stored: every column present (null when absent), or the first error. */
export function typedJsonRow(columns: Column[], input: Record<string, unknown>, index: number): { row: Record<string, Cell> } | { error: FieldError } {
  const known = new Set(columns.map((c) => c.name));
  for (const key of Object.keys(input)) if (!known.has(key)) return { error: cellError(index, key, 'unknown_column', 'no such column in this table') };
  const row: Record<string, Cell> = {};
  for (const { name, type } of columns) {
    const value = input[name] ?? null;
    const ok = value === null
      || (type === 'string' && typeof value === 'string')
      || (type === 'number' && typeof value === 'number' && Number.isFinite(value))
      || (type === 'boolean' && typeof value === 'boolean')
      || (type === 'date' && typeof value === 'string' && isDate(value));
    if (!ok) return { error: cellError(index, name, 'invalid_cell', `expected a ${type === 'date' ? 'date (YYYY-MM-DD)' : type}`) };
    row[name] = value as Cell;
  }
  return { row };
}

/** A CSV record (texts by header name) as stored, typed by the columns, or the first error. */
export function typedCsvRow(columns: Column[], record: Record<string, string>, index: number, line: number): { row: Record<string, Cell> } | { error: FieldError } {
  const row: Record<string, Cell> = {};
  for (const { name, type } of columns) {
    const text = (record[name] ?? '').trim();
    if (text === '') {
      row[name] = null;
      continue;
    }
    if (type === 'string') row[name] = text.slice(0, 2000);
    else if (type === 'number') {
      if (!NUMBER.test(text) || !Number.isFinite(Number(text))) return { error: cellError(index, name, 'invalid_cell', `"${text.slice(0, 40)}" is not a number`, line) };
      row[name] = Number(text);
    } else if (type === 'boolean') {
      const folded = text.toLowerCase();
      if (!TRUE.has(folded) && !FALSE.has(folded)) return { error: cellError(index, name, 'invalid_cell', `"${text.slice(0, 40)}" is not a boolean (true/false, yes/no, 1/0)`, line) };
      row[name] = TRUE.has(folded);
    } else {
      if (!isDate(text)) return { error: cellError(index, name, 'invalid_cell', `"${text.slice(0, 40)}" is not a date (YYYY-MM-DD)`, line) };
      row[name] = text;
    }
  }
  return { row };
}

/** The header line's problems: a name that is no column, or a column that is missing. */
export function headerErrors(columns: Column[], header: string[]): FieldError[] {
  const known = new Set(columns.map((c) => c.name));
  const seen = new Set(header);
  const errors: FieldError[] = [];
  // Named twice, one cell would silently win over the other: refused, whichever the column.
  const twice = new Set(header.filter((name, i) => header.indexOf(name) !== i));
  for (const name of twice) errors.push({ field: `header.${name}`, code: 'duplicate_column', message: `CSV header names column ${JSON.stringify(name.slice(0, 64))} more than once` });
  for (const name of seen) if (!known.has(name)) errors.push({ field: `header.${name}`, code: 'unknown_column', message: `CSV header names ${JSON.stringify(name.slice(0, 64))}, which is no column of this table` });
  for (const c of columns) if (!seen.has(c.name)) errors.push({ field: `header.${c.name}`, code: 'missing_column', message: `CSV header lacks column ${c.name}` });
  return errors;
}

/** Column names that are used twice. */
export function duplicateColumns(columns: Column[]): FieldError[] {
  const seen = new Set<string>();
  const errors: FieldError[] = [];
  columns.forEach((c, i) => {
    if (seen.has(c.name)) errors.push({ field: `columns[${i}].name`, code: 'duplicate_name', message: `columns[${i}].name ${c.name} is used twice` });
    seen.add(c.name);
  });
  return errors;
}

/**
 * Characters that make a spreadsheet read a cell as a formula (OWASP "CSV injection"): `=`, `+`,
 * `-`, `@`, and tab or carriage return, which some spreadsheets skip before looking.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * A cell as CSV text: empty for null, numbers and booleans as written, and text a spreadsheet
 * would take for a formula prefixed with `'` (a stored `=HYPERLINK(...)` leaves as
 * `'=HYPERLINK(...)`). Only text is neutralized: a number such as -5 stays a number.
 */
export function csvCellText(value: Cell): string {
  if (value === null) return '';
  if (typeof value !== 'string') return String(value);
  return FORMULA_START.test(value) ? `'${value}` : value;
}

/** One CSV line (RFC 4180), CRLF-terminated: a cell holding a comma, a quote, a line break or edge spaces is quoted. */
export function csvLine(cells: string[]): string {
  return `${cells.map((c) => (/[",\r\n]|^\s|\s$/.test(c) ? `"${c.replace(/"/g, '""')}"` : c)).join(',')}\r\n`;
}
