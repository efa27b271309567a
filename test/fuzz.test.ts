import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentCreateSchema, AgentDeleteQuery, AgentListQuery, AgentPatchSchema, AgentSchema } from '../src/schemas/agents.ts';
import { ApiKeyCreateSchema } from '../src/schemas/api-keys.ts';
import { PERMISSIONS } from '../src/schemas/permissions.ts';
import { call, startTestService, type ApiResponse, type TestService } from './helpers.ts';
import {
  IDENTIFIER, MIB, bodyCases, branchOf, expectNo5xx, expectValidationError, identifier, jsonJunk, mapStrings, noLoneSurrogates, property, queryCases, queryString, recordValue, show, smallJson, stored, text, validValue, wellFormed,
  type Body, type Json, type RuleMiss, type Schema,
} from './support/fuzz.ts';
import { expectWellFormedProblem, WELL_FORMED_REQUEST_ID } from './support/problems.ts';

/**
 * Property-based fuzzing of the agents and api-keys endpoints. Request bodies and query strings
 * are generated from the very JSON Schemas the routes validate with: walking a schema gives both
 * valid values and near-miss invalid ones (wrong types, out-of-range values, over-long strings,
 * unknown keys, nulls, nested junk, unicode), each invalid one knowing which field it broke.
 *
 * Every shape of the agent schema is walked: Nullable unions, nested objects (`theme`, the
 * languages of `localized_copy`), arrays of objects, unique items, `Type.Record` dictionaries
 * (`config_variables`, and `phone_settings` of `Type.Unknown()` values), anchored patterns (hex
 * color, language tag, E.164) generated from the pattern itself. The fields with rules beyond the
 * schema (domains, timezone, config_variables, data_schema, voice_profile_id) have valid-by-
 * construction generators and near misses of their own that know the field path and code.
 *
 * Properties: no response is ever 5xx; every 4xx is a well-formed problem document; a rejected
 * request changes nothing; a valid one does what it says: a 2xx PATCH equals the next GET, which
 * equals what a small model of the merge and normalization rules (`expectedAgent`) predicts.
 *
 * Inputs found to make the service fail (a NUL character in a text field, an id of the form
 * `urn:uuid:<uuid>`, an unknown key made of digits, and those of the last describe block) have
 * properties of their own at the end, so that the general properties stay able to find anything else.
 */

const REST = '/api/v1/rest';

let svc: TestService;
let admin: string;

beforeAll(async () => {
  svc = await startTestService({ RATE_LIMIT_PER_MINUTE: 1_000_000, AUTH_FAILURE_LIMIT_PER_MINUTE: 1_000_000 }, { worker: false });
  admin = (await svc.newOrg()).token;
});
afterAll(async () => { await svc?.stop(); });

// ---------------------------------------------------------------------------------------------
// The agent configuration: generators for the rules beyond the schema, and a model of PATCH

const PATCH_PROPS = AgentPatchSchema.properties as Record<string, Schema>;
const BASIC_FIELDS = ['name', 'persona', 'voice', 'status'];
/** The configuration fields (every writable field but the basics columns). */
const CONFIG_FIELDS = Object.keys(PATCH_PROPS).filter((k) => !BASIC_FIELDS.includes(k));
const BASE_VOICES = branchOf(PATCH_PROPS.voice!, 'string').enum as string[];

/** What GET shows for a configuration field never set (or cleared with null): the specification's defaults, else null. */
const CONFIG_DEFAULTS: Record<string, Json> = {
  interruptions: 'allow', responsiveness: 'normal', theme: { mode: 'auto', primary: '#2563EB', radius: 12 },
  position: 'bottom_right', display_mode: 'floating', suggested_prompts: [], localized_copy: {}, show_label: true,
  launcher_icon_kind: 'default', domains: [], mcp_pill_enabled: false, mcp_ui_cards_enabled: false, cross_channel_memory: false,
  voicemail_behavior: 'leave_message', phone_settings: {}, live_chat_alerts: false, live_chat_alert_scope: 'all',
  satisfaction_survey: false,
};
const FRESH_CONFIG = Object.fromEntries(CONFIG_FIELDS.map((k) => [k, CONFIG_DEFAULTS[k] ?? null]));

