import fc from 'fast-check';
import { expect } from 'vitest';
import type { ApiResponse } from '../helpers.ts';
import { expectWellFormedProblem } from './problems.ts';

/**
 * The fuzz engine: generators of request bodies and query strings derived from the very JSON
 * Schemas the routes validate with. Walking a schema gives both valid values and near-miss invalid
 * ones (wrong types, out-of-range values, over-long strings, unknown keys, nulls, nested junk,
 * unicode), each invalid one knowing which field it broke.
 *
 * Every shape the schemas use is walked: Nullable unions, nested objects, arrays of objects, unique
 * items, `Type.Record` dictionaries (and `Type.Unknown()` values), anchored patterns (hex color,
 * language tag, E.164) generated from the pattern itself.
 */

export const MIB = 1024 * 1024;
/** Set FUZZ_SEED to replay a failure fast-check reported; FUZZ_RUNS scales every property. */
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
const SCALE = process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : 1;

export type Json = unknown;
export type Schema = Record<string, any>;
export type Body = Record<string, Json>;

export async function property<T>(arb: fc.Arbitrary<T>, predicate: (value: T) => Promise<void>, numRuns: number): Promise<void> {
  await fc.assert(fc.asyncProperty(arb, predicate), {
    numRuns: Math.max(1, Math.round(numRuns * SCALE)),
    seed: SEED,
    // Bounded: shrinking a failure against a live service must not run for minutes.
    interruptAfterTimeLimit: 40_000,
    markInterruptAsFailure: false,
  });
}

// ---------------------------------------------------------------------------------------------
// Checks

export function expectNo5xx(res: ApiResponse, what: string): void {
  expect(res.status, `${what} -> ${res.status} ${res.text.slice(0, 500)}`).toBeLessThan(500);
}

/** A 400 validation_error naming at least one of `fields` (with `code` when given). */
export function expectValidationError(res: ApiResponse, fields: string[], what: string, code?: string): void {
  const context = `${what} -> ${res.status} ${res.text.slice(0, 800)}`;
  expect(res.status, context).toBe(400);
  const body = expectWellFormedProblem(res, what);
  expect(body.code, context).toBe('validation_error');
  const named = (body.errors as { field: string; code: string }[]).filter((e) => fields.includes(e.field));
  expect(named.length > 0, `${context}\nexpected errors[] to name one of ${JSON.stringify(fields)}`).toBe(true);
  if (code !== undefined) expect(named.map((e) => e.code), `${context}\nexpected the error on ${JSON.stringify(fields)} to be ${code}`).toContain(code);
}

export const show = (value: unknown) => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 300 ? `${text.slice(0, 300)}…(${text.length} chars)` : text;
};

// ---------------------------------------------------------------------------------------------
// Generators derived from the JSON Schemas

const codePoints = (s: string) => [...s].length;
/** What UTF-8 storage makes of a string: a lone surrogate becomes U+FFFD. */
export const wellFormed = (s: string) => s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
const withoutNul = (s: string) => s.split('\u0000').join('');

/** Every string of a JSON value (object keys too) through `f`. */
export function mapStrings(value: Json, f: (s: string) => string): Json {
  if (typeof value === 'string') return f(value);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, f));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [f(k), mapStrings(v, f)]));
  return value;
}

/** What the service stores of a value: its JSON form (so -0 is 0), lone surrogates as U+FFFD. */
export const stored = (v: Json): Json => (v === undefined ? v : mapStrings(JSON.parse(JSON.stringify(v)), wellFormed));

/**
 * The configuration fields live in a jsonb column, where a lone surrogate makes the service
 * answer 500 (a known bug with a property of its own at the end): their generators avoid them.
 */
export const noLoneSurrogates = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T> => arb.map((v) => mapStrings(v, wellFormed) as T);

