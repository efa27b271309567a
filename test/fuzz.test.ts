import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentCreateSchema, AgentDeleteQuery, AgentListQuery, AgentPatchSchema } from '../src/schemas/agents.ts';
import { ApiKeyCreateSchema } from '../src/schemas/api-keys.ts';
import { PERMISSIONS } from '../src/auth/permissions.ts';
import { call, startTestService, type ApiResponse, type TestService } from './helpers.ts';

/**
 * Property-based fuzzing of the agents and api-keys endpoints. Request bodies and query strings
 * are generated from the very JSON Schemas the routes validate with: walking a schema gives both
 * valid values and near-miss invalid ones (wrong types, out-of-range values, over-long strings,
 * unknown keys, nulls, nested junk, unicode), each invalid one knowing which field it broke.
 *
 * Properties: no response is ever 5xx; every 4xx is a well-formed problem document; a rejected
 * request changes nothing; a valid one does what it says (a 2xx PATCH equals the next GET).
 *
 * Two inputs known to make the service answer 500 (a NUL character in a text field, an id of the
 * form `urn:uuid:<uuid>`) and one wrong field path (an unknown key made of digits) have properties
 * of their own at the end, so that the general properties stay able to find anything else.
 */

const REST = '/api/v1/rest';
const TYPE_BASE = 'https://docs.agents.dev/errors/';
const WELL_FORMED_REQUEST_ID = /^[A-Za-z0-9._-]{1,200}$/;
const PROBLEM_KEYS = new Set(['type', 'title', 'status', 'code', 'detail', 'errors', 'required_permission', 'request_id']);
const MIB = 1024 * 1024;
/** Set FUZZ_SEED to replay a failure fast-check reported; FUZZ_RUNS scales every property. */
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
const SCALE = process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : 1;

type Json = unknown;
type Schema = Record<string, any>;
type Body = Record<string, Json>;

let svc: TestService;
let admin: string;

beforeAll(async () => {
  svc = await startTestService({ RATE_LIMIT_PER_MINUTE: 1_000_000 });
  admin = (await svc.newOrg()).token;
});
afterAll(async () => { await svc?.stop(); });

async function property<T>(arb: fc.Arbitrary<T>, predicate: (value: T) => Promise<void>, numRuns: number): Promise<void> {
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

/** Every 4xx/5xx is RFC 9457 problem details carrying the response's request id. */
function expectWellFormedProblem(res: ApiResponse, what: string): Record<string, any> {
  const context = `${what} -> ${res.status} ${res.text.slice(0, 500)}`;
  expect(res.headers.get('content-type'), context).toMatch(/^application\/problem\+json(;|$)/);
  const body = res.body as Record<string, any>;
  expect(body && typeof body === 'object' && !Array.isArray(body), context).toBe(true);
  const requestId = res.headers.get('x-request-id');
  expect(requestId, context).toMatch(WELL_FORMED_REQUEST_ID);
  expect(body.request_id, context).toBe(requestId);
  expect(body.status, context).toBe(res.status);
  expect(body.code, context).toMatch(/^[a-z][a-z0-9_]*$/);
  expect(body.type, context).toBe(TYPE_BASE + body.code);
  expect(typeof body.title === 'string' && body.title.length > 0, context).toBe(true);
  expect(typeof body.detail === 'string' && body.detail.length > 0, context).toBe(true);
  for (const key of Object.keys(body)) expect(PROBLEM_KEYS.has(key), `${context}: unexpected member ${key}`).toBe(true);
  if (body.code === 'validation_error') expect(Array.isArray(body.errors) && body.errors.length > 0, context).toBe(true);
  if (body.errors !== undefined) {
    expect(Array.isArray(body.errors), context).toBe(true);
    for (const e of body.errors) {
      expect(typeof e.field === 'string' && typeof e.message === 'string' && e.message.length > 0, context).toBe(true);
      expect(e.code, context).toMatch(/^[a-z][a-z0-9_]*$/);
    }
  }
  if (res.status === 401) expect(res.headers.get('www-authenticate'), context).toMatch(/^Bearer\b/);
  if (res.status === 405) expect(res.headers.get('allow'), context).toBeTruthy();
  return body;
}

function expectNo5xx(res: ApiResponse, what: string): void {
  expect(res.status, `${what} -> ${res.status} ${res.text.slice(0, 500)}`).toBeLessThan(500);
}

/** A 400 validation_error naming at least one of `fields`. */
function expectValidationError(res: ApiResponse, fields: string[], what: string): void {
  const context = `${what} -> ${res.status} ${res.text.slice(0, 800)}`;
  expect(res.status, context).toBe(400);
  const body = expectWellFormedProblem(res, what);
  expect(body.code, context).toBe('validation_error');
  const named = (body.errors as { field: string }[]).map((e) => e.field);
  expect(fields.some((f) => named.includes(f)), `${context}\nexpected errors[] to name one of ${JSON.stringify(fields)}`).toBe(true);
}

const show = (value: unknown) => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 300 ? `${text.slice(0, 300)}…(${text.length} chars)` : text;
};

// ---------------------------------------------------------------------------------------------
// Generators derived from the JSON Schemas

const codePoints = (s: string) => [...s].length;
/** What UTF-8 storage makes of a string: a lone surrogate becomes U+FFFD. */
const wellFormed = (s: string) => s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
const withoutNul = (s: string) => s.split('\u0000').join('');

const ODD_PIECES = ['😀', 'é', 'e\u0301', '\u202e', '\u200b', 'Ω', '中文', '\ud800', '\udfff', '<script>alert(1)</script>',
  "'; drop table agents; --", '%s%n', '\\', '"', '\n', '\t', '{{name}}', '${x}', '\u{10ffff}', '\ufffd'];

