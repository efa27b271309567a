import { describe, expect, it } from 'vitest';
import { csvCellText, csvLine } from './data-rows.ts';

describe('csvCellText (OWASP CSV injection, issue 40 I9)', () => {
  it('prefixes text starting with = + - @ tab or CR with \', and nothing else', () => {
    for (const formula of ['=1+1', '+SUM(1+1)', '-2+3', '@SUM(A1)', '\tx', '\rx', "=cmd|' /C calc'!A0"]) expect(csvCellText(formula)).toBe(`'${formula}`);
    for (const plain of ['Plain', ' =not first', "'=already", '1=1', '', '2024-02-29']) expect(csvCellText(plain)).toBe(plain);
  });

  it('writes numbers, booleans and null as the import reads them: a negative number stays a number', () => {
    expect([csvCellText(-5), csvCellText(1.5), csvCellText(true), csvCellText(false), csvCellText(null)]).toEqual(['-5', '1.5', 'true', 'false', '']);
  });
});

describe('csvLine', () => {
  it('quotes cells holding a comma, a quote, a line break or edge spaces (RFC 4180), CRLF-terminated', () => {
    expect(csvLine(['a', 'b,c', 'say "hi"', 'two\nlines', ' edge', ''])).toBe('a,"b,c","say ""hi""","two\nlines"," edge",\r\n');
  });
});