const ODD_PIECES = ['😀', 'é', 'e\u0301', '\u202e', '\u200b', 'Ω', '中文', '\ud800', '\udfff', '<script>alert(1)</script>',
  "'; drop table agents; --", '%s%n', '\\', '"', '\n', '\t', '{{name}}', '${x}', '\u{10ffff}', '\ufffd'];

/** Text of `min`..`max` code points: ASCII, graphemes, any code point, odd pieces, and lengths at the bound. */
export function text(min: number, max: number, opts: { nul?: boolean } = {}): fc.Arbitrary<string> {
  const piece = fc.oneof(
    fc.string({ unit: 'grapheme-ascii', maxLength: Math.min(max, 40) }),
    fc.string({ unit: 'grapheme', maxLength: Math.min(max, 12) }),
    fc.string({ unit: 'binary', maxLength: Math.min(max, 12) }),
    fc.constantFrom(...ODD_PIECES),
  );
  const atBound = fc.tuple(fc.constantFrom('x', 'é', '😀', '中'), fc.integer({ min: Math.max(min, max - 2), max }))
    .map(([c, n]) => c.repeat(n));
  return fc.oneof({ weight: 6, arbitrary: fc.array(piece, { maxLength: 4 }).map((p) => p.join('')) }, { weight: 1, arbitrary: atBound })
    .map((s) => (opts.nul ? s : withoutNul(s)))
    .map((s) => (codePoints(s) > max ? [...s].slice(0, max).join('') : s))
    .filter((s) => codePoints(s) >= min);
}

const httpUrl = (max: number) => fc.oneof(
  fc.webUrl({ validSchemes: ['http', 'https'], withQueryParameters: true, withFragments: true }),
  fc.constant(`https://example.com/${'a'.repeat(max - 'https://example.com/'.length)}`),
  fc.constantFrom('http://example.com', 'https://example.com/', 'https://EXAMPLE.COM/Path?q=1#f', 'https://xn--r8jz45g.jp/', 'http://93.184.216.34:8080/x'),
).filter((u) => u.length <= max);

const email = fc.tuple(
  fc.stringMatching(/^[A-Za-z0-9_+-]{1,16}(\.[A-Za-z0-9_+-]{1,8})?$/),
  fc.stringMatching(/^[A-Za-z0-9]{1,12}(-[A-Za-z0-9]{1,5})?\.[A-Za-z]{2,6}$/),
).map(([local, domain]) => `${local}@${domain}`);

export const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Identifiers, the keys of dictionaries (`Type.Record`): at most 64 characters, some named like
 * Object.prototype members. `__proto__` is left to a property of its own at the end.
 */
export const identifier: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,15}$/) },
  { weight: 1, arbitrary: fc.constantFrom('_', 'x', 'API_KEY', 'agent_name_2', '_agent_name', 'agent_names', 'constructor', 'toString', 'hasOwnProperty', `v${'_'.repeat(63)}`) },
).filter((k) => k !== '__proto__');

/** Small JSON values (what `Type.Unknown()` takes): scalars, unicode text, short arrays and objects. */
export const smallJson: fc.Arbitrary<Json> = fc.letrec<{ value: Json }>((tie) => ({
  value: fc.oneof({ maxDepth: 2, depthIdentifier: 'small-json' },
    fc.constant(null), fc.boolean(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), text(0, 20),
    fc.array(tie('value'), { maxLength: 3, depthIdentifier: 'small-json' }),
    fc.dictionary(identifier, tie('value'), { maxKeys: 3, noNullPrototype: true, depthIdentifier: 'small-json' })),
})).value;

/** `{type: ["string", "null"], ...}` (a Nullable field) read as the equivalent `anyOf` union (a nullable enum lists null). */
function norm(s: Schema): Schema {
  if (!Array.isArray(s.type)) return s;
  const { type, enum: values, ...rest } = s;
  const typed = (t: string) => (values ? { ...rest, type: t, enum: (values as Json[]).filter((v) => v !== null) } : { ...rest, type: t });
  return { anyOf: (type as string[]).map((t) => (t === 'null' ? { type: 'null' } : typed(t))) };
}

