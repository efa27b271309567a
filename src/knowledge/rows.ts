import type { Db } from '../db/index.ts';
import { findRowsWithAnyWord, type RowCandidate } from '../db/data-tables.ts';
import type { Cell, Column } from '../domain/data-rows.ts';
import { STOPWORDS } from '../answers/text.ts';
import { analyzeQuestion, stem, words, type AnswerType } from '../answers/analysis.ts';

/**
 * Answers from an agent's data tables: the row a question names ("How much is the Trek FX 3?"
 * names the row whose text cell reads "Trek FX 3") answered with its cells ("The Trek FX 3
 * costs $899 (in stock)."). A question names a row when every word of one of its text cells is
 * in the question, and no other row has that same cell; the longest such cell wins. A question
 * that names no row gets null, and the other sources answer.
 */

export interface RowAnswer { text: string; table: string }

const CANDIDATES = 50;
const PRICE_COLUMN = /price|cost|fee|amount|rate|usd|eur|gbp|msrp/i;

const contentStems = (text: string) => words(text).filter((w) => !STOPWORDS.has(w)).map(stem);
const label = (column: string) => column.replace(/_/g, ' ');

function formatCell(column: Column, value: Cell): string {
  if (typeof value === 'number' && PRICE_COLUMN.test(column.name)) {
    const amount = Number.isInteger(value) ? String(value) : value.toFixed(2);
    return /eur/i.test(column.name) ? `€${amount}` : /gbp/i.test(column.name) ? `£${amount}` : `$${amount}`;
  }
  return String(value);
}

/** The row's cells as a sentence: the price first when asked for, yes/no columns as flags in brackets. */
function sentenceOf(row: RowCandidate, nameColumn: string, want: AnswerType | null): string {
  const name = String(row.data[nameColumn]);
  const cells = row.columns.filter((c) => c.name !== nameColumn && row.data[c.name] !== null && row.data[c.name] !== undefined);
  const flags = cells.filter((c) => c.type === 'boolean').map((c) => (row.data[c.name] ? label(c.name) : `not ${label(c.name)}`));
  const values = cells.filter((c) => c.type !== 'boolean');
  const price = values.find((c) => PRICE_COLUMN.test(c.name) && (c.type === 'number' || /\d/.test(String(row.data[c.name]))));
  const subject = /^the\b/i.test(name) ? name : `The ${name}`;
  let text: string;
  if (price && (want === 'price' || values.length === 1)) {
    const rest = values.filter((c) => c !== price && want !== 'price');
    text = `${subject} costs ${formatCell(price, row.data[price.name]!)}${rest.length ? `; ${rest.map((c) => `${label(c.name)}: ${formatCell(c, row.data[c.name]!)}`).join(', ')}` : ''}`;
  } else {
    text = `${subject}: ${values.map((c) => `${label(c.name)} ${formatCell(c, row.data[c.name]!)}`).join(', ') || 'listed'}`;
  }
  return `${text}${flags.length ? ` (${flags.join(', ')})` : ''}.`;
}

/**
 * The answer to `query` from the one row it names, or null. Candidates are the rows whose text
 * cells hold any of the question's words (PostgreSQL full text over the rows' generated column).
 */
export async function answerFromRows(db: Db, agentId: string, query: string): Promise<RowAnswer | null> {
  const asked = new Set(contentStems(query));
  if (!asked.size) return null;
  // The rows are read while the question is (a message's first reading, tens of ms: issue 39), not after.
  const read = findRowsWithAnyWord(db, agentId, [...new Set(words(query).filter((w) => !STOPWORDS.has(w)))], CANDIDATES);
  // Its failure is felt where it is awaited, below, and never unhandled should the reading throw first.
  read.catch(() => {});
  const question = analyzeQuestion(query.slice(0, 1000));
  const candidates = await read;
  let best: { row: RowCandidate; column: string; size: number } | null = null;
  const named = new Map<string, number>();
  for (const row of candidates) {
    for (const c of row.columns) {
      const value = row.data[c.name];
      if (c.type !== 'string' || typeof value !== 'string') continue;
      const cell = contentStems(value);
      if (!cell.length || !cell.every((s) => asked.has(s))) continue;
      const key = `${row.tableId}:${c.name}:${cell.join(' ')}`;
      named.set(key, (named.get(key) ?? 0) + 1);
      if (!best || cell.length > best.size) best = { row, column: c.name, size: cell.length };
    }
  }
  if (!best) return null;
  // "Trek" names every Trek: a cell that several rows share names none of them.
  const key = `${best.row.tableId}:${best.column}:${contentStems(String(best.row.data[best.column])).join(' ')}`;
  if ((named.get(key) ?? 0) > 1) return null;
  return { text: sentenceOf(best.row, best.column, question.want), table: best.row.tableName };
}
