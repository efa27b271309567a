import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { pipeline, type Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { undici } from '../net/undici.ts';

/** One HTTP exchange of the crawler: never follows redirects (the caller decides each hop). */

export interface FetchOptions {
  dispatcher: Dispatcher;
  userAgent: string;
  /** Extra request headers (conditional validators). */
  headers?: Record<string, string>;
  /** Bytes of (decoded) body kept at most: past it the body is cut off and the connection dropped. */
  maxBytes: number;
  /** Whether to read the body of a response with this status and content type (else it is discarded). */
  wantBody: (status: number, contentType: string) => boolean;
  signal: AbortSignal;
  /** Time allowed for the headers, and between two body chunks. */
  timeoutMs: number;
  accept?: string;
}

export interface FetchedResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  /** Lower-case media type without parameters, '' when absent. */
  contentType: string;
  /** Charset parameter of Content-Type, lower case, or null. */
  charset: string | null;
  /** The body when wanted, else null. */
  body: Buffer | null;
  /** The body was longer than maxBytes and was cut off there. */
  truncated: boolean;
}

const DEFAULT_ACCEPT = 'text/html,application/xhtml+xml;q=0.9,text/plain;q=0.8,*/*;q=0.1';

/** First value of a header. */
export function header(headers: FetchedResponse['headers'], name: string): string | null {
  const v = headers[name];
  return (Array.isArray(v) ? v[0] : v) ?? null;
}

function parseContentType(value: string | null): { type: string; charset: string | null } {
  if (!value) return { type: '', charset: null };
  const [type, ...params] = value.split(';');
  let charset: string | null = null;
  for (const p of params) {
    const [k, v] = p.split('=');
    if (k?.trim().toLowerCase() === 'charset' && v) charset = v.trim().replace(/^"|"$/g, '').toLowerCase();
  }
  return { type: type!.trim().toLowerCase(), charset };
}

/** The decoded body stream: Content-Encoding undone, so the byte cap applies to what is parsed (no zip bombs). */
function decoded(body: Readable, encoding: string | null): Readable {
  const codec = encoding?.trim().toLowerCase();
  const inflate = codec === 'gzip' || codec === 'x-gzip' ? createGunzip()
    : codec === 'deflate' ? createInflate()
      : codec === 'br' ? createBrotliDecompress() : null;
  // pipeline (not pipe) so that an error of the network stream reaches the reader.
  return inflate ? pipeline(body, inflate, () => undefined) : body;
}

/** Reads at most `max` bytes; true in `truncated` when there was more. */
async function readCapped(stream: Readable, max: number): Promise<{ body: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    if (size + chunk.length > max) {
      chunks.push(chunk.subarray(0, max - size));
      size = max;
      stream.destroy();
      return { body: Buffer.concat(chunks, size), truncated: true };
    }
    chunks.push(chunk);
    size += chunk.length;
  }
  return { body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size), truncated: false };
}

/**
 * GET `url` once. Bodies that are not wanted are drained up to a small limit (so the
 * keep-alive connection can be reused) or dropped. Network errors, timeouts and aborts reject.
 */
export async function fetchOnce(url: string, opts: FetchOptions): Promise<FetchedResponse> {
  const res = await undici().request(url, {
    method: 'GET',
    dispatcher: opts.dispatcher,
    signal: opts.signal,
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
    headers: {
      'user-agent': opts.userAgent,
      accept: opts.accept ?? DEFAULT_ACCEPT,
      'accept-encoding': 'gzip, deflate, br',
      ...opts.headers,
    },
  });
  const { type, charset } = parseContentType(header(res.headers, 'content-type'));
  const base = { statusCode: res.statusCode, headers: res.headers, contentType: type, charset };
  if (!opts.wantBody(res.statusCode, type)) {
    await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
    return { ...base, body: null, truncated: false };
  }
  const stream = decoded(res.body, header(res.headers, 'content-encoding'));
  try {
    const { body, truncated } = await readCapped(stream, opts.maxBytes);
    return { ...base, body, truncated };
  } catch (err) {
    res.body.destroy();
    throw err;
  }
}

/**
 * Windows-1252 bytes 0x80-0x9F (the rest is Latin-1). Node's TextDecoder decodes the label (and
 * `iso-8859-1`, which WHATWG maps to it) as Latin-1, turning curly quotes into C1 controls.
 */
const CP1252_HIGH = '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f'
  + '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

/**
 * Decodes an HTML or text body: the Content-Type charset, else a byte order mark, else a
 * `<meta charset>` in the first 1024 bytes (the HTML sniffing window), else UTF-8.
 */
export function decodeBody(body: Buffer, charset: string | null, html: boolean): string {
  let label = charset;
  if (!label && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) label = 'utf-8';
  if (!label && html) {
    const head = body.subarray(0, 1024).toString('latin1');
    label = /<meta[^>]+charset\s*=\s*["']?\s*([\w-]+)/i.exec(head)?.[1]?.toLowerCase() ?? null;
  }
  if (!label || label === 'utf-8' || label === 'utf8') return body.toString('utf8');
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(label);
  } catch {
    return body.toString('utf8');
  }
  if (decoder.encoding === 'windows-1252') {
    return body.toString('latin1').replace(/[\u0080-\u009f]/g, (c) => CP1252_HIGH[c.charCodeAt(0) - 0x80]!);
  }
  return decoder.decode(body);
}
