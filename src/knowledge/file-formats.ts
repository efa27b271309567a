import { parse as parseCsv } from 'csv-parse/sync';
import type * as PdfJsModule from 'pdfjs-dist/legacy/build/pdf.mjs';
import type * as Fflate from 'fflate';
import { createRequire } from 'node:module';
import { extractHtml } from '../crawler/extract.ts';
import { AppError } from '../errors.ts';
import { citedName, filePageUrl } from '../answers/citations.ts';
import { KNOWLEDGE_FILE_LIMITS, type KnowledgeFileKind } from '../schemas/knowledge-files.ts';

/**
 * Reading uploaded knowledge files (issue 46). `inspectUpload` decides what the bytes are (from their content, never
 * their name alone) and refuses what cannot be read, at once and before anything is stored: a file over a limit, a kind
 * not accepted, an encrypted PDF, a damaged file, a DOCX that unpacks too far. `extractFile` (run by the parse workflow,
 * so that a large PDF never holds a request) turns the bytes into parts: a PDF's pages, another document's sections, a
 * CSV's rows, each with the URL it is cited by (`runtime/citations.ts`).
 */

export const CONTENT_TYPES: Record<KnowledgeFileKind, string> = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  markdown: 'text/markdown',
  text: 'text/plain',
  html: 'text/html',
  csv: 'text/csv',
};

/**
 * One part of a file: its URL (page or section), its title ("Price list › page 2"), its text with headings marked `#`,
 * and the title its passages' sections start with (the headings of the text follow it: "Handbook › Returns").
 */
export interface FilePart { url: string; title: string; text: string; sectionTitle: string }

type Limits = typeof KNOWLEDGE_FILE_LIMITS;

const refuse = (status: number, code: ConstructorParameters<typeof AppError>[1], detail: string) => new AppError(status, code, detail);
const unreadable = (detail: string) => refuse(422, 'unreadable_file', detail);

/** The file's kind and media type, after checks cheap enough for a request; throws the 4xx problem otherwise. */
export async function inspectUpload(bytes: Buffer, name: string, declaredType: string, limits: Limits = KNOWLEDGE_FILE_LIMITS):
  Promise<{ kind: KnowledgeFileKind; contentType: string }> {
  if (bytes.length > limits.maxBytes) throw refuse(413, 'file_too_large', `the file is over ${limits.maxBytes} bytes`);
  if (bytes.length === 0) throw unreadable('the file is empty');
  const kind = sniffKind(bytes, name, declaredType);
  if (kind === 'pdf') await inspectPdf(bytes, limits);
  else if (kind === 'docx') await unpackDocx(bytes, limits);
  else if (kind === 'csv') csvRows(decodeText(bytes), limits);
  return { kind, contentType: CONTENT_TYPES[kind] };
}

const PDF_MAGIC = Buffer.from('%PDF-');
const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);

/** What the bytes are. Among text files the name or declared type only tells CSV and Markdown from plain text. */
function sniffKind(bytes: Buffer, name: string, declaredType: string): KnowledgeFileKind {
  if (bytes.subarray(0, 1024).includes(PDF_MAGIC)) return 'pdf';
  if (bytes.subarray(0, 4).equals(ZIP_MAGIC)) {
    // Which zip it is shows in its entry names (a DOCX holds word/document.xml); unpacking is checked after.
    // An Office package cut short (its content types named, its document never reached) is a damaged DOCX, not another kind.
    if (bytes.includes(Buffer.from('word/document.xml'))
      || (bytes.includes(Buffer.from('[Content_Types].xml')) && !bytes.includes(Buffer.from('xl/')) && !bytes.includes(Buffer.from('ppt/')))) return 'docx';
    throw refuse(415, 'unsupported_file_type', 'the file is a zip archive but not a DOCX document');
  }
  if (!isText(bytes)) throw refuse(415, 'unsupported_file_type', 'the file is neither a PDF, a DOCX nor text (Markdown, plain text, HTML, CSV)');
  const text = decodeText(bytes).slice(0, 4096);
  const lower = name.toLowerCase();
  const type = declaredType.split(';')[0]!.trim().toLowerCase();
  if (/^\s*(<!doctype html|<html[\s>]|<head[\s>]|<body[\s>])/i.test(text) || (/<\/(p|div|h[1-6]|li|table|body)>/i.test(text) && /^\s*</.test(text))) return 'html';
  if (lower.endsWith('.csv') || type === 'text/csv') return 'csv';
  if (/\.(md|markdown)$/.test(lower) || type === 'text/markdown' || /^#{1,6} \S/m.test(text)) return 'markdown';
  return 'text';
}

/** Text has no NUL byte and few control characters in its first 8 KiB. */
function isText(bytes: Buffer): boolean {
  const head = bytes.subarray(0, 8192);
  let control = 0;
  for (const b of head) {
    if (b === 0) return false;
    if (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d && b !== 0x0c) control++;
  }
  return control <= head.length / 100;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });
const LATIN = new TextDecoder('windows-1252');

/** UTF-8 (a byte order mark dropped), or Windows-1252 for the text a spreadsheet exported in it. */
export function decodeText(bytes: Buffer): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    return LATIN.decode(bytes);
  }
}

