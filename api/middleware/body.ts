import getRawBody from 'raw-body';
import { AppError, validationError } from '../../src/errors.ts';
import { mayHoldLoneSurrogate, nestingError, withWellFormedText } from '../json-scan.ts';
import type { AppContext } from '../context.ts';
import { bodyTextError, formTextErrors } from '../url-text.ts';
import type { FieldError } from '../../src/validation.ts';

export const MAX_BODY_BYTES = 1024 * 1024;

/** Strict: a byte sequence that is not UTF-8 is an error, not a U+FFFD (a leading byte order mark is dropped). */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Whether the request carries a body (a length other than 0, or chunked): one without it has nothing to read. */
export function hasBody(ctx: AppContext): boolean {
  // Read as Koa's ctx.get reads them (`|| ''`), from Node's headers without its delegates: every request asks (issue 48).
  const headers = ctx.req.headers;
  const length = headers['content-length'] || '';
  return (headers['transfer-encoding'] || '') !== '' || (length !== '' && length !== '0');
}

function isJsonType(contentType: string): boolean {
  const essence = contentType.split(';')[0]!.trim().toLowerCase();
  return essence === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(essence);
}

/** Whether the request sends a `text/csv` body. */
export function isCsvRequest(ctx: AppContext): boolean {
  return hasBody(ctx) && ctx.get('Content-Type').split(';')[0]!.trim().toLowerCase() === 'text/csv';
}

async function readBytes(ctx: AppContext, unreadable: 'invalid_json' | 'validation_error', limit = MAX_BODY_BYTES): Promise<Buffer> {
  try {
    return await getRawBody(ctx.req, { limit, length: ctx.get('Content-Length') || undefined });
  } catch (err) {
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large') throw new AppError(413, 'payload_too_large', `the body exceeds ${limit} bytes`);
    if (type === 'request.size.invalid' || type === 'request.aborted') throw new AppError(400, unreadable, 'the body could not be read');
    throw err;
  }
}

/**
 * Reads a `text/csv` body as UTF-8 text (413 past 1 MiB; 400 `validation_error` when it is not
 * UTF-8, code `invalid_encoding`, or holds U+0000, code `invalid_characters`, as a JSON string may not).
 */
export async function readCsvBody(ctx: AppContext): Promise<string> {
  const bytes = await readBytes(ctx, 'validation_error');
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw validationError([{ field: '', code: 'invalid_encoding', message: 'the CSV body is not valid UTF-8' }]);
  }
  const nul = bodyTextError(text, 'the CSV body');
  if (nul) throw validationError([nul]);
  return text;
}

/**
 * Reads an `application/x-www-form-urlencoded` body's bytes, at most `limit` (413 past it): the
 * caller may verify a signature over the fields first, then check the bytes with `formBodyErrors`.
 */
export function readFormBytes(ctx: AppContext, limit: number): Promise<Buffer> {
  return readBytes(ctx, 'validation_error', limit);
}

/** The 400 field errors of a form-encoded body's bytes: not UTF-8, a field not percent-encoded UTF-8, or U+0000 in one. */
export function formBodyErrors(bytes: Buffer): FieldError[] {
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    return [{ field: 'body', code: 'invalid_encoding', message: 'the form body is not valid UTF-8' }];
  }
  return formTextErrors(text, 'body');
}

/**
 * Reads and parses a JSON body: 415 for another media type, 413 past 1 MiB, 400 `invalid_json`
 * when it is not UTF-8 or does not parse, 400 `validation_error` (`too_deep`) when it nests deeper than
 * MAX_JSON_DEPTH. A request without a body yields `undefined`.
 */
export async function readJsonBody(ctx: AppContext): Promise<unknown> {
  if (!hasBody(ctx)) return undefined;
  if (!isJsonType(ctx.get('Content-Type'))) {
    throw new AppError(415, 'unsupported_media_type', 'send the body as application/json');
  }
  const bytes = await readBytes(ctx, 'invalid_json');
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw new AppError(400, 'invalid_json', 'the body is not valid UTF-8: send JSON text encoded as UTF-8 (RFC 8259)');
  }
  // JSON's own whitespace only: a body of other Unicode spaces is a body, and not JSON.
  if (/^[ \t\r\n]*$/.test(text)) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(text) as unknown;
  } catch (err) {
    throw new AppError(400, 'invalid_json', `the body is not valid JSON: ${(err as Error).message}`);
  }
  // Before anything walks it: every later check, merge and serialization may then recurse safely.
  const tooDeep = nestingError(body);
  if (tooDeep) throw validationError([tooDeep]);
  return mayHoldLoneSurrogate(text) ? withWellFormedText(body) : body;
}