/** The branches of a schema: those of its union (a Nullable field), or itself. */
const branches = (s: Schema): Schema[] => (norm(s).anyOf as Schema[] | undefined) ?? [norm(s)];
export const branchOf = (s: Schema, type: string): Schema => branches(s).find((b) => b.type === type)!;
/** `Type.Unknown()` is `{}`: it constrains nothing. */
const constrains = (s: Schema) => s.type !== undefined || s.anyOf !== undefined || s.enum !== undefined;
/** The value schema of a `Type.Record` (`patternProperties: {"^(.*)$": ...}`). */
export const recordValue = (s: Schema): Schema => Object.values(s.patternProperties as Record<string, Schema>)[0]!;

/** Types a schema accepts, through `anyOf` unions (the Nullable fields). */
function acceptedTypes(s: Schema): Set<string> {
  s = norm(s);
  if (s.anyOf) return new Set((s.anyOf as Schema[]).flatMap((b) => [...acceptedTypes(b)]));
  return new Set([s.type as string]);
}

/**
 * Strings a string schema accepts. Formats have generators of their own (then filtered by the
 * pattern, as the https-only URLs need); anchored patterns (hex color, language tag, E.164,
 * identifier, uuid) are generated from the pattern itself, which filtering text would rarely hit.
 */
function validString(s: Schema): fc.Arbitrary<string> {
  const min = s.minLength ?? 0;
  const max = s.maxLength ?? 1000;
  const pattern = s.pattern ? new RegExp(s.pattern, 'u') : null;
  const fits = (v: string) => codePoints(v) >= min && codePoints(v) <= max && (!pattern || pattern.test(v));
  if (s.format === 'uri') return httpUrl(max).filter(fits);
  if (s.format === 'email') return email.filter(fits);
  if (s.format === 'date-time') return fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString());
  if (s.format) throw new Error(`no generator for format ${s.format}`);
  if (s.pattern?.startsWith('^')) return fc.stringMatching(new RegExp(s.pattern)).filter(fits);
  const base = text(min, max);
  return pattern ? base.filter(fits) : base;
}

export function validValue(s: Schema): fc.Arbitrary<Json> {
  s = norm(s);
  if (s.anyOf) return fc.oneof(...(s.anyOf as Schema[]).map(validValue));
  if (s.enum) return fc.constantFrom(...(s.enum as Json[]));
  if (!constrains(s)) return smallJson;
  switch (s.type) {
    case 'null': return fc.constant(null);
    case 'boolean': return fc.boolean();
    case 'integer': return fc.integer({ min: s.minimum ?? -1_000_000, max: s.maximum ?? 1_000_000 });
    case 'number': return fc.double({ min: s.minimum ?? -1e9, max: s.maximum ?? 1e9, noNaN: true, noDefaultInfinity: true });
    case 'string': return validString(s);
    case 'array': {
      const maxLength = Math.min(s.maxItems ?? 5, 5);
      if (s.items?.enum && s.uniqueItems) return fc.shuffledSubarray(s.items.enum as Json[], { maxLength: s.maxItems });
      if (s.uniqueItems) return fc.uniqueArray(validValue(s.items), { maxLength, selector: (v) => JSON.stringify(v) });
      return fc.array(validValue(s.items), { maxLength });
    }
    case 'object': return validObject(s);
    default: throw new Error(`no generator for schema ${JSON.stringify(s)}`);
  }
}

/**
 * Objects a schema accepts: a `Type.Record` (patternProperties) as a dictionary with identifier
 * keys, else any subset of the optional properties with every required one. `overrides` replaces
 * the generators of some properties (the fields with rules beyond the schema).
 */