type PdfJs = typeof PdfJsModule;
let pdfjs: Promise<PdfJs> | undefined;
/** pdf.js, loaded on the first PDF (its legacy build runs in Node without a DOM). */
const loadPdfJs = () => pdfjs ??= import('pdfjs-dist/legacy/build/pdf.mjs');

async function openPdf(bytes: Buffer) {
  const { getDocument } = await loadPdfJs();
  const task = getDocument({
    data: new Uint8Array(bytes), isEvalSupported: false, disableFontFace: true, useSystemFonts: false, verbosity: 0, stopAtErrors: true,
  });
  try {
    return await task.promise;
  } catch (err) {
    await task.destroy().catch(() => undefined);
    if ((err as Error).name === 'PasswordException') throw refuse(422, 'encrypted_file', 'the PDF is password-protected');
    throw unreadable('the PDF is damaged and cannot be read');
  }
}

async function inspectPdf(bytes: Buffer, limits: Limits): Promise<void> {
  const doc = await openPdf(bytes);
  try {
    const { info } = await doc.getMetadata().catch(() => ({ info: {} }));
    // Encrypted with an empty user password opens, but its owner asked that it not be copied from.
    if ((info as { EncryptFilterName?: string | null }).EncryptFilterName) throw refuse(422, 'encrypted_file', 'the PDF is encrypted');
    if (doc.numPages > limits.maxPages) throw refuse(413, 'file_too_large', `the PDF has ${doc.numPages} pages, over the limit of ${limits.maxPages}`);
    // Its first page is read now: a file damaged past its header is refused here rather than after the upload.
    const page = await doc.getPage(1).catch(() => null);
    if (!page || !(await page.getTextContent().then(() => true, () => false))) throw unreadable('the PDF is damaged and cannot be read');
  } finally {
    await doc.destroy();
  }
}

/**
 * Unpacks a DOCX, counting what each part really inflates to (the sizes a zip declares can lie): past the unpacked limit,
 * or a part of over a MiB inflating more than `maxPackRatio` times its packed size, it is a zip bomb and refused.
 */
/** fflate, required on the first DOCX (its CommonJS build, the same release's code as its ES module; issue 48). */
let fflate: typeof Fflate | undefined;

function unpackDocx(bytes: Buffer, limits: Limits): Map<string, Buffer> {
  fflate ??= createRequire(import.meta.url)('fflate') as typeof Fflate;
  const { Unzip, UnzipInflate, UnzipPassThrough } = fflate;
  const files = new Map<string, Buffer>();
  let total = 0;
  let refusal: AppError | null = null;
  const unzip = new Unzip((file) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    file.ondata = (err, chunk, final) => {
      if (refusal) return;
      if (err) {
        refusal = unreadable('the DOCX is damaged and cannot be read');
        return;
      }
      size += chunk.length;
      total += chunk.length;
      if (total > limits.maxUnpackedBytes || (size > 1024 * 1024 && size > limits.maxPackRatio * Math.max(file.size ?? bytes.length, 1))) {
        refusal = refuse(422, 'unsafe_file', `the DOCX unpacks to far more than its size (over ${limits.maxPackRatio} times, or over ${limits.maxUnpackedBytes} bytes)`);
        file.terminate();
        return;
      }
      chunks.push(chunk);
      if (final) files.set(file.name, Buffer.concat(chunks));
    };
    try {
      file.start();
    } catch {
      refusal ??= unreadable('the DOCX uses a compression it may not');
    }
  });
  unzip.register(UnzipInflate);
  unzip.register(UnzipPassThrough);
  try {
    unzip.push(bytes, true);
  } catch {
    refusal ??= unreadable('the DOCX is damaged and cannot be read');
  }
  if (refusal) throw refusal;
  if (!files.has('word/document.xml')) throw unreadable('the DOCX holds no document (word/document.xml)');
  return files;
}

/** A CSV's records (the first is its header); throws the 4xx problem when it does not parse or is over the row limit. */
function csvRows(text: string, limits: Limits): string[][] {
  let rows: string[][];
  try {
    rows = parseCsv(text, { bom: true, skip_empty_lines: true, relax_column_count: true, trim: true, delimiter: csvDelimiter(text) }) as string[][];
  } catch (err) {
    throw unreadable(`the CSV does not parse: ${(err as Error).message.slice(0, 200)}`);
  }
  if (rows.length - 1 > limits.maxRows) throw refuse(413, 'file_too_large', `the CSV has ${rows.length - 1} rows, over the limit of ${limits.maxRows}`);
  if (rows.length < 2) throw unreadable('the CSV needs a header line and at least one row');
  return rows;
}

/** Comma, semicolon (a spreadsheet in a comma-decimal locale) or tab: the one the header line uses most. */
function csvDelimiter(text: string): string {
  const header = text.split(/\r?\n/, 1)[0] ?? '';
  return [',', ';', '\t'].map((d) => ({ d, n: header.split(d).length })).sort((a, b) => b.n - a.n)[0]!.d;
}

