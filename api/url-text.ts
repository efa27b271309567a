import type { FieldError } from '../src/validation.ts';

/**
 * The text a request carries outside a JSON body (the path, the query string, a form-encoded
 * body, a CSV body) must hold what a JSON body may: percent-encoding that decodes to UTF-8 (no
 * `%FF`, no encoded surrogate, no stray `%`) and no U+0000, which PostgreSQL text cannot store.
 * Koa, the router and URLSearchParams decode leniently (a bad sequence stays as it is, or becomes
 * U+FFFD), so the raw text is checked here, strictly. The JSON body has its own walk
 * (`json-scan.ts`, `nulCharacterErrors`); these are the checks of every other kind of text.
 */

type Decoded = { text: string } | { error: 'invalid_encoding' };

function decode(raw: string): Decoded {
  try {
    return { text: decodeURIComponent(raw) };
  } catch {
    return { error: 'invalid_encoding' };
  }
}

const NUL = '\u0000';

/**
 * Field errors of form-encoded text (`a=1&b=2`: a query string, or an
 * `application/x-www-form-urlencoded` body): a value is reported under its name, a bad name
 * under `where` (`query` or `body`).
 */
export function formTextErrors(raw: string, where: 'query' | 'body'): FieldError[] {
  if (!raw.includes('%') && !raw.includes(NUL)) return [];
  const errors: FieldError[] = [];
  for (const pair of raw.split('&')) {
    if (!pair) continue;
    const eq = pair.indexOf('=');
    const name = decode((eq < 0 ? pair : pair.slice(0, eq)).replace(/\+/g, ' '));
    const value = decode((eq < 0 ? '' : pair.slice(eq + 1)).replace(/\+/g, ' '));
    if ('error' in name || name.text.includes(NUL)) {
      errors.push({ field: where, code: 'error' in name ? 'invalid_encoding' : 'invalid_characters', message: `${where === 'query' ? 'query parameter' : 'form field'} names must be percent-encoded UTF-8 without the NUL character` });
    } else if ('error' in value) {
      errors.push({ field: name.text, code: 'invalid_encoding', message: `${name.text} must be percent-encoded UTF-8` });
    } else if (value.text.includes(NUL)) {
      errors.push({ field: name.text, code: 'invalid_characters', message: `${name.text} must not contain the NUL character` });
    }
  }
  return errors;
}

/** 400 field errors for the raw path (field `path`) and query string (field: the parameter's name). */
export function requestLineErrors(rawPath: string, rawQuery: string): FieldError[] {
  // Without a percent sign nothing is encoded: every segment decodes to itself, with no NUL in it.
  if (!rawPath.includes('%') && !rawQuery.includes('%') && !rawPath.includes(NUL) && !rawQuery.includes(NUL)) return [];
  const errors: FieldError[] = [];
  const segments = rawPath.split('/').map(decode);
  if (segments.some((s) => 'error' in s)) {
    errors.push({ field: 'path', code: 'invalid_encoding', message: 'the path must be percent-encoded UTF-8' });
  } else if (segments.some((s) => 'text' in s && s.text.includes(NUL))) {
    errors.push({ field: 'path', code: 'invalid_characters', message: 'the path must not contain the NUL character' });
  }
  errors.push(...formTextErrors(rawQuery, 'query'));
  return errors;
}

/**
 * The error of decoded body text (a CSV body) holding U+0000, naming its line; null when it holds none.
 * (A body that is not UTF-8 at all is refused where its bytes are decoded, strictly.)
 */
export function bodyTextError(text: string, what: string): FieldError | null {
  const at = text.indexOf(NUL);
  if (at < 0) return null;
  const line = text.slice(0, at).split('\n').length;
  return { field: 'body', code: 'invalid_characters', message: `${what} must not contain the NUL character (line ${line})` };
}
