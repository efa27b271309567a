import type { FieldError } from '../src/validation.ts';

/**
 * The text a request line carries must hold what a body may: percent-encoding that decodes to
 * UTF-8 (no `%FF`, no encoded surrogate, no stray `%`) and no U+0000, which PostgreSQL text
 * cannot store. Koa and the router decode leniently (a bad sequence stays as it is, or becomes
 * U+FFFD), so the raw path and query string are checked here, strictly.
 */

type Decoded = { text: string } | { error: 'invalid_encoding' };

function decode(raw: string): Decoded {
  try {
    return { text: decodeURIComponent(raw) };
  } catch {
    return { error: 'invalid_encoding' };
  }
}

/** 400 field errors for the raw path (field `path`) and query string (field: the parameter's name). */
export function requestLineErrors(rawPath: string, rawQuery: string): FieldError[] {
  // Without a percent sign nothing is encoded: every segment decodes to itself, with no NUL in it.
  if (!rawPath.includes('%') && !rawQuery.includes('%') && !rawPath.includes('\u0000') && !rawQuery.includes('\u0000')) return [];
  const errors: FieldError[] = [];
  const segments = rawPath.split('/').map(decode);
  if (segments.some((s) => 'error' in s)) {
    errors.push({ field: 'path', code: 'invalid_encoding', message: 'the path must be percent-encoded UTF-8' });
  } else if (segments.some((s) => 'text' in s && s.text.includes('\u0000'))) {
    errors.push({ field: 'path', code: 'invalid_characters', message: 'the path must not contain the NUL character' });
  }
  for (const pair of rawQuery.split('&')) {
    if (!pair) continue;
    const eq = pair.indexOf('=');
    const name = decode((eq < 0 ? pair : pair.slice(0, eq)).replace(/\+/g, ' '));
    const value = decode((eq < 0 ? '' : pair.slice(eq + 1)).replace(/\+/g, ' '));
    if ('error' in name || name.text.includes('\u0000')) {
      errors.push({ field: 'query', code: 'error' in name ? 'invalid_encoding' : 'invalid_characters', message: 'query parameter names must be percent-encoded UTF-8 without the NUL character' });
    } else if ('error' in value) {
      errors.push({ field: name.text, code: 'invalid_encoding', message: `${name.text} must be percent-encoded UTF-8` });
    } else if (value.text.includes('\u0000')) {
      errors.push({ field: name.text, code: 'invalid_characters', message: `${name.text} must not contain the NUL character` });
    }
  }
  return errors;
}