/** Text of `min`..`max` code points: ASCII, graphemes, any code point, odd pieces, and lengths at the bound. */
function text(min: number, max: number, opts: { nul?: boolean } = {}): fc.Arbitrary<string> {
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
  fc.constantFrom('http://example.com', 'https://example.com/', 'https://EXAMPLE.COM/Path?q=1#f', 'https://xn--r8jz45g.jp/', 'http://127.0.0.1:8080/x'),
).filter((u) => u.length <= max);

const email = fc.tuple(
  fc.stringMatching(/^[A-Za-z0-9_+-]{1,16}(\.[A-Za-z0-9_+-]{1,8})?$/),
  fc.stringMatching(/^[A-Za-z0-9]{1,12}(-[A-Za-z0-9]{1,5})?\.[A-Za-z]{2,6}$/),
).map(([local, domain]) => `${local}@${domain}`);

/** `{type: ["string", "null"], ...}` (a Nullable field) read as the equivalent `anyOf` union. */
function norm(s: Schema): Schema {
  if (!Array.isArray(s.type)) return s;
  const { type, ...rest } = s;
  return { anyOf: (type as string[]).map((t) => (t === 'null' ? { type: 'null' } : { ...rest, type: t })) };
}

/** Types a schema accepts, through `anyOf` unions (the Nullable fields). */
function acceptedTypes(s: Schema): Set<string> {
  s = norm(s);
  if (s.anyOf) return new Set((s.anyOf as Schema[]).flatMap((b) => [...acceptedTypes(b)]));
  return new Set([s.type as string]);
}

function validValue(s: Schema): fc.Arbitrary<Json> {
  s = norm(s);
  if (s.anyOf) return fc.oneof(...(s.anyOf as Schema[]).map(validValue));
  if (s.enum) return fc.constantFrom(...(s.enum as Json[]));
  switch (s.type) {
    case 'null': return fc.constant(null);
    case 'boolean': return fc.boolean();
    case 'integer': return fc.integer({ min: s.minimum ?? -1_000_000, max: s.maximum ?? 1_000_000 });
    case 'string': {
      if (s.format === 'uri') return httpUrl(s.maxLength ?? 2048);
      if (s.format === 'email') return email;
      const base = text(s.minLength ?? 0, s.maxLength ?? 1000);
      return s.pattern ? base.filter((v) => new RegExp(s.pattern, 'u').test(v)) : base;
    }
    case 'array':
      if (s.items?.enum && s.uniqueItems) return fc.shuffledSubarray(s.items.enum as Json[], { maxLength: s.maxItems });
      return fc.array(validValue(s.items), { maxLength: Math.min(s.maxItems ?? 5, 5) });
    case 'object': return validObject(s);
    default: throw new Error(`no generator for schema ${JSON.stringify(s)}`);
  }
}

function validObject(s: Schema): fc.Arbitrary<Body> {
  const model = Object.fromEntries(Object.entries(s.properties as Record<string, Schema>).map(([k, p]) => [k, validValue(p)]));
  return fc.record(model, { requiredKeys: (s.required ?? []) as string[] }) as fc.Arbitrary<Body>;
}

const jsonJunk = fc.jsonValue({ maxDepth: 4 });

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
const NOT_EMAILS = ['plainaddress', '@example.com', 'a@', 'a b@example.com', 'a@@example.com', 'a@example', 'a@-example.com', '.a@example.com', 'a@example.com ', 'a@exa_mple.com'];

/** Strings the schema refuses: over maxLength (also huge), under minLength, pattern, format and enum misses. */
function invalidStrings(s: Schema): fc.Arbitrary<string>[] {
  const out: fc.Arbitrary<string>[] = [];
  if (s.maxLength !== undefined) {
    out.push(fc.tuple(fc.constantFrom('x', 'é', '😀', ' a'), fc.integer({ min: s.maxLength + 1, max: s.maxLength + 40 }))
      .map(([c, n]) => (c === ' a' ? `a${' '.repeat(n - 1)}` : c.repeat(n))));
    out.push(fc.constant('y'.repeat(Math.max(s.maxLength * 4, 100_000))));
  }
  if ((s.minLength ?? 0) > 0) out.push(fc.constant(''));
  if (s.enum) {
    out.push(fc.string({ maxLength: 12 }).filter((v) => !s.enum.includes(v)));
    out.push(fc.constantFrom(...(s.enum as string[]).flatMap((v) => [v.toUpperCase(), ` ${v}`, `${v}\n`, `${v}s`])).filter((v) => !s.enum.includes(v)));
  }
  if (s.pattern === '\\S') {
    out.push(fc.array(fc.constantFrom(...WHITESPACE), { minLength: Math.max(1, s.minLength ?? 0), maxLength: Math.min(10, s.maxLength ?? 10) }).map((a) => a.join('')));
  }
  if (s.format === 'uri') out.push(fc.constantFrom(...NOT_HTTP_URLS));
  if (s.format === 'email') out.push(fc.constantFrom(...NOT_EMAILS));
  return out;
}

interface Broken { value: Json; /** suffix to the field's path, e.g. `[2]` for an array item */ sub: string }