function validObject(s: Schema, overrides: Record<string, fc.Arbitrary<Json>> = {}): fc.Arbitrary<Body> {
  if (s.patternProperties) {
    return fc.dictionary(identifier, validValue(recordValue(s)), { maxKeys: Math.min(s.maxProperties ?? 5, 5), noNullPrototype: true });
  }
  const props = (s.properties ?? {}) as Record<string, Schema>;
  const model = Object.fromEntries(Object.entries(props).map(([k, p]) => [k, overrides[k] ?? validValue(p)]));
  return fc.record(model, { requiredKeys: (s.required ?? []) as string[], noNullPrototype: true }) as fc.Arbitrary<Body>;
}

export const jsonJunk = fc.jsonValue({ maxDepth: 4 });

/** A value of none of the types the schema accepts (an integer schema also refuses fractions). */
function wrongType(s: Schema): fc.Arbitrary<Json> {
  const accepted = acceptedTypes(s);
  const options: fc.Arbitrary<Json>[] = [];
  if (!accepted.has('string')) options.push(fc.string({ maxLength: 10 }), fc.constantFrom('1', 'true', 'null', ''));
  if (!accepted.has('number') && !accepted.has('integer')) options.push(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(0, -1, 1e308));
  else if (!accepted.has('number')) options.push(fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }).filter((x) => !Number.isInteger(x)));
  if (!accepted.has('boolean')) options.push(fc.boolean());
  if (!accepted.has('null')) options.push(fc.constant(null));
  if (!accepted.has('array')) options.push(fc.array(jsonJunk, { maxLength: 3 }));
  if (!accepted.has('object')) options.push(fc.dictionary(fc.string({ maxLength: 8 }), jsonJunk, { maxKeys: 4 }), fc.constant({}));
  return fc.oneof(...options);
}

const WHITESPACE = [' ', '\t', '\n', '\r', '\u00a0', '\u2003', '\u3000', '\ufeff', '\u2028'];
const NOT_HTTP_URLS = ['ftp://example.com/', 'example.com', 'www.example.com/path', '//example.com', 'mailto:x@example.com',
  'javascript:alert(1)', 'http//example.com', 'https:example.com', 'file:///etc/passwd', 'http://exa mple.com/', 'data:text/plain,hi', ' https://example.com', 'https://example.com/\n'];
const NOT_DATE_TIMES = ['2024-01-01', '2024-13-01T00:00:00Z', '2024-01-01T25:00:00Z', '2024-01-01 00:00:00', 'yesterday', '1700000000', '2024-01-01T00:00:00'];
const NOT_EMAILS = ['plainaddress', '@example.com', 'a@', 'a b@example.com', 'a@@example.com', 'a@example', 'a@-example.com', '.a@example.com', 'a@example.com ', 'a@exa_mple.com'];

/**
 * Strings the schema refuses: over maxLength (also huge, unless `short`: a query string travels in
 * the request line, which Node caps at 16 KiB before any of our code runs), under minLength,
 * pattern, format and enum misses.
 */
