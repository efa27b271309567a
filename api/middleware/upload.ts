import { createRequire } from 'node:module';
import type Busboy from 'busboy';
import { AppError, validationError } from '../../src/errors.ts';
import type { AppContext } from '../context.ts';

/** A file sent as `multipart/form-data`: its bytes, the name and type the client gave, and the form's other fields. */
export interface Upload { fileName: string; contentType: string; bytes: Buffer; fields: Record<string, string> }

/** Whether the request sends a `multipart/form-data` body. */
export function isMultipartRequest(ctx: AppContext): boolean {
  return ctx.get('Content-Type').split(';')[0]!.trim().toLowerCase() === 'multipart/form-data';
}

const FIELD_BYTES = 1024;

/** busboy, required on the first upload (CommonJS, the module the import loaded): an idle service reads none (issue 48). */
let loaded: typeof Busboy | undefined;
const busboy: typeof Busboy = (config) => (loaded ??= createRequire(import.meta.url)('busboy') as typeof Busboy)(config);

/**
 * Reads a `multipart/form-data` body holding one file part (its field named `file`) and a few short text fields:
 * 413 `file_too_large` past `maxBytes`, 400 `validation_error` for a malformed body, no file, or more than one.
 * The file is read into memory (it is at most `maxBytes`); nothing is written anywhere.
 */
export function readUpload(ctx: AppContext, maxBytes: number): Promise<Upload> {
  return new Promise((resolve, reject) => {
    let parser: Busboy.Busboy;
    try {
      parser = busboy({ headers: ctx.req.headers, defParamCharset: 'utf8', limits: { files: 1, fileSize: maxBytes, fields: 10, fieldSize: FIELD_BYTES, parts: 12 } });
    } catch {
      reject(validationError([{ field: 'file', code: 'invalid_multipart', message: 'the multipart body has no boundary' }]));
      return;
    }
    let file: Upload | null = null;
    let failure: AppError | null = null;
    const fields: Record<string, string> = {};
    const fail = (error: AppError) => {
      failure ??= error;
    };
    parser.on('file', (field, stream, info) => {
      if (field !== 'file') {
        stream.resume();
        fail(validationError([{ field, code: 'unknown_field', message: 'the file goes in the field named "file"' }]));
        return;
      }
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('limit', () => fail(new AppError(413, 'file_too_large', `the file is over ${maxBytes} bytes`)));
      stream.on('end', () => {
        file = { fileName: info.filename ?? '', contentType: info.mimeType || 'application/octet-stream', bytes: Buffer.concat(chunks), fields };
      });
    });
    parser.on('field', (name, value, info) => {
      if (info.valueTruncated) fail(validationError([{ field: name, code: 'too_long', message: `${name} is over ${FIELD_BYTES} bytes` }]));
      fields[name] = value;
    });
    parser.on('filesLimit', () => fail(validationError([{ field: 'file', code: 'too_many_files', message: 'send one file per request' }])));
    parser.on('error', () => reject(failure ?? validationError([{ field: 'file', code: 'invalid_multipart', message: 'the multipart body is malformed' }])));
    parser.on('close', () => {
      if (failure) reject(failure);
      else if (!file) reject(validationError([{ field: 'file', code: 'required', message: 'send the file in a form field named "file"' }]));
      else resolve(file);
    });
    ctx.req.on('aborted', () => reject(new AppError(400, 'validation_error', 'the body could not be read')));
    ctx.req.pipe(parser);
  });
}