/** A near-miss value the schema refuses, with the path (relative to the value) the error should name. */
function invalidValue(s: Schema): fc.Arbitrary<Broken> {
  s = norm(s);
  const options: fc.Arbitrary<Broken>[] = [wrongType(s).map((value) => ({ value, sub: '' }))];
  const strings = s.anyOf ? (s.anyOf as Schema[]).filter((b) => b.type === 'string') : s.type === 'string' ? [s] : [];
  for (const str of strings) for (const a of invalidStrings(str)) options.push(a.map((value) => ({ value, sub: '' })));
  if (s.type === 'integer') {
    if (s.minimum !== undefined) options.push(fc.integer({ min: s.minimum - 1000, max: s.minimum - 1 }).map((value) => ({ value, sub: '' })));
    if (s.maximum !== undefined) options.push(fc.integer({ min: s.maximum + 1, max: s.maximum + 1000 }).map((value) => ({ value, sub: '' })));
  }
  if (s.type === 'array') {
    // One bad item among good ones: the error names that item, e.g. `permissions[1]`.
    options.push(fc.tuple(validValue(s) as fc.Arbitrary<Json[]>, invalidValue(s.items), fc.nat()).map(([items, bad, at]) => {
      const i = items.length === 0 ? 0 : at % (items.length + 1);
      const copy = [...items];
      copy.splice(i, 0, bad.value);
      return { value: copy, sub: `[${i}]${bad.sub}` };
    }).filter(({ value }) => !(s.uniqueItems && s.maxItems !== undefined && (value as Json[]).length > s.maxItems)));
    if (s.uniqueItems) {
      options.push((validValue(s) as fc.Arbitrary<Json[]>).filter((a) => a.length > 0).chain((items) =>
        fc.nat({ max: items.length - 1 }).map((i) => ({ value: [...items, items[i]], sub: '' }))));
    }
  }
  return fc.oneof(...options);
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

interface BodyCase { valid: boolean; body: Json; fields: string[]; label: string }

/** Valid bodies and near misses, each near miss knowing the fields its errors[] must name. */
function bodyCases(s: Schema): fc.Arbitrary<BodyCase> {
  const props = s.properties as Record<string, Schema>;
  const keys = Object.keys(props);
  const required = (s.required ?? []) as string[];
  const base = validObject(s);
  const oneBadProperty = fc.tuple(base, fc.constantFrom(...keys)).chain(([b, key]) =>
    invalidValue(props[key]!).map(({ value, sub }) => ({ valid: false, body: { ...b, [key]: value }, fields: [key + sub], label: `bad ${key}` })));
  const unknown = fc.tuple(base, unknownKey(keys), jsonJunk).map(([b, key, value]) =>
    ({ valid: false, body: { ...b, [key]: value }, fields: [key], label: 'unknown key' }));
  const missing = required.length === 0 ? [] : [fc.tuple(base, fc.constantFrom(...required)).map(([b, key]) => {
    const copy: Body = { ...b };
    delete copy[key];
    return { valid: false, body: copy, fields: [key], label: `missing ${key}` };
  })];
  const several = fc.tuple(oneBadProperty, unknownKey(keys), jsonJunk).map(([a, key, value]) =>
    ({ valid: false, body: { ...(a.body as Body), [key]: value }, fields: [...a.fields, key], label: 'several problems' }));
  const notAnObject = fc.oneof(fc.constant(null), fc.array(jsonJunk, { maxLength: 3 }), fc.string({ maxLength: 10 }), fc.integer(), fc.boolean())
    .map((body) => ({ valid: false, body, fields: [''], label: 'not an object' }));
  return fc.oneof(
    { weight: 4, arbitrary: base.map((body) => ({ valid: true, body, fields: [], label: 'valid' })) },
    { weight: 4, arbitrary: oneBadProperty },
    { weight: 2, arbitrary: unknown },
    ...missing.map((arbitrary) => ({ weight: 1, arbitrary })),
    { weight: 1, arbitrary: several },
    { weight: 1, arbitrary: notAnObject },
  );
}

type Query = [string, string][];
interface QueryCase { valid: boolean; query: Query; fields: string[]; label: string }

const nonNumeric = fc.oneof(fc.string({ minLength: 1, maxLength: 10 }), fc.constantFrom('abc', 'NaN', 'null', 'true', '[]', '1,2', '1;2', '--1', '½', '١٢', '1e', '0x', '--'))
  .filter((v) => Number.isNaN(Number(v)));

function queryValue(s: Schema): fc.Arbitrary<string> {
  if (s.enum) return fc.constantFrom(...(s.enum as string[]));
  if (s.type === 'integer') return fc.oneof(fc.integer({ min: s.minimum, max: Math.min(s.maximum, s.minimum + 200) }), fc.integer({ min: s.minimum, max: s.maximum })).map(String);
  if (s.type === 'boolean') return fc.constantFrom('true', 'false');
  throw new Error(`no query generator for ${JSON.stringify(s)}`);
}

function invalidQueryValue(s: Schema): fc.Arbitrary<string> {
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
  throw new Error(`no query generator for ${JSON.stringify(s)}`);
}

/** Query strings from a query schema: valid ones, one bad value, a repeated parameter, an unknown one. */
function queryCases(s: Schema): fc.Arbitrary<QueryCase> {
  const props = s.properties as Record<string, Schema>;
  const keys = Object.keys(props);
  const valid = fc.record(Object.fromEntries(keys.map((k) => [k, queryValue(props[k]!)])), { requiredKeys: [] })
    .map((r) => Object.entries(r) as Query);
  const shuffled = (q: Query) => fc.shuffledSubarray(q, { minLength: q.length, maxLength: q.length });
  return fc.oneof(
    { weight: 3, arbitrary: valid.chain(shuffled).map((query) => ({ valid: true, query, fields: [], label: 'valid' })) },
    { weight: 4, arbitrary: fc.tuple(valid, fc.constantFrom(...keys)).chain(([q, key]) => invalidQueryValue(props[key]!).map((bad) =>
      ({ valid: false, query: [...q.filter(([k]) => k !== key), [key, bad]] as Query, fields: [key], label: `bad ${key}` }))) },
    { weight: 1, arbitrary: fc.tuple(valid, fc.constantFrom(...keys)).chain(([q, key]) => fc.tuple(queryValue(props[key]!), queryValue(props[key]!)).map(([a, b]) =>
      ({ valid: false, query: [...q.filter(([k]) => k !== key), [key, a], [key, b]] as Query, fields: [key], label: `repeated ${key}` }))) },
    { weight: 1, arbitrary: fc.tuple(valid, unknownKey(keys).filter((k) => k.trim() !== '' && !k.includes('[') && !k.includes(']')), fc.string({ maxLength: 8 })).map(([q, key, v]) =>
      ({ valid: false, query: [...q, [key, v]] as Query, fields: [key], label: 'unknown parameter' })) },
  );
}

const queryString = (q: Query) => (q.length ? `?${q.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}` : '');

// ---------------------------------------------------------------------------------------------
// Service helpers

async function agentsTotal(token: string): Promise<number> {
  const res = await call(svc.url, 'GET', `${REST}/agents?limit=1`, { token });
  expect(res.status, res.text).toBe(200);
  return res.body.total as number;
}

async function keysTotal(token: string): Promise<number> {
  const res = await call(svc.url, 'GET', `${REST}/api-keys?limit=1`, { token });
  expect(res.status, res.text).toBe(200);
  return res.body.total as number;
}

async function createAgent(token: string, body: Body = { name: `fuzz ${randomUUID().slice(0, 8)}` }): Promise<Record<string, any>> {
  const res = await call(svc.url, 'POST', `${REST}/agents`, { token, body });
  expect(res.status, res.text).toBe(201);
  return res.body as Record<string, any>;
}

function expectAgentShape(agent: Record<string, any>, what: string): void {
  expect(Object.keys(agent).sort(), what).toEqual(['created_at', 'has_pending_draft', 'id', 'name', 'persona', 'public_key', 'site_url', 'status', 'updated_at', 'voice']);
  expect(agent.id, what).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  expect(agent.public_key, what).toMatch(/^wgt_[A-Za-z0-9_-]{20,}$/);
  expect(agent.created_at, what).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  expect(agent.updated_at, what).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
}

const stored = (v: Json) => (typeof v === 'string' ? wellFormed(v) : v);

// ---------------------------------------------------------------------------------------------

describe('fuzz: agents', () => {
  it('POST /agents: valid bodies create exactly what they say; near misses are 400 on the right field and create nothing', async () => {
    const { token } = await svc.newOrg();
    await property(bodyCases(AgentCreateSchema), async (c) => {
      const what = `POST /agents ${c.label} ${show(c.body)}`;
      const before = await agentsTotal(token);
      const res = await call(svc.url, 'POST', `${REST}/agents`, { token, body: JSON.stringify(c.body) });
      expectNo5xx(res, what);
      if (!c.valid) {
        expectValidationError(res, c.fields, what);
        expect(await agentsTotal(token), `${what}: a rejected create changed the list`).toBe(before);
        return;
      }
      expect(res.status, `${what} -> ${res.text.slice(0, 500)}`).toBe(201);
      const body = c.body as Body;
      const agent = res.body as Record<string, any>;
      expectAgentShape(agent, what);
      expect(agent, what).toMatchObject({
        name: stored(body.name), site_url: stored(body.site_url ?? null), voice: null, persona: null,
        status: body.site_url ? 'draft' : 'active', has_pending_draft: false,
      });
      expect(agent.updated_at, what).toBe(agent.created_at);
      expect(res.headers.get('location'), what).toBe(`${REST}/agents/${agent.id}`);
      const read = await call(svc.url, 'GET', `${REST}/agents/${agent.id}`, { token });
      expect(read.body, what).toEqual(agent);
      expect(await agentsTotal(token)).toBe(before + 1);
    }, 250);
  }, 90_000);

  it('PATCH /agents/:id: a 2xx equals the next GET and applies the fields; a near miss changes nothing', async () => {
    const { token } = await svc.newOrg();
    const agents = [await createAgent(token), await createAgent(token, { name: 'with site', site_url: 'https://example.com/' })];
    await property(fc.tuple(bodyCases(AgentPatchSchema), fc.nat({ max: agents.length - 1 })), async ([c, which]) => {
      const id = agents[which]!.id as string;
      const what = `PATCH /agents/:id ${c.label} ${show(c.body)}`;
      const before = (await call(svc.url, 'GET', `${REST}/agents/${id}`, { token })).body as Record<string, any>;
      const res = await call(svc.url, 'PATCH', `${REST}/agents/${id}`, { token, body: JSON.stringify(c.body) });
      expectNo5xx(res, what);
      const after = (await call(svc.url, 'GET', `${REST}/agents/${id}`, { token })).body as Record<string, any>;
      if (!c.valid) {
        expectValidationError(res, c.fields, what);
        expect(after, `${what}: a rejected PATCH changed the agent`).toEqual(before);
        return;
      }
      expect(res.status, `${what} -> ${res.text.slice(0, 500)}`).toBe(200);
      expectAgentShape(res.body, what);
      expect(res.body, `${what}: the PATCH response differs from the next GET`).toEqual(after);
      const patch = c.body as Body;
      const expected = { ...before, ...Object.fromEntries(Object.entries(patch).map(([k, v]) => [k, stored(v)])) };
      const { updated_at: _u, ...rest } = expected;
      expect(after, what).toMatchObject(rest);
      if (Object.keys(patch).length === 0) expect(after.updated_at, `${what}: {} moved updated_at`).toBe(before.updated_at);
      else expect(Date.parse(after.updated_at), what).toBeGreaterThanOrEqual(Date.parse(before.updated_at));
      expect(after.created_at, what).toBe(before.created_at);
    }, 250);
  }, 90_000);

  it('GET /agents?query: valid pages are exact; bad, repeated or unknown parameters are 400 on that parameter', async () => {
    const { token } = await svc.newOrg();
    const made: Record<string, any>[] = [];
    for (let i = 0; i < 3; i++) made.push(await createAgent(token));
    for (let i = 0; i < 2; i++) {
      const a = await createAgent(token);
      made.push((await call(svc.url, 'PATCH', `${REST}/agents/${a.id}`, { token, body: { status: 'paused' } })).body);
    }
    for (let i = 0; i < 2; i++) made.push(await createAgent(token, { name: `draft ${i}`, site_url: `https://example.com/${i}` }));
    await property(queryCases(AgentListQuery), async (c) => {
      const qs = queryString(c.query);
      const what = `GET /agents${qs} (${c.label})`;
      const res = await call(svc.url, 'GET', `${REST}/agents${qs}`, { token });
      expectNo5xx(res, what);
      if (!c.valid) {
        expectValidationError(res, c.fields, what);
        return;
      }
      expect(res.status, `${what} -> ${res.text.slice(0, 500)}`).toBe(200);
      const q = Object.fromEntries(c.query);
      const limit = q.limit === undefined ? 50 : Number(q.limit);
      const offset = q.offset === undefined ? 0 : Number(q.offset);
      const matching = made.filter((a) => q.status === undefined || a.status === q.status);
      expect(Object.keys(res.body).sort(), what).toEqual(['data', 'limit', 'offset', 'total']);
      expect(res.body.limit, what).toBe(limit);
      expect(res.body.offset, what).toBe(offset);
      expect(res.body.total, what).toBe(matching.length);
      expect(res.body.data.length, what).toBe(Math.max(0, Math.min(limit, matching.length - offset)));
      for (const a of res.body.data) if (q.status) expect(a.status, what).toBe(q.status);
      const times = (res.body.data as { created_at: string }[]).map((a) => Date.parse(a.created_at));
      expect(times, `${what}: not newest first`).toEqual([...times].sort((x, y) => y - x));
    }, 300);
  }, 90_000);

  it('DELETE /agents/:id?query: a bad query is 400 and deletes nothing; a good one is 204 and then 404', async () => {
    const { token } = await svc.newOrg();
    await property(queryCases(AgentDeleteQuery), async (c) => {
      const agent = await createAgent(token);
      const qs = queryString(c.query);
      const what = `DELETE /agents/:id${qs} (${c.label})`;
      const res = await call(svc.url, 'DELETE', `${REST}/agents/${agent.id}${qs}`, { token });
      expectNo5xx(res, what);
      const read = await call(svc.url, 'GET', `${REST}/agents/${agent.id}`, { token });
      if (!c.valid) {
        expectValidationError(res, c.fields, what);
        expect(read.status, `${what}: a rejected DELETE deleted the agent`).toBe(200);
        expect(read.body, what).toEqual(agent);
        return;
      }
      expect(res.status, `${what} -> ${res.text.slice(0, 500)}`).toBe(204);
      expect(res.text, what).toBe('');
      expect(read.status, what).toBe(404);
      expectWellFormedProblem(read, `GET after ${what}`);
    }, 150);
  }, 90_000);

  it('malformed path ids (random text, near-miss uuids) answer 404 on every method of /agents/:id and /api-keys/:id', async () => {
    const uuid = fc.uuid();
    const ids = fc.oneof(
      fc.string({ minLength: 1, maxLength: 40 }),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 10 }),
      uuid.map((u) => u.replace(/-/g, '')),
      uuid.map((u) => `${u}0`),
      uuid.map((u) => u.slice(1)),
      uuid.map((u) => `{${u}}`),
      uuid.map((u) => ` ${u}`),
      uuid.map((u) => u.replace(/[0-9a-f]$/, 'g')),
      fc.constantFrom('0', '-1', 'null', 'undefined', 'NaN', '%', '%25', '\u0000', 'agents', '*', '..%2F', "1' or '1'='1"),
    ).filter((id) => id !== '.' && id !== '..' && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id));
    const targets = fc.constantFrom(
      ['GET', 'agents'], ['PATCH', 'agents'], ['DELETE', 'agents'], ['GET', 'api-keys'], ['DELETE', 'api-keys'],
    ) as fc.Arbitrary<[string, string]>;
    await property(fc.tuple(ids, targets), async ([id, [method, family]]) => {
      const path = `${REST}/${family}/${encodeURIComponent(id)}`;
      const what = `${method} ${path}`;
      const res = await call(svc.url, method, path, { token: admin, body: method === 'PATCH' ? {} : undefined });
      expectNo5xx(res, what);
      expect(res.status, `${what} -> ${res.text.slice(0, 300)}`).toBe(404);
      expect(expectWellFormedProblem(res, what).code).toBe('not_found');
    }, 250);
  }, 90_000);

  it('any method on known and unknown paths: never 5xx, 405 with Allow on known routes, problems well-formed', async () => {
    const paths = fc.oneof(
      fc.constantFrom(`${REST}/agents`, `${REST}/api-keys`, `${REST}/agents/${randomUUID()}`, `${REST}/api-keys/${randomUUID()}`),
      fc.string({ minLength: 1, maxLength: 20 }).map((s) => `${REST}/${encodeURIComponent(s)}`),
      fc.string({ minLength: 1, maxLength: 20 }).map((s) => `/${encodeURIComponent(s)}`),
    ).filter((p) => !/\/\.{1,2}$/.test(p) && !/\/(healthz|readyz|docs)$/.test(p));
    const methods = fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD');
    const known: Record<string, string[]> = { agents: ['GET', 'POST'], 'api-keys': ['GET', 'POST'], 'agents/:id': ['GET', 'PATCH', 'DELETE'], 'api-keys/:id': ['GET', 'DELETE'] };
    await property(fc.tuple(methods, paths), async ([method, path]) => {
      const what = `${method} ${path}`;
      const res = await call(svc.url, method, path, { token: admin, body: ['POST', 'PUT', 'PATCH'].includes(method) ? {} : undefined });
      expectNo5xx(res, what);
      expect(res.headers.get('x-request-id'), what).toMatch(WELL_FORMED_REQUEST_ID);
      if (method === 'HEAD' || method === 'OPTIONS') return;
      const route = path.startsWith(`${REST}/`) ? path.slice(REST.length + 1).replace(/[0-9a-f-]{36}$/, ':id') : null;
      const allowed = route !== null && Object.hasOwn(known, route) ? known[route] : undefined;
      if (res.status >= 400) expectWellFormedProblem(res, what);
      if (allowed && !allowed.includes(method)) {
        expect(res.status, what).toBe(405);
        const allow = res.headers.get('allow')!.split(',').map((m) => m.trim());
        for (const m of allowed) expect(allow, what).toContain(m);
      } else if (!allowed) {
        expect(res.status, `${what} -> ${res.text.slice(0, 300)}`).toBe(404);
      }
    }, 200);
  }, 90_000);
});

