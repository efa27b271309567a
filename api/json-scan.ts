import type { FieldError } from '../src/validation.ts';

/**
 * Checks over a parsed JSON body, written as loops over an explicit stack rather than as
 * recursion: a body is at most 1 MiB, which is room for half a million nested arrays, far more
 * than the call stack holds.
 */

/** How deep objects and arrays may nest in a request body; the body itself is level 1. */
export const MAX_JSON_DEPTH = 32;

/** Where a value sits in the body: its key or index and its parent's place. */
interface Place { parent: Place | null; key: string | number }

/** `phone_settings.k[0][1]`, the form the `field` of `errors[]` uses; '' for the body itself. */
function fieldOf(place: Place | null): string {
  const keys: (string | number)[] = [];
  for (let p = place; p; p = p.parent) keys.push(p.key);
  return keys.reverse().reduce<string>((path, key) => (typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${key}` : key), '');
}

/** The children of an object or array, in document order; none for anything else. */
function children(value: unknown, place: Place | null): { value: unknown; place: Place }[] {
  if (Array.isArray(value)) return value.map((item, i) => ({ value: item, place: { parent: place, key: i } }));
  if (value && typeof value === 'object') return Object.entries(value).map(([key, item]) => ({ value: item, place: { parent: place, key } }));
  return [];
}

/** The 400 for a body nested deeper than MAX_JSON_DEPTH, naming where it first goes too deep; null when it does not. */
export function nestingError(body: unknown): FieldError | null {
  const stack: { value: unknown; place: Place | null; depth: number }[] = [{ value: body, place: null, depth: 1 }];
  for (let top = stack.pop(); top; top = stack.pop()) {
    if (!top.value || typeof top.value !== 'object') continue;
    if (top.depth > MAX_JSON_DEPTH) {
      const field = fieldOf(top.place);
      return { field, code: 'too_deep', message: `${field || 'body'}: objects and arrays may nest at most ${MAX_JSON_DEPTH} levels deep` };
    }
    for (const child of children(top.value, top.place).reverse()) stack.push({ ...child, depth: top.depth + 1 });
  }
  return null;
}

/** PostgreSQL text cannot hold U+0000: every string and property name holding one, in document order. */
export function nulCharacterErrors(body: unknown): FieldError[] {
  const out: FieldError[] = [];
  const stack: { value: unknown; place: Place | null }[] = [{ value: body, place: null }];
  for (let top = stack.pop(); top; top = stack.pop()) {
    const field = () => fieldOf(top!.place);
    if (typeof top.value === 'string') {
      if (top.value.includes('\u0000')) out.push({ field: field(), code: 'invalid_characters', message: `${field() || 'body'} must not contain the NUL character` });
      continue;
    }
    const next = children(top.value, top.place).filter((child) => {
      if (typeof child.place.key !== 'string' || !child.place.key.includes('\u0000')) return true;
      out.push({ field: field(), code: 'invalid_characters', message: 'property names must not contain the NUL character' });
      return false;
    });
    for (const child of next.reverse()) stack.push(child);
  }
  return out;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const wellFormed = (text: string) => text.replace(LONE_SURROGATE, '\ufffd');

/**
 * The body with every lone surrogate (a `\ud800` escape JSON allows but Unicode text cannot hold)
 * in its strings and property names replaced by U+FFFD, as UTF-8 encoding does for text columns;
 * jsonb refuses the escape outright. Call it after the nesting check: it recurses.
 */
export function withWellFormedText(body: unknown): unknown {
  if (typeof body === 'string') return wellFormed(body);
  if (Array.isArray(body)) return body.map(withWellFormedText);
  if (body && typeof body === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(body)) {
      // defineProperty: a key named __proto__ stays an own property, as JSON.parse made it.
      Object.defineProperty(out, wellFormed(key), { value: withWellFormedText(value), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return body;
}

/** Whether JSON text holds an escape that may be a lone surrogate (most bodies do not: skip the walk). */
export const mayHoldLoneSurrogate = (text: string): boolean => /\\u[dD][89a-fA-F]/.test(text);