function invalidStrings(s: Schema, { short = false } = {}): fc.Arbitrary<string>[] {
  const out: fc.Arbitrary<string>[] = [];
  if (s.maxLength !== undefined) {
    out.push(fc.tuple(fc.constantFrom('x', 'é', '😀', ' a'), fc.integer({ min: s.maxLength + 1, max: s.maxLength + 40 }))
      .map(([c, n]) => (c === ' a' ? `a${' '.repeat(n - 1)}` : c.repeat(n))));
    out.push(fc.constant('y'.repeat(short ? s.maxLength * 2 + 1 : Math.max(s.maxLength * 4, 100_000))));
  }
  if ((s.minLength ?? 0) > 0) out.push(fc.constant(''));
  if (s.enum) {
    out.push(fc.string({ maxLength: 12 }).filter((v) => !s.enum.includes(v)));
    out.push(fc.constantFrom(...(s.enum as string[]).flatMap((v) => [v.toUpperCase(), ` ${v}`, `${v}\n`, `${v}s`])).filter((v) => !s.enum.includes(v)));
  }
  if (s.pattern === '\\S') {
    out.push(fc.array(fc.constantFrom(...WHITESPACE), { minLength: Math.max(1, s.minLength ?? 0), maxLength: Math.min(10, s.maxLength ?? 10) }).map((a) => a.join('')));
  } else if (s.pattern) {
    // Near misses of a valid value (`#12345`, `EN`, `+0…`, `http://` where https is required) and random text.
    const pattern = new RegExp(s.pattern, 'u');
    const mutated = fc.tuple(validString(s), fc.constantFrom('upper', 'space', 'suffix', 'truncate', 'http', 'digit')).map(([v, how]) => {
      switch (how) {
        case 'upper': return v.toUpperCase();
        case 'space': return ` ${v}`;
        case 'suffix': return `${v}!`;
        case 'truncate': return v.slice(0, -1);
        case 'http': return v.replace(/^https/i, 'http');
        default: return `0${v}`;
      }
    });
    out.push(fc.oneof(mutated, fc.string({ maxLength: 12 })).filter((v) => !pattern.test(v)));
  }
  if (s.format === 'uri') out.push(fc.constantFrom(...NOT_HTTP_URLS));
  if (s.format === 'email') out.push(fc.constantFrom(...NOT_EMAILS));
  if (s.format === 'date-time') out.push(fc.constantFrom(...NOT_DATE_TIMES));
  return out;
}

interface Broken { value: Json; /** suffix to the field's path, e.g. `[2]` for an array item, `.mode` for a member */ sub: string }

export const whole = (arb: fc.Arbitrary<Json>): fc.Arbitrary<Broken> => arb.map((value) => ({ value, sub: '' }));

/** A near-miss value the schema refuses, with the path (relative to the value) the error should name. */
function invalidValue(s: Schema): fc.Arbitrary<Broken> {
  s = norm(s);
  const options: fc.Arbitrary<Broken>[] = [whole(wrongType(s))];
  for (const b of branches(s)) {
    if (b.type === 'string') options.push(...invalidStrings(b).map(whole));
    if (b.type === 'integer') {
      if (b.minimum !== undefined) options.push(whole(fc.integer({ min: b.minimum - 1000, max: b.minimum - 1 })));
      if (b.maximum !== undefined) options.push(whole(fc.integer({ min: b.maximum + 1, max: b.maximum + 1000 })));
    }
    if (b.type === 'array') options.push(...invalidArrays(b));
    if (b.type === 'object') options.push(...invalidObjects(b));
  }
  return fc.oneof(...options);
}

/** One bad item among good ones (the error names it: `permissions[1]`, `data_schema[0].name`), one item too many, a duplicate. */
function invalidArrays(s: Schema): fc.Arbitrary<Broken>[] {
  const items = s.items as Schema;
  const out: fc.Arbitrary<Broken>[] = [];
  out.push(fc.tuple(validValue(s) as fc.Arbitrary<Json[]>, invalidValue(items), fc.nat()).map(([good, bad, at]) => {
    const i = at % (good.length + 1);
    const copy = [...good];
    copy.splice(i, 0, bad.value);
    return { value: copy, sub: `[${i}]${bad.sub}` };
  }).filter(({ value }) => (value as Json[]).length <= (s.maxItems ?? Infinity)));
  if (s.uniqueItems) {
    out.push((validValue(s) as fc.Arbitrary<Json[]>).filter((a) => a.length > 0).chain((good) =>
      fc.nat({ max: good.length - 1 }).map((i) => ({ value: [...good, good[i]], sub: '' }))));
  }
  // An enum set cannot be made too long without a duplicate (covered above).
  if (s.maxItems !== undefined && !(s.uniqueItems && items.enum)) {
    const n = s.maxItems + 1;
    const over = s.uniqueItems
      ? fc.uniqueArray(validValue(items), { minLength: n, maxLength: n, selector: (v) => JSON.stringify(v) })
      : validValue(items).map((v) => Array.from({ length: n }, () => v));
    out.push(whole(over));
  }
  return out;
}