// domains: hosts as people type them (mixed case, scheme, port, path, trailing dot, `*.`), with duplicates.
const hostLabel = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/).filter((l) => !l.startsWith('xn--'));
const hostName = fc.oneof(
  { weight: 4, arbitrary: fc.tuple(fc.array(hostLabel, { minLength: 1, maxLength: 3 }), fc.stringMatching(/^[a-z]{2,6}$/)).map(([labels, tld]) => [...labels, tld].join('.')) },
  { weight: 1, arbitrary: fc.ipV4() },
  { weight: 1, arbitrary: fc.constantFrom('localhost', 'example.com', 'www.example.co.uk', 'my-shop.example') },
);
const hostForm = (host: string) => fc.record({
  wildcard: fc.boolean(), scheme: fc.constantFrom('', '', 'https://', 'http://', 'HTTPS://'), dot: fc.boolean(),
  port: fc.constantFrom('', '', ':8443', ':80'), path: fc.constantFrom('', '', '/', '/shop/?q=1#top', '?x=1', '#f'), caseBits: fc.nat(),
}).map((f) => {
  const named = /[a-z]/.test(host) && host.includes('.');
  const cased = [...host].map((c, i) => ((f.caseBits >> (i % 31)) & 1 ? c.toUpperCase() : c)).join('');
  return `${f.scheme}${f.wildcard && named ? '*.' : ''}${cased}${f.dot ? '.' : ''}${f.port}${f.path}`;
});
const domainsValue = fc.array(hostName, { minLength: 1, maxLength: 4 }).chain((pool) =>
  fc.array(fc.constantFrom(...pool).chain(hostForm), { maxLength: 8 }));
/** The model of a `domains` entry's normalization, for the forms `hostForm` writes: the lower-case host, `*.` kept. */
const modelHost = (entry: string) => entry.replace(/^https?:\/\//i, '').replace(/[/?#].*$/, '').replace(/:\d+$/, '').replace(/\.$/, '').toLowerCase();
const BAD_HOSTS = ['exa mple.com', 'user@example.com', 'https://user:pw@example.com/', '*.com', '*', '*.', '-shop.example.com', 'shop-.example.com',
  'a..example.com', '.example.com', '[::1]', 'foo*.example.com', '*.*.example.com', 'ex_ample.com', `${'a'.repeat(64)}.com`, '*.1.2.3.4',
  '1.2.3.256', 'https://', ' ', 'example.com:port'];

// timezone: IANA zones (or null).
const knownZone = (tz: string) => { try { new Intl.DateTimeFormat('en', { timeZone: tz }); return true; } catch { return false; } };
const timezoneValue = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...Intl.supportedValuesOf('timeZone'), 'UTC', 'Etc/UTC', 'Etc/GMT+5', 'Etc/GMT-14') },
  { weight: 1, arbitrary: fc.constant(null) },
);
const unknownZone = fc.oneof(
  fc.constantFrom('Mars/Olympus_Mons', 'Europe/Atlantis', 'Nowhere', 'Europe/Paris/', 'Europe//Paris', 'America/New York', 'UTC+1', 'GMT+25', '+25:00', 'Local', ''),
  fc.stringMatching(/^[A-Z][a-z]{2,9}\/[A-Z][a-z]{2,11}$/),
).filter((tz) => !knownZone(tz));