describe('fuzz: api-keys', () => {
  it('POST /api-keys: valid bodies issue a key within the caller\'s permissions (403 beyond them); near misses are 400 and issue nothing', async () => {
    const { token } = await svc.newOrg();
    const limitedPermissions = ['org.write', 'org.read', 'agents.read'];
    const limited = await call(svc.url, 'POST', `${REST}/api-keys`, { token, body: { name: 'limited', permissions: limitedPermissions } });
    expect(limited.status, limited.text).toBe(201);
    const callers = [{ token, permissions: [...PERMISSIONS] as string[] }, { token: limited.body.token as string, permissions: limitedPermissions }];
    await property(fc.tuple(bodyCases(ApiKeyCreateSchema), fc.nat({ max: 1 })), async ([c, who]) => {
      const caller = callers[who]!;
      const what = `POST /api-keys as ${who ? 'limited' : 'admin'} ${c.label} ${show(c.body)}`;
      const before = await keysTotal(token);
      const res = await call(svc.url, 'POST', `${REST}/api-keys`, { token: caller.token, body: JSON.stringify(c.body) });
      expectNo5xx(res, what);
      if (!c.valid) {
        expectValidationError(res, c.fields, what);
        expect(await keysTotal(token), `${what}: a rejected create issued a key`).toBe(before);
        return;
      }
      const body = c.body as { name: string; permissions: string[]; user_email?: string };
      const beyond = body.permissions.filter((p) => !caller.permissions.includes(p));
      if (beyond.length > 0) {
        expect(res.status, `${what} -> ${res.text.slice(0, 500)}`).toBe(403);
        const problem = expectWellFormedProblem(res, what);
        expect(problem.code, what).toBe('missing_permission');
        expect(beyond, what).toContain(problem.required_permission);
        expect(await keysTotal(token), `${what}: a refused create issued a key`).toBe(before);
        return;
      }
      expect(res.status, `${what} -> ${res.text.slice(0, 500)}`).toBe(201);
      const key = res.body as Record<string, any>;
      const kind = body.user_email ? 'user' : 'org';
      expect(key, what).toMatchObject({ name: stored(body.name), kind });
      expect([...key.permissions].sort(), what).toEqual([...body.permissions].sort());
      expect(key.token, what).toMatch(kind === 'user' ? /^ut_/ : /^sk_/);
      expect(key.user_email?.toLowerCase() ?? null, what).toBe(body.user_email?.toLowerCase() ?? null);
      expect(res.headers.get('location'), what).toBe(`${REST}/api-keys/${key.id}`);
      const read = await call(svc.url, 'GET', `${REST}/api-keys/${key.id}`, { token });
      const { token: _secret, ...shown } = key;
      expect(read.body, what).toEqual(shown);
      expect(await keysTotal(token)).toBe(before + 1);
    }, 200);
  }, 90_000);
});