/** A bad member (`theme.mode`, `localized_copy.en.intro_title`, `config_variables.x`), an unknown or missing one, too many keys. */
function invalidObjects(s: Schema): fc.Arbitrary<Broken>[] {
  const out: fc.Arbitrary<Broken>[] = [];
  if (s.patternProperties) {
    const value = recordValue(s);
    if (constrains(value)) {
      out.push(fc.tuple(validObject(s), identifier, invalidValue(value)).map(([o, key, bad]) => ({ value: { ...o, [key]: bad.value }, sub: `.${key}${bad.sub}` })));
    }
    if (s.maxProperties !== undefined) {
      const n = s.maxProperties + 1;
      out.push(fc.tuple(fc.uniqueArray(identifier, { minLength: n, maxLength: n }), fc.array(validValue(value), { minLength: n, maxLength: n }))
        .map(([keys, values]) => ({ value: Object.fromEntries(keys.map((k, i) => [k, values[i]])), sub: '' })));
    }
    return out;
  }
  const props = (s.properties ?? {}) as Record<string, Schema>;
  const keys = Object.keys(props);
  if (keys.length > 0) {
    const invalid = Object.fromEntries(keys.map((k) => [k, invalidValue(props[k]!)]));
    out.push(fc.tuple(validObject(s), fc.constantFrom(...keys)).chain(([o, key]) =>
      invalid[key]!.map((bad) => ({ value: { ...o, [key]: bad.value }, sub: `.${key}${bad.sub}` }))));
  }
  if (s.additionalProperties === false) {
    out.push(fc.tuple(validObject(s), unknownKey(keys), jsonJunk).map(([o, key, v]) => ({ value: { ...o, [key]: v }, sub: `.${key}` })));
  }
  for (const key of (s.required ?? []) as string[]) {
    out.push(validObject(s).map((o) => {
      const copy: Body = { ...o };
      delete copy[key];
      return { value: copy, sub: `.${key}` };
    }));
  }
  return out;
}

/** Keys no schema knows, odd ones included; numeric keys have their own property (see the end). */
function unknownKey(known: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    fc.string({ minLength: 1, maxLength: 20 }),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }),
    fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', 'Name', 'NAME', ' name', 'name ', 'id', 'org_id', 'created_at',
      'updated_at', 'public_key', 'has_pending_draft', 'status', 'token', 'kind', 'a.b', 'a[0]', 'a/b', 'a~1b', '$ref', 'deleted_at'),
  ).filter((k) => !known.includes(k) && !/^\d+$/.test(k));
}

interface BodyCase { valid: boolean; body: Json; fields: string[]; /** the code the error on `fields` must have */ code?: string; label: string }

/** A near miss to a rule beyond the schema: `key` set to `value` is refused with `code` on one of `fields`. */
export interface RuleMiss { key: string; value: Json; fields: string[]; code: string }

interface CaseOptions {
  /** Valid-by-construction generators of the fields with rules beyond the schema. */
  valid?: Record<string, fc.Arbitrary<Json>>;
  /** Near misses of those rules, each on an otherwise valid body. */
  rules?: fc.Arbitrary<RuleMiss>;
}