// config_variables: identifier names but the reserved agent_name; string values.
const variableValue = validValue(recordValue(branchOf(PATCH_PROPS.config_variables!, 'object')));
const variables = fc.dictionary(identifier.filter((n) => n !== 'agent_name'), variableValue, { maxKeys: 5, noNullPrototype: true });
const notIdentifier = fc.oneof(
  fc.stringMatching(/^[0-9][A-Za-z0-9_]{0,8}$/),
  fc.constantFrom('1abc', 'my-var', 'a.b', 'a b', 'été', '$x', '', 'x!', 'agent name', 'agent-name'),
  fc.string({ maxLength: 10 }),
).filter((n) => !IDENTIFIER.test(n) && !n.includes('\u0000'));

// data_schema: items with unique names.
const dataField = validValue(branchOf(PATCH_PROPS.data_schema!, 'array').items) as fc.Arbitrary<Body>;
const dataFields = (minLength: number) => fc.uniqueArray(dataField, { minLength, maxLength: 5, selector: (f) => f.name });

/** Valid-by-construction generators of the PATCH fields with rules beyond the schema. */
const PATCH_VALID: Record<string, fc.Arbitrary<Json>> = {
  // Must name a voice profile of the organization: null only here, unknown ids are near misses.
  voice_profile_id: fc.constant(null),
  timezone: timezoneValue,
  domains: domainsValue,
  config_variables: fc.oneof({ weight: 4, arbitrary: variables }, { weight: 1, arbitrary: fc.constant(null) }),
  data_schema: fc.oneof({ weight: 4, arbitrary: dataFields(0) }, { weight: 1, arbitrary: fc.constant(null) }),
  // model.provider_id must name an LLM provider of the organization: null (or absent) only here, unknown ids are near misses.
  model: fc.oneof({ weight: 4, arbitrary: validValue(branchOf(PATCH_PROPS.model!, 'object')).map((m) => ({ ...(m as Body), provider_id: null })) }, { weight: 1, arbitrary: fc.constant(null) }),
};
for (const field of CONFIG_FIELDS) PATCH_VALID[field] = noLoneSurrogates(PATCH_VALID[field] ?? validValue(PATCH_PROPS[field]!));

/** Near misses of the rules beyond the schema; `foreignProfileId` is a voice profile of another organization. */
function patchRuleMisses(foreignProfileId: string): fc.Arbitrary<RuleMiss> {
  return fc.oneof(
    fc.tuple(domainsValue, fc.constantFrom(...BAD_HOSTS), fc.nat()).map(([list, bad, at]): RuleMiss => {
      const i = at % (list.length + 1);
      const value = [...list];
      value.splice(i, 0, bad);
      return { key: 'domains', value, fields: [`domains[${i}]`], code: 'invalid_domain' };
    }),
    fc.tuple(noLoneSurrogates(variables), fc.oneof(fc.constant('agent_name'), notIdentifier), fc.constantFrom('', 'x', 'Ada')).map(([vars, name, v]): RuleMiss => ({
      key: 'config_variables', value: { ...vars, [name]: v }, fields: [`config_variables.${name}`], code: name === 'agent_name' ? 'reserved_name' : 'invalid_identifier',
    })),
    dataFields(1).chain((list) => fc.tuple(fc.nat(list.length - 1), fc.nat(list.length), dataField).map(([from, at, item]): RuleMiss => {
      const value = [...list];
      value.splice(at, 0, { ...item, name: list[from]!.name });
      // Every later use of a name is the duplicate.
      const seen = new Set<Json>();
      const fields: string[] = [];
      value.forEach((f, i) => { if (seen.has(f.name)) fields.push(`data_schema[${i}].name`); seen.add(f.name); });
      return { key: 'data_schema', value: mapStrings(value, wellFormed), fields, code: 'duplicate_name' };
    })),
    unknownZone.map((tz): RuleMiss => ({ key: 'timezone', value: tz, fields: ['timezone'], code: 'invalid_timezone' })),
    fc.oneof(fc.uuid(), fc.constant(foreignProfileId)).map((id): RuleMiss => ({ key: 'voice_profile_id', value: id, fields: ['voice_profile_id'], code: 'unknown_voice_profile' })),
    fc.uuid().map((id): RuleMiss => ({ key: 'model', value: { provider_id: id }, fields: ['model.provider_id'], code: 'unknown_llm_provider' })),
    fc.constantFrom('draft', 'deleted', 'archived').map((status): RuleMiss => ({ key: 'status', value: status, fields: ['status'], code: 'invalid_value' })),
    fc.integer({ min: 16_400, max: 20_000 }).map((n): RuleMiss => ({ key: 'phone_settings', value: { notes: 'x'.repeat(n) }, fields: ['phone_settings'], code: 'too_large' })),
  );
}