/** The parts of a file, in order. Throws an Error with a reason a person can read when it cannot be read. */
export async function extractFile(bytes: Buffer, kind: KnowledgeFileKind, name: string, limits: Limits = KNOWLEDGE_FILE_LIMITS): Promise<FilePart[]> {
  switch (kind) {
    case 'pdf': return pdfPages(bytes, name);
    case 'docx': return sectionsOf(name, await docxText(bytes, limits));
    case 'html': return sectionsOf(name, extractHtml(decodeText(bytes), `https://file.invalid/${encodeURIComponent(name)}`).text);
    case 'markdown': return sectionsOf(name, markdownText(decodeText(bytes)));
    case 'text': return sectionsOf(name, decodeText(bytes).replace(/\r\n?/g, '\n'));
    case 'csv': return csvParts(name, csvRows(decodeText(bytes), limits));
  }
}

/** Each page's text, lines kept; a page without text (a scan) is left out. */
async function pdfPages(bytes: Buffer, name: string): Promise<FilePart[]> {
  const doc = await openPdf(bytes);
  try {
    const parts: FilePart[] = [];
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      let text = '';
      for (const item of content.items) {
        if (!('str' in item)) continue;
        text += item.str + (item.hasEOL ? '\n' : '');
      }
      page.cleanup();
      text = text.replace(/[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim();
      const title = `${citedName(name)} › page ${n}`;
      if (text) parts.push({ url: filePageUrl(name, { page: n }), title, text, sectionTitle: title });
    }
    return parts;
  } finally {
    await doc.destroy();
  }
}

async function docxText(bytes: Buffer, limits: Limits): Promise<string> {
  // Checked again here: the parse reads what was stored, and mammoth unpacks it whole.
  unpackDocx(bytes, limits);
  const mammoth = await import('mammoth');
  const { value } = await (mammoth.default ?? mammoth).convertToHtml({ buffer: bytes });
  return extractHtml(`<!doctype html><html><body><main>${value}</main></body></html>`, 'https://file.invalid/').text;
}

/** Markdown as the chunker reads it: ATX headings kept, links as their text, emphasis and code fences dropped. */
function markdownText(text: string): string {
  return text.replace(/\r\n?/g, '\n')
    .replace(/^(.+)\n=+\s*$/gm, '# $1').replace(/^(.+)\n-+\s*$/gm, '## $1')
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/^```.*$/gm, '').replace(/(\*\*|__)(.+?)\1/g, '$2').replace(/(^|\s)[*_](\S.*?\S|\S)[*_](?=\s|[.,;:!?]|$)/gm, '$1$2')
    .replace(/^\s*>\s?/gm, '').replace(/^\s*[-*+]\s+/gm, '- ');
}

const HEADING = /^(#{1,6}) (.+)$/;

/**
 * A document's text cut at its top-level headings: each part is cited by its heading ("Handbook, Returns"), the text
 * before the first heading by the file's name alone.
 */
function sectionsOf(name: string, text: string): FilePart[] {
  const lines = text.split('\n');
  const levels = lines.map((l) => HEADING.exec(l.trim())?.[1]!.length).filter((n): n is number => n !== undefined);
  // The highest level that cuts the text in two or more (a document under one title is cut at its chapters).
  const top = [...new Set(levels)].sort((a, b) => a - b).find((l) => levels.filter((x) => x === l).length > 1) ?? (levels.length ? Math.min(...levels) : 0);
  const parts: { heading: string | null; lines: string[] }[] = [{ heading: null, lines: [] }];
  for (const line of lines) {
    const h = HEADING.exec(line.trim());
    if (h && h[1]!.length === top) parts.push({ heading: h[2]!.trim(), lines: [] });
    parts.at(-1)!.lines.push(line);
  }
  const cited = citedName(name);
  return parts
    .map((p) => ({ ...p, text: p.lines.join('\n').replace(/\n{3,}/g, '\n\n').trim() }))
    .filter((p) => p.text.replace(/^#{1,6} .*$/gm, '').trim())
    .map((p, i) => ({
      url: filePageUrl(name, { part: i + 1, heading: p.heading }),
      title: p.heading ? `${cited} › ${p.heading}` : cited,
      text: p.text,
      sectionTitle: cited,
    }));
}

const CSV_ROWS_PER_PART = 50;

/** Each row as one line of "Column: value" pairs, fifty rows a part, cited by their row numbers. */
function csvParts(name: string, rows: string[][]): FilePart[] {
  const [header, ...records] = rows;
  const cited = citedName(name);
  const parts: FilePart[] = [];
  for (let start = 0; start < records.length; start += CSV_ROWS_PER_PART) {
    const slice = records.slice(start, start + CSV_ROWS_PER_PART);
    const text = slice.map((r) => r.map((v, i) => (v ? `${header![i] || `Column ${i + 1}`}: ${v}` : '')).filter(Boolean).join('; ') + '.').join('\n');
    const heading = `rows ${start + 1}-${start + slice.length}`;
    parts.push({ url: filePageUrl(name, { part: parts.length + 1, heading }), title: `${cited} › ${heading}`, text, sectionTitle: `${cited} › ${heading}` });
  }
  return parts;
}