describe('fuzz: transport', () => {
  const JSON_TYPES = ['application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'Application/Json;charset=UTF-8', 'application/json ; charset=latin1'];
  const NON_JSON_TYPES = ['text/plain', 'text/html', 'application/xml', 'multipart/form-data; boundary=zz', 'application/x-www-form-urlencoded',
    '*/*', 'application/*', 'application/octet-stream', ';', 'image/png', 'text/plain; charset=utf-8'];
  /** Types a server may reasonably read either way: only "never 5xx, well-formed" is asserted for them. */
  const AMBIGUOUS_TYPES = ['application/merge-patch+json', 'application/vnd.api+json', 'text/json', 'application/jsonx', 'application/x-json', 'application/json-seq'];

  const contentType = fc.option(fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...JSON_TYPES) },
    { weight: 2, arbitrary: fc.constantFrom(...NON_JSON_TYPES) },
    { weight: 1, arbitrary: fc.constantFrom(...AMBIGUOUS_TYPES) },
    { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
  ), { freq: 6 });

  const invalidJsonText = fc.oneof(
    fc.string({ minLength: 1, maxLength: 40 }),
    fc.constantFrom('{', '{"name": "x",}', "{'name': 'x'}", '{"name": "x"} {}', 'NaN', '{"name": undefined}', '[', '{"name": "\\u12"}', '\u0000', '{"name":"x"', '\ufeff{"name":"x"}'),
    fc.jsonValue().map((v) => `${JSON.stringify(v)}}`),
  ).filter((t) => { try { JSON.parse(t); return false; } catch { return true; } });

  const bodyBytes = fc.oneof(
    { weight: 3, arbitrary: bodyCases(AgentCreateSchema).map((c) => Buffer.from(JSON.stringify(c.body))) },
    { weight: 3, arbitrary: invalidJsonText.map((t) => Buffer.from(t)) },
    { weight: 1, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 64 }).map((b) => Buffer.from(b)) },
    { weight: 1, arbitrary: fc.constantFrom('', ' ', '\n\t ', 'null', '{}').map((t) => Buffer.from(t)) },
  );

  // What an HTTP client can send in a header value: tab, visible ASCII and obs-text.
  const headerText = fc.string({ unit: 'binary-ascii', maxLength: 60 }).map((s) => s.replace(/[^\t\x20-\x7e\x80-\xff]/g, ''));
  const requestId = fc.option(fc.oneof(
    fc.stringMatching(/^[A-Za-z0-9._-]{1,200}$/),
    fc.constantFrom('x'.repeat(200), 'x'.repeat(201), 'a b', 'a/b', 'ä', '<id>'),
    headerText,
  ));
  const authorization = fc.constantFrom('Bearer TOKEN', 'bearer TOKEN', 'BEARER TOKEN', 'Bearer   TOKEN', 'Bearer TOKEN extra', 'Token TOKEN', 'TOKEN',
    'Bearer', 'Bearer sk_0000000000000000000000000000', 'Basic dXNlcjpwYXNz', 'Bearer TOKENx', 'Bearer TOKEN,Bearer TOKEN', '');
  const idempotencyKey = fc.option(fc.oneof(fc.stringMatching(/^[\x21-\x7e]{8,40}$/), headerText, fc.constant('k'.repeat(256))), { freq: 4 });

  /** What a server should do with the header by the contract: 'yes', 'no' or either. */
  function isJsonType(type: string | null): 'yes' | 'no' | 'either' {
    if (type === null) return 'no';
    const t = type.trim();
    if (JSON_TYPES.includes(t)) return 'yes';
    if (NON_JSON_TYPES.includes(t)) return 'no';
    return /json/i.test(t) ? 'either' : 'no';
  }

  it('odd content types, invalid JSON text, raw bytes and odd headers: never 5xx, the right problem, nothing changed', async () => {
    const { token } = await svc.newOrg();
    const agent = await createAgent(token);
    const targets = fc.constantFrom('POST /agents', 'PATCH /agents/:id');
    await property(fc.record({ target: targets, type: contentType, bytes: bodyBytes, requestId, authorization, idempotencyKey }), async (r) => {
      const headers: Record<string, string> = {};
      if (r.type !== null) headers['content-type'] = r.type;
      if (r.requestId !== null) headers['x-request-id'] = r.requestId;
      if (r.idempotencyKey !== null) headers['idempotency-key'] = r.idempotencyKey;
      if (r.authorization) headers.authorization = r.authorization.replace(/TOKEN/g, token);
      const path = r.target === 'POST /agents' ? `${REST}/agents` : `${REST}/agents/${agent.id}`;
      const method = r.target.split(' ')[0]!;
      const what = `${r.target} ${show({ ...r, bytes: r.bytes.toString('utf8') })}`;
      const totalBefore = await agentsTotal(token);
      const agentBefore = (await call(svc.url, 'GET', `${REST}/agents/${agent.id}`, { token })).body;

      const bytes = r.bytes;
      const res = await fetch(svc.url + path, { method, headers, body: bytes }).then(async (f) => {
        const text = await f.text();
        let parsed: unknown = text;
        try { parsed = text ? JSON.parse(text) : undefined; } catch { /* keep text */ }
        return { status: f.status, headers: f.headers, body: parsed, text } as ApiResponse;
      });
      expectNo5xx(res, what);

      // X-Request-Id: echoed when well-formed (fetch trims the value it sends), else replaced.
      const sentId = r.requestId?.replace(/^[ \t]+|[ \t]+$/g, '');
      const gotId = res.headers.get('x-request-id');
      expect(gotId, what).toMatch(WELL_FORMED_REQUEST_ID);
      if (sentId !== undefined && WELL_FORMED_REQUEST_ID.test(sentId)) expect(gotId, what).toBe(sentId);
      else if (sentId !== undefined) expect(gotId, what).not.toBe(sentId);

      const authorized = /^Bearer +TOKEN$/i.test(r.authorization.trim());
      const hasBody = bytes.length > 0;
      const json = isJsonType(r.type);
      // RFC 8259 lets a parser ignore a leading byte order mark: such a body may go either way.
      const decoded = bytes.toString('utf8');
      const bom = decoded.startsWith('\ufeff');
      const parsesAs = (t: string) => { try { JSON.parse(t); return true; } catch { return false; } };
      const parses = parsesAs(decoded);
      const blank = decoded.replace(/^\ufeff/, '').replace(/[ \t\r\n]/g, '') === '';

      if (res.status >= 400) {
        const problem = expectWellFormedProblem(res, what);
        if (!authorized) expect(problem.code, what).toBe('unauthorized');
        else if (hasBody && json === 'no') expect(problem.code, what).toBe('unsupported_media_type');
        else if (hasBody && json === 'yes' && !parses && !blank && !(bom && parsesAs(decoded.slice(1)))) expect(problem.code, what).toBe('invalid_json');
        expect(await agentsTotal(token), `${what}: a rejected request created an agent`).toBe(totalBefore);
        expect((await call(svc.url, 'GET', `${REST}/agents/${agent.id}`, { token })).body, `${what}: a rejected request changed the agent`).toEqual(agentBefore);
      } else {
        expect(authorized, `${what}: accepted without a valid token`).toBe(true);
        if (hasBody && !blank) {
          expect(json, `${what}: accepted a body of a non-JSON type`).not.toBe('no');
          expect(parses || (bom && parsesAs(decoded.slice(1))), `${what}: accepted a body that is not JSON`).toBe(true);
        }
        if (res.status === 201 && res.headers.get('idempotent-replayed') !== 'true') expect(await agentsTotal(token)).toBe(totalBefore + 1);
      }
    }, 250);
  }, 90_000);

  it('bodies over 1 MiB are 413 and change nothing', async () => {
    const { token } = await svc.newOrg();
    const agent = await createAgent(token);
    const big = fc.record({
      target: fc.constantFrom('POST', 'PATCH'),
      extra: fc.integer({ min: 1, max: 200_000 }),
      field: fc.constantFrom('name', 'persona', 'unknown_padding'),
      char: fc.constantFrom('a', 'é', '😀'),
    });
    await property(big, async (r) => {
      const shell = JSON.stringify({ name: 'big', [r.field]: '' });
      const padBytes = MIB + r.extra - Buffer.byteLength(shell);
      const charBytes = Buffer.byteLength(r.char);
      const pad = r.char.repeat(Math.ceil(padBytes / charBytes));
      const text = JSON.stringify({ name: 'big', [r.field]: pad });
      expect(Buffer.byteLength(text)).toBeGreaterThan(MIB);
      const before = await agentsTotal(token);
      const path = r.target === 'POST' ? `${REST}/agents` : `${REST}/agents/${agent.id}`;
      const what = `${r.target} ${path} with ${Buffer.byteLength(text)} bytes`;
      const res = await call(svc.url, r.target, path, { token, body: text });
      expect(res.status, `${what} -> ${res.text.slice(0, 300)}`).toBe(413);
      expect(expectWellFormedProblem(res, what).code).toBe('payload_too_large');
      expect(await agentsTotal(token)).toBe(before);
      expect((await call(svc.url, 'GET', `${REST}/agents/${agent.id}`, { token })).body).toEqual(agent);
    }, 12);
  }, 90_000);
});