/** `changes` merged into `current`, key by key: a null value removes its key (proto-safe: `__proto__` is a key like any other). */
function mergeRemovingNulls(current: Json, changes: Json): Body {
  const out = new Map(Object.entries((current ?? {}) as Body));
  for (const [k, v] of Object.entries(changes as Body)) {
    if (v === null) out.delete(k);
    else out.set(k, v);
  }
  return Object.fromEntries(out);
}

/**
 * The model of PATCH: the agent GET shows after `patch` applied to `before`, written from the
 * specification (independently of the service's code).
 */
function expectedAgent(before: Record<string, any>, patch: Body): Record<string, any> {
  const out: Record<string, any> = structuredClone(before);
  for (const [key, sent] of Object.entries(patch)) {
    const value = stored(sent) as any;
    switch (key) {
      case 'theme': out.theme = { ...before.theme, ...value }; break;
      case 'localized_copy': case 'phone_settings': out[key] = mergeRemovingNulls(before[key], value); break;
      case 'domains': out.domains = [...new Set((value as string[]).map(modelHost))]; break;
      case 'data_schema':
        out.data_schema = value && (value as Body[]).map((f) => ({ name: f.name, type: f.type, description: f.description ?? null, required: f.required ?? false }));
        break;
      case 'model':
        out.model = value && {
          provider_id: value.provider_id ?? null, model: value.model ?? null, temperature: value.temperature ?? null,
          max_tokens: value.max_tokens ?? null, reply_language: value.reply_language ?? 'auto',
        };
        break;
      case 'prompt_modules': case 'tracking_rules': out[key] = value && (value as Body[]).map((item) => ({ ...item, enabled: item.enabled ?? true })); break;
      default: out[key] = value === null ? (CONFIG_DEFAULTS[key] ?? null) : value;
    }
  }
  return out;
}

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

const AGENT_KEYS = Object.keys(AgentSchema.properties).sort();