/** Valid bodies and near misses, each near miss knowing the fields its errors[] must name. */
export function bodyCases(s: Schema, opts: CaseOptions = {}): fc.Arbitrary<BodyCase> {
  const props = s.properties as Record<string, Schema>;
  const keys = Object.keys(props);
  const required = (s.required ?? []) as string[];
  // Bodies with about every field (what they do together), and bodies of a few fields (each on its own, `{}` too).
  const generators = Object.fromEntries(keys.map((k) => [k, opts.valid?.[k] ?? validValue(props[k]!)]));
  const optional = keys.filter((k) => !required.includes(k));
  const base = fc.oneof(
    validObject(s, opts.valid),
    fc.shuffledSubarray(optional, { maxLength: Math.min(3, optional.length) }).chain((picked) =>
      fc.record(Object.fromEntries([...required, ...picked].map((k) => [k, generators[k]!])), { noNullPrototype: true }) as fc.Arbitrary<Body>),
  );
  // A property of `Type.Unknown()` has no near miss: any JSON value is of its schema.
  const breakable = keys.filter((k) => constrains(norm(props[k]!)));
  const invalid = Object.fromEntries(breakable.map((k) => [k, invalidValue(props[k]!)]));
  const unknown = fc.tuple(base, unknownKey(keys), jsonJunk).map(([b, key, value]): BodyCase =>
    ({ valid: false, body: { ...b, [key]: value }, fields: [key], label: 'unknown key' }));
  const oneBadProperty = breakable.length === 0 ? unknown : fc.tuple(base, fc.constantFrom(...breakable)).chain(([b, key]) =>
    invalid[key]!.map(({ value, sub }): BodyCase => ({ valid: false, body: { ...b, [key]: value }, fields: [key + sub], label: `bad ${key}` })));
  const missing = required.length === 0 ? [] : [fc.tuple(base, fc.constantFrom(...required)).map(([b, key]): BodyCase => {
    const copy: Body = { ...b };
    delete copy[key];
    return { valid: false, body: copy, fields: [key], label: `missing ${key}` };
  })];
  const several = fc.tuple(oneBadProperty, unknownKey(keys), jsonJunk).map(([a, key, value]): BodyCase =>
    ({ valid: false, body: { ...(a.body as Body), [key]: value }, fields: [...a.fields, key], label: 'several problems' }));
  const notAnObject = fc.oneof(fc.constant(null), fc.array(jsonJunk, { maxLength: 3 }), fc.string({ maxLength: 10 }), fc.integer(), fc.boolean())
    .map((body): BodyCase => ({ valid: false, body, fields: [''], label: 'not an object' }));
  const ruleMisses = opts.rules ? [fc.tuple(base, opts.rules).map(([b, r]): BodyCase =>
    ({ valid: false, body: { ...b, [r.key]: r.value }, fields: r.fields, code: r.code, label: `rule ${r.key} ${r.code}` }))] : [];
  return fc.oneof(
    { weight: 5, arbitrary: base.map((body): BodyCase => ({ valid: true, body, fields: [], label: 'valid' })) },
    { weight: 4, arbitrary: oneBadProperty },
    { weight: 2, arbitrary: unknown },
    ...missing.map((arbitrary) => ({ weight: 1, arbitrary })),
    { weight: 1, arbitrary: several },
    { weight: 1, arbitrary: notAnObject },
    ...ruleMisses.map((arbitrary) => ({ weight: 3, arbitrary })),
    // Stay under the 1 MiB body limit (413 has a property of its own).
  ).filter((c) => Buffer.byteLength(JSON.stringify(c.body) ?? '') < MIB - 64 * 1024);
}

type Query = [string, string][];
interface QueryCase { valid: boolean; query: Query; fields: string[]; label: string }

const nonNumeric = fc.oneof(fc.string({ minLength: 1, maxLength: 10 }), fc.constantFrom('abc', 'NaN', 'null', 'true', '[]', '1,2', '1;2', '--1', '½', '١٢', '1e', '0x', '--'))
  .filter((v) => Number.isNaN(Number(v)));