describe('fuzz: bugs found earlier, kept as their own properties', () => {
  /** Valid text for a field with one NUL inserted: PostgreSQL text cannot hold U+0000. */
  function withNul(s: Schema): fc.Arbitrary<string> {
    return fc.tuple(validValue(norm(s).anyOf ? (norm(s).anyOf as Schema[]).find((b) => b.type === 'string')! : s) as fc.Arbitrary<string>, fc.nat())
      .map(([v, at]) => { const cps = [...v]; cps.splice(at % (cps.length + 1), 0, '\u0000'); return cps.join(''); });
  }

  it('a NUL character in any text field is refused with 400 on that field (or stored), never a 500', async () => {
    const { token } = await svc.newOrg();
    const agent = await createAgent(token);
    const cases = fc.oneof(
      withNul(AgentCreateSchema.properties.name).map((v) => ['POST', `${REST}/agents`, { name: v }, 'name'] as const),
      withNul(AgentPatchSchema.properties.name).map((v) => ['PATCH', `${REST}/agents/${agent.id}`, { name: v }, 'name'] as const),
      withNul(AgentPatchSchema.properties.persona).map((v) => ['PATCH', `${REST}/agents/${agent.id}`, { persona: v }, 'persona'] as const),
      withNul(AgentPatchSchema.properties.voice).map((v) => ['PATCH', `${REST}/agents/${agent.id}`, { voice: v }, 'voice'] as const),
      withNul(ApiKeyCreateSchema.properties.name).map((v) => ['POST', `${REST}/api-keys`, { name: v, permissions: [] }, 'name'] as const),
    );
    await property(cases, async ([method, path, body, field]) => {
      const what = `${method} ${path} ${show(body)}`;
      const res = await call(svc.url, method, path, { token, body });
      expectNo5xx(res, what);
      if (res.status >= 400) expectValidationError(res, [field], what);
    }, 40);
  }, 90_000);

  it('ids in every form the uuid format admits (urn:uuid:, upper case) answer 404 when unknown, never a 500', async () => {
    const forms = fc.tuple(fc.uuid(), fc.constantFrom('plain', 'upper', 'urn', 'URN'), fc.constantFrom(
      ['GET', 'agents'], ['PATCH', 'agents'], ['DELETE', 'agents'], ['GET', 'api-keys'], ['DELETE', 'api-keys'],
    ) as fc.Arbitrary<[string, string]>);
    await property(forms, async ([uuid, form, [method, family]]) => {
      const id = form === 'upper' ? uuid.toUpperCase() : form === 'urn' ? `urn:uuid:${uuid}` : form === 'URN' ? `URN:UUID:${uuid.toUpperCase()}` : uuid;
      const what = `${method} ${REST}/${family}/${id}`;
      const res = await call(svc.url, method, `${REST}/${family}/${id}`, { token: admin, body: method === 'PATCH' ? {} : undefined });
      expectNo5xx(res, what);
      expect(res.status, what).toBe(404);
      expect(expectWellFormedProblem(res, what).code).toBe('not_found');
    }, 40);
  }, 90_000);

  it('non-finite numbers in limit and offset (Infinity, 1e400) are 400 on that parameter, never a 500', async () => {
    const { token } = await svc.newOrg();
    const cases = fc.tuple(
      fc.constantFrom('limit', 'offset'),
      fc.constantFrom('Infinity', '-Infinity', '+Infinity', '1e400', '-1e400', '9'.repeat(400)),
      fc.constantFrom('agents', 'api-keys'),
    );
    await property(cases, async ([param, value, family]) => {
      const path = `${REST}/${family}?${param}=${encodeURIComponent(value)}`;
      const res = await call(svc.url, 'GET', path, { token });
      expectNo5xx(res, `GET ${path}`);
      expectValidationError(res, [param], `GET ${path}`);
    }, 30);
  }, 90_000);

  it('an unknown key made of digits is reported under its own name', async () => {
    const { token } = await svc.newOrg();
    const agent = await createAgent(token);
    const cases = fc.tuple(fc.stringMatching(/^\d{1,4}$/), fc.constantFrom('POST', 'PATCH'), jsonJunk);
    await property(cases, async ([key, method, value]) => {
      const path = method === 'POST' ? `${REST}/agents` : `${REST}/agents/${agent.id}`;
      const body = method === 'POST' ? { name: 'n', [key]: value } : { [key]: value };
      const what = `${method} ${path} ${show(body)}`;
      const res = await call(svc.url, method, path, { token, body });
      expectValidationError(res, [key], what);
    }, 30);
  }, 90_000);
});