async function createVoiceProfile(token: string): Promise<string> {
  const res = await call(svc.url, 'POST', `${REST}/voice-profiles`, { token, body: { name: 'fuzz profile', base_voice: BASE_VOICES[0] } });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

function expectAgentShape(agent: Record<string, any>, what: string): void {
  expect(Object.keys(agent).sort(), what).toEqual(AGENT_KEYS);
  expect(agent.id, what).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  expect(agent.public_key, what).toMatch(/^wgt_[A-Za-z0-9_-]{20,}$/);
  expect(agent.created_at, what).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  expect(agent.updated_at, what).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
}

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
      expect(Object.fromEntries(CONFIG_FIELDS.map((k) => [k, agent[k]])), `${what}: a new agent's configuration`).toEqual(FRESH_CONFIG);
      expect(agent.updated_at, what).toBe(agent.created_at);
      expect(res.headers.get('location'), what).toBe(`${REST}/agents/${agent.id}`);
      const read = await call(svc.url, 'GET', `${REST}/agents/${agent.id}`, { token });
      expect(read.body, what).toEqual(agent);
      expect(await agentsTotal(token)).toBe(before + 1);
    }, 250);
  }, 90_000);

  it('PATCH /agents/:id: a 2xx equals the next GET and the model of the merge rules; a near miss changes nothing', async () => {
    const { token } = await svc.newOrg();
    const foreignProfileId = await createVoiceProfile((await svc.newOrg()).token);
    const agents = [await createAgent(token), await createAgent(token, { name: 'with site', site_url: 'https://example.com/' })];
    const cases = bodyCases(AgentPatchSchema, { valid: PATCH_VALID, rules: patchRuleMisses(foreignProfileId) });
    await property(fc.tuple(cases, fc.nat({ max: agents.length - 1 })), async ([c, which]) => {
      const id = agents[which]!.id as string;
      const what = `PATCH /agents/:id ${c.label} ${show(c.body)}`;
      const before = (await call(svc.url, 'GET', `${REST}/agents/${id}`, { token })).body as Record<string, any>;
      const res = await call(svc.url, 'PATCH', `${REST}/agents/${id}`, { token, body: JSON.stringify(c.body) });
      expectNo5xx(res, what);
      const after = (await call(svc.url, 'GET', `${REST}/agents/${id}`, { token })).body as Record<string, any>;
      if (!c.valid) {
        expectValidationError(res, c.fields, what, c.code);
        expect(after, `${what}: a rejected PATCH changed the agent`).toEqual(before);
        return;
      }
      expect(res.status, `${what} -> ${res.text.slice(0, 500)}`).toBe(200);
      expectAgentShape(res.body, what);
      expect(res.body, `${what}: the PATCH response differs from the next GET`).toEqual(after);
      const patch = c.body as Body;
      const expected = expectedAgent(before, patch);
      expect({ ...after, updated_at: null }, `${what}: the agent differs from the model`).toEqual({ ...expected, updated_at: null });
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

  it('malformed path ids (random text, near-miss uuids) answer 404 (400 with a NUL) on every method of /agents/:id and /api-keys/:id', async () => {
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
      // A NUL in a path segment is refused as in a body (400), whatever the route.
      const nul = id.includes('\u0000');
      expect(res.status, `${what} -> ${res.text.slice(0, 300)}`).toBe(nul ? 400 : 404);
      expect(expectWellFormedProblem(res, what).code).toBe(nul ? 'validation_error' : 'not_found');
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
  /** Valid text for a field with one NUL inserted: PostgreSQL text and jsonb cannot hold U+0000. */
  function withNul(s: Schema): fc.Arbitrary<string> {
    return fc.tuple(validValue(branchOf(s, 'string')) as fc.Arbitrary<string>, fc.nat())
      .map(([v, at]) => { const cps = [...v]; cps.splice(at % (cps.length + 1), 0, '\u0000'); return cps.join(''); });
  }

  it('a NUL character in any text field is refused with 400 on that field (or stored in a text column), never a 500', async () => {
    const { token } = await svc.newOrg();
    const agent = await createAgent(token);
    const patch = `${REST}/agents/${agent.id}`;
    const object = (name: string) => branchOf(PATCH_PROPS[name]!, 'object');
    type NulCase = readonly [method: string, path: string, body: Body, field: string, mustRefuse: boolean];
    const cases = fc.oneof(
      withNul(AgentCreateSchema.properties.name).map((v): NulCase => ['POST', `${REST}/agents`, { name: v }, 'name', false]),
      withNul(PATCH_PROPS.name!).map((v): NulCase => ['PATCH', patch, { name: v }, 'name', false]),
      withNul(PATCH_PROPS.persona!).map((v): NulCase => ['PATCH', patch, { persona: v }, 'persona', false]),
      // voice is an enum: a base voice with a NUL inside is no base voice.
      withNul(PATCH_PROPS.voice!).map((v): NulCase => ['PATCH', patch, { voice: v }, 'voice', true]),
      // The configuration fields are jsonb, which cannot hold U+0000 either: always refused, at the nested path.
      withNul(PATCH_PROPS.greeting!).map((v): NulCase => ['PATCH', patch, { greeting: v }, 'greeting', true]),
      withNul(branchOf(PATCH_PROPS.guardrails!, 'array').items).map((v): NulCase => ['PATCH', patch, { guardrails: ['be kind', v] }, 'guardrails[1]', true]),
      withNul(branchOf(object('localized_copy').properties.fr, 'object').properties.intro_title).map((v): NulCase =>
        ['PATCH', patch, { localized_copy: { fr: { intro_title: v } } }, 'localized_copy.fr.intro_title', true]),
      withNul(recordValue(object('config_variables'))).map((v): NulCase => ['PATCH', patch, { config_variables: { company: v } }, 'config_variables.company', true]),
      withNul({ type: 'string', maxLength: 50 }).map((v): NulCase => ['PATCH', patch, { phone_settings: { note: v } }, 'phone_settings.note', true]),
      withNul({ type: 'string', minLength: 1, maxLength: 20 }).map((k): NulCase => ['PATCH', patch, { phone_settings: { [k]: 1 } }, 'phone_settings', true]),
      withNul(ApiKeyCreateSchema.properties.name).map((v): NulCase => ['POST', `${REST}/api-keys`, { name: v, permissions: [] }, 'name', false]),
    );
    await property(cases, async ([method, path, body, field, mustRefuse]) => {
      const what = `${method} ${path} ${show(body)}`;
      const res = await call(svc.url, method, path, { token, body });
      expectNo5xx(res, what);
      if (mustRefuse || res.status >= 400) expectValidationError(res, [field], what);
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

/**
 * Found by the configuration fuzzing (the general generators stay clear of these inputs, so
 * that they can find anything else). Each property fails until the service is fixed.
 */
describe('fuzz: service bugs found in the agent configuration', () => {
  /** Text with one lone surrogate (a high one before, or a low one after, a whole code point). */
  const withLoneSurrogate = fc.tuple(text(0, 20).map(wellFormed), fc.constantFrom('\ud800', '\udbff', '\udc00', '\udfff'), fc.nat())
    .map(([s, lone, at]) => { const cps = [...s]; cps.splice(at % (cps.length + 1), 0, lone); return cps.join(''); });
  const SURROGATE_TARGETS: [field: string, body: (v: string) => Body][] = [
    ['greeting', (v) => ({ greeting: v })],
    ['intro_title', (v) => ({ intro_title: v })],
    ['button_label', (v) => ({ button_label: v })],
    ['guardrails[0]', (v) => ({ guardrails: [v] })],
    ['suggested_prompts[0]', (v) => ({ suggested_prompts: [v] })],
    ['localized_copy.en.intro_title', (v) => ({ localized_copy: { en: { intro_title: v } } })],
    ['prompt_modules[0].content', (v) => ({ prompt_modules: [{ name: 'module', content: v }] })],
    ['config_variables.company', (v) => ({ config_variables: { company: v } })],
    ['phone_settings.note', (v) => ({ phone_settings: { note: v } })],
  ];

  // PATCH {"greeting": "a\ud800b"} -> 500 internal_error (PostgreSQL refuses the jsonb text
  // "\ud800"); name and persona, text columns, store the same input with U+FFFD.
  it('a lone surrogate in a configuration text field is stored as U+FFFD (as in name and persona) or refused on that field, never a 500', async () => {
    const { token } = await svc.newOrg();
    const agent = await createAgent(token);
    await property(fc.tuple(fc.constantFrom(...SURROGATE_TARGETS), withLoneSurrogate), async ([[field, make], value]) => {
      const body = make(value);
      const what = `PATCH /agents/:id ${show(body)}`;
      const before = (await call(svc.url, 'GET', `${REST}/agents/${agent.id}`, { token })).body as Record<string, any>;
      const res = await call(svc.url, 'PATCH', `${REST}/agents/${agent.id}`, { token, body: JSON.stringify(body) });
      expectNo5xx(res, what);
      const after = (await call(svc.url, 'GET', `${REST}/agents/${agent.id}`, { token })).body as Record<string, any>;
      if (res.status >= 400) {
        expectValidationError(res, [field], what);
        expect(after, `${what}: a rejected PATCH changed the agent`).toEqual(before);
        return;
      }
      expect({ ...after, updated_at: null }, what).toEqual({ ...expectedAgent(before, body), updated_at: null });
    }, 30);
  }, 90_000);

  // PATCH {"phone_settings": {"__proto__": {"a": 1}}} -> 200 but the key is gone: the merge assigns
  // out[key] = value, which for `__proto__` sets the prototype instead (config_variables, which is
  // replaced whole, keeps such a key).
  it('phone_settings keys named like Object.prototype members (__proto__, constructor, ...) are merged and stored like any other key', async () => {
    const { token } = await svc.newOrg();
    const agent = await createAgent(token);
    const keys = fc.constantFrom('__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', '__defineGetter__');
    await property(fc.tuple(keys, noLoneSurrogates(smallJson).filter((v) => v !== null)), async ([key, value]) => {
      const body = { phone_settings: { [key]: value } }; // a computed key: an own property, even `__proto__`
      const what = `PATCH /agents/:id ${JSON.stringify(body).slice(0, 300)}`;
      const before = (await call(svc.url, 'GET', `${REST}/agents/${agent.id}`, { token })).body as Record<string, any>;
      const res = await call(svc.url, 'PATCH', `${REST}/agents/${agent.id}`, { token, body: JSON.stringify(body) });
      expectNo5xx(res, what);
      expect(res.status, `${what} -> ${res.text.slice(0, 500)}`).toBe(200);
      const after = (await call(svc.url, 'GET', `${REST}/agents/${agent.id}`, { token })).body as Record<string, any>;
      const settings = after.phone_settings as Body;
      expect(Object.hasOwn(settings, key) ? settings[key] : '(missing)', `${what}: phone_settings ${show(settings)}`).toEqual(stored(value));
      expect(settings, what).toEqual(expectedAgent(before, body).phone_settings);
    }, 20);
  }, 90_000);

  // PATCH {"phone_settings": {"": 1}} and {"config_variables": {"v____…(65)": "x"}} -> 200: Type.Record
  // turns its key schema (phone_settings 1 to 100 characters, config_variables at most 64) into
  // patternProperties "^(.*)$", so the key limits the schema declares are never checked.
  it('the key limits the schema declares (phone_settings keys 1 to 100 characters, config_variables names at most 64) are enforced', async () => {
    const { token } = await svc.newOrg();
    const agent = await createAgent(token);
    const cases = fc.oneof(
      fc.constant({ body: { phone_settings: { '': 1 } } as Body, fields: ['phone_settings', 'phone_settings.'] as string[] }),
      fc.stringMatching(/^[a-z][a-z0-9_]{100,130}$/).map((key) => ({ body: { phone_settings: { [key]: 1 } } as Body, fields: ['phone_settings', `phone_settings.${key}`] })),
      fc.stringMatching(/^[a-z][a-z0-9_]{64,90}$/).map((name) => ({ body: { config_variables: { [name]: 'x' } } as Body, fields: ['config_variables', `config_variables.${name}`] })),
    );
    await property(cases, async ({ body, fields }) => {
      const what = `PATCH /agents/:id ${show(body)}`;
      const before = (await call(svc.url, 'GET', `${REST}/agents/${agent.id}`, { token })).body;
      const res = await call(svc.url, 'PATCH', `${REST}/agents/${agent.id}`, { token, body: JSON.stringify(body) });
      expectNo5xx(res, what);
      expectValidationError(res, fields, what);
      expect((await call(svc.url, 'GET', `${REST}/agents/${agent.id}`, { token })).body, `${what}: a rejected PATCH changed the agent`).toEqual(before);
    }, 10);
  }, 90_000);
});