function queryValue(s: Schema): fc.Arbitrary<string> {
  if (s.enum) return fc.constantFrom(...(s.enum as string[]));
  if (s.type === 'integer') return fc.oneof(fc.integer({ min: s.minimum, max: Math.min(s.maximum, s.minimum + 200) }), fc.integer({ min: s.minimum, max: s.maximum })).map(String);
  if (s.type === 'boolean') return fc.constantFrom('true', 'false');
  if (s.type === 'string') return validString(s);
  throw new Error(`no query generator for ${JSON.stringify(s)}`);
}

function invalidQueryValue(s: Schema): fc.Arbitrary<string> | null {
  if (s.enum) return fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom(...(s.enum as string[]).flatMap((v) => [v.toUpperCase(), `${v}x`, `${v},${v}`]))).filter((v) => !s.enum.includes(v));
  if (s.type === 'integer') {
    return fc.oneof(
      fc.integer({ min: s.minimum - 1_000_000, max: s.minimum - 1 }).map(String),
      fc.integer({ min: s.maximum + 1, max: s.maximum + 1_000_000 }).map(String),
      fc.constant(String(s.maximum + 1)), fc.constant(String(s.minimum - 1)),
      fc.double({ noNaN: true, noDefaultInfinity: true, min: s.minimum, max: s.maximum }).filter((x) => !Number.isInteger(x)).map(String),
      // Non-finite numbers ('Infinity', '1e400') have a property of their own at the end.
      nonNumeric.filter((v) => !/infinity/i.test(v)), fc.constant(''),
    );
  }
  if (s.type === 'boolean') return fc.string({ maxLength: 8 }).filter((v) => v !== 'true' && v !== 'false');
  if (s.type === 'string') {
    const misses = invalidStrings(s, { short: true });
    return misses.length ? fc.oneof(...misses) : null;
  }
  throw new Error(`no query generator for ${JSON.stringify(s)}`);
}

/** Query strings from a query schema: valid ones, one bad value, a repeated parameter, an unknown one. */
export function queryCases(s: Schema): fc.Arbitrary<QueryCase> {
  const props = s.properties as Record<string, Schema>;
  const keys = Object.keys(props);
  const valid = fc.record(Object.fromEntries(keys.map((k) => [k, queryValue(props[k]!)])), { requiredKeys: [] })
    .map((r) => Object.entries(r) as Query);
  const shuffled = (q: Query) => fc.shuffledSubarray(q, { minLength: q.length, maxLength: q.length });
  const breakable = keys.filter((k) => invalidQueryValue(props[k]!) !== null);
  return fc.oneof(
    { weight: 3, arbitrary: valid.chain(shuffled).map((query) => ({ valid: true, query, fields: [], label: 'valid' })) },
    { weight: 4, arbitrary: fc.tuple(valid, fc.constantFrom(...breakable)).chain(([q, key]) => invalidQueryValue(props[key]!)!.map((bad) =>
      ({ valid: false, query: [...q.filter(([k]) => k !== key), [key, bad]] as Query, fields: [key], label: `bad ${key}` }))) },
    { weight: 1, arbitrary: fc.tuple(valid, fc.constantFrom(...keys)).chain(([q, key]) => fc.tuple(queryValue(props[key]!), queryValue(props[key]!)).map(([a, b]) =>
      ({ valid: false, query: [...q.filter(([k]) => k !== key), [key, a], [key, b]] as Query, fields: [key], label: `repeated ${key}` }))) },
    { weight: 1, arbitrary: fc.tuple(valid, unknownKey(keys).filter((k) => k.trim() !== '' && !k.includes('[') && !k.includes(']')), fc.string({ maxLength: 8 })).map(([q, key, v]) =>
      ({ valid: false, query: [...q, [key, v]] as Query, fields: [key], label: 'unknown parameter' })) },
  );
}

/** Lone surrogates cannot be percent-encoded (encodeURIComponent throws): a URL carries U+FFFD for them. */
export const encode = (s: string) => encodeURIComponent(wellFormed(s));

export const queryString = (q: Query) => (q.length ? `?${q.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&')}` : '');

