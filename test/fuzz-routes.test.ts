import { randomBytes, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAMILIES } from '../api/app.ts';
import type { RouteDef } from '../api/routing.ts';
import { call, startTestService, type ApiResponse, type TestService } from './helpers.ts';
import { newAgent, newOrg, type Api } from './support/orgs.ts';
import { expectWellFormedProblem } from './support/problems.ts';
import { PERMISSIONS } from '../src/schemas/permissions.ts';
import {
  bodyCases, encode, expectNo5xx, expectValidationError, property, queryCases, queryString, show, type Json, type Schema,
} from './support/fuzz.ts';

/**
 * Every route of the route table, fuzzed from its own schemas: path ids (a real resource of the
 * caller's organization, another organization's, unknown, malformed), query strings and bodies
 * (valid ones and near misses, see support/fuzz.ts). Properties: no answer is ever 5xx (which, in
 * test mode, includes a response off its declared schema); every 4xx is a well-formed problem; a
 * near-miss query or body is 400 naming the broken field (400 comes before 404).
 *
 * Each route gets an organization of its own with one resource of every kind, so that a DELETE
 * fuzzed on one route leaves the others' targets alone.
 */

const FUZZ_RUNS_PER_ROUTE = 12;
const ROUTES = FAMILIES.flatMap((family) => family.routes.map((def) => ({ def, path: family.base + def.path, isPublic: family.public === true })));

let svc: TestService;
let other: Fixture;

beforeAll(async () => {
  // The live stream ends after LIVE_STREAM_MAX_SECONDS: a second here, so each fuzzed request reads a whole answer.
  svc = await startTestService({ RATE_LIMIT_PER_MINUTE: 1_000_000, PUBLIC_RATE_LIMIT_PER_MINUTE: 1_000_000, AUTH_FAILURE_LIMIT_PER_MINUTE: 1_000_000, ALLOW_PRIVATE_NETWORK_TARGETS: true, LIVE_STREAM_MAX_SECONDS: 1 }, { worker: false });
  other = await fixture();
});
afterAll(async () => { await svc?.stop(); });

/** One resource of every kind, in a fresh organization. */
interface Fixture {
  api: Api;
  token: string;
  ids: Record<string, string>;
  visitorToken: string;
  /** A member's user-scoped (`ut_`) token with every permission, for the routes only a person may call. */
  userToken: string;
}

async function created(res: Promise<ApiResponse>, what: string): Promise<Record<string, any>> {
  const r = await res;
  expect(r.status, `${what}: ${r.text}`).toBeLessThan(300);
  return r.body as Record<string, any>;
}

async function fixture(): Promise<Fixture> {
  const { api, token } = await newOrg(svc);
  const agent = await newAgent(api, 'Fuzzed');
  const second = await newAgent(api, 'Target');
  const site = await created(api.post(`/api/v1/rest/agents/${agent.id}/site`, { url: 'https://example.com/' }), 'site');
  const rule = await created(api.post(`/api/v1/rest/agents/${agent.id}/transfer-rules`, {
    name: 'Billing', condition: 'The caller asks about an invoice', destination_phone: '+14155550123',
  }), 'transfer rule');
  const key = await created(api.post('/api/v1/rest/api-keys', { name: 'fuzz', permissions: ['agents.read'] }), 'api key');
  const member = await created(api.post('/api/v1/rest/api-keys', {
    name: 'fuzz member', permissions: [...PERMISSIONS], user_email: `fuzz-${randomBytes(4).toString('hex')}@example.com`,
  }), 'user token');
  const webhook = await created(api.post('/api/v1/rest/webhooks', { url: 'http://127.0.0.1:9/fuzz', events: ['*'] }), 'webhook');
  const profile = await created(api.post('/api/v1/rest/voice-profiles', { name: 'Fuzz', base_voice: 'alloy' }), 'voice profile');
  const trunk = await created(api.post('/api/v1/rest/sip-trunks', { label: 'PBX', sip_host: 'pbx.example.com', sip_username: 'u', password: 'pw-123456' }), 'sip trunk');
  const inbox = await created(api.post('/api/v1/rest/email-inboxes', {
    widget_id: agent.id, address: `fuzz-${randomBytes(5).toString('hex')}@example.com`, sender_name: 'Support',
  }), 'email inbox');
  const kb = await created(api.post('/api/v1/rest/knowledge-bases', { name: 'Docs' }), 'knowledge base');
  const contact = await created(api.post('/api/v1/rest/contacts', { email_lower: `fuzz-${randomBytes(5).toString('hex')}@example.com` }), 'contact');
  const person = await created(api.post('/api/v1/rest/members', { email: `fuzz-${randomBytes(4).toString('hex')}@example.com`, name: 'Fuzz' }), 'member');
  const team = await created(api.post('/api/v1/rest/teams', { name: 'Fuzzers', member_ids: [person.id], agent_ids: [agent.id] }), 'team');
  const canned = await created(api.post('/api/v1/rest/canned-responses', { short_code: 'fuzz', text: 'Hello {{visitor.name}}' }), 'canned response');
  const started = await created(call(svc.url, 'POST', `/api/v1/public/widgets/${agent.public_key}/conversations`, {
    body: { page_url: 'https://example.com/' }, headers: { origin: 'https://example.com' },
  }), 'conversation');
  return {
    api, token, visitorToken: started.visitor_token, userToken: member.token,
    ids: {
      agent: agent.id, second: second.id, public_key: agent.public_key, site: site.id, rule: rule.id, key: key.id, webhook: webhook.id,
      profile: profile.id, trunk: trunk.id, inbox: inbox.id, kb: kb.id, contact: contact.id, conversation: started.conversation_id,
      member: person.id, team: team.id, canned: canned.id,
    },
  };
}

/** Which fixture resource a path parameter names, from the path segment before it. */
function resourceOf(path: string, param: string): string | null {
  const before = path.split(`/:${param}`)[0]!.split('/').at(-1);
  if (param === 'public_key' || before === 'widgets') return 'public_key';
  if (param === 'ruleId') return 'rule';
  if (param === 'agentId') return 'second';
  if (param === 'deliveryId') return null;
  const byCollection: Record<string, string> = {
    agents: 'agent', 'api-keys': 'key', webhooks: 'webhook', 'voice-profiles': 'profile', 'sip-trunks': 'trunk', 'email-inboxes': 'inbox',
    sites: 'site', 'knowledge-bases': 'kb', conversations: 'conversation', contacts: 'contact',
    members: 'member', teams: 'team', 'canned-responses': 'canned',
  };
  return byCollection[before ?? ''] ?? null;
}

type IdForm = 'own' | 'foreign' | 'unknown' | 'malformed';

/** A value of one path parameter: the organization's own resource most often, else another organization's, an unknown or a malformed one. */
function paramValue(own: Fixture, path: string, param: string, schema: Schema): fc.Arbitrary<[string, IdForm]> {
  const resource = resourceOf(path, param);
  const widgetLike = String(schema.pattern ?? '').startsWith('^wgt_');
  const unknown = widgetLike ? fc.constant(`wgt_${randomBytes(18).toString('base64url')}`) : fc.uuid();
  // Not `.` or `..`: URL resolution would turn those into another path before the request leaves.
  const malformed = fc.oneof(fc.string({ minLength: 1, maxLength: 40 }), fc.constantFrom('0', 'null', 'undefined', '...', '%00', 'wgt_', 'wgt_short', `${randomUUID()}x`))
    .filter((v) => v !== '.' && v !== '..');
  return fc.oneof(
    ...(resource ? [{ weight: 6, arbitrary: fc.constant<[string, IdForm]>([own.ids[resource]!, 'own']) }] : []),
    ...(resource ? [{ weight: 1, arbitrary: fc.constant<[string, IdForm]>([other.ids[resource]!, 'foreign']) }] : []),
    { weight: 1, arbitrary: unknown.map((v): [string, IdForm] => [v, 'unknown']) },
    { weight: 1, arbitrary: malformed.map((v): [string, IdForm] => [v, 'malformed']) },
  );
}

/** Ids a body may name: the organization's own resources as well as random ones the schema generates. */
function bodyOverrides(own: Fixture, schema: Schema): Record<string, fc.Arbitrary<Json>> {
  const props = (schema.properties ?? {}) as Record<string, Schema>;
  const out: Record<string, fc.Arbitrary<Json>> = {};
  const own_ = (name: string) => fc.constant(own.ids[name]!);
  const choices: Record<string, fc.Arbitrary<Json>> = {
    widget_id: String(props.widget_id?.pattern ?? '').startsWith('^wgt_') ? own_('public_key') : own_('agent'),
    target_agent_id: own_('second'), agent_id: own_('second'), sip_trunk_id: own_('trunk'), voice_profile_id: own_('profile'),
    member_id: own_('member'), conversation_id: own_('conversation'),
  };
  for (const [key, arb] of Object.entries(choices)) if (props[key]) out[key] = arb;
  return out;
}

interface RouteCase {
  params: [string, string, IdForm][];
  query: { valid: boolean; text: string; fields: string[] };
  body: { valid: boolean; value: Json | undefined; fields: string[]; label: string };
  visitor: boolean;
}

function routeCases(own: Fixture, def: RouteDef, path: string): fc.Arbitrary<RouteCase> {
  const paramProps = ((def.params as Schema | undefined)?.properties ?? {}) as Record<string, Schema>;
  const params = fc.tuple(...Object.entries(paramProps).map(([name, schema]) =>
    paramValue(own, path, name, schema).map(([value, form]): [string, string, IdForm] => [name, value, form])));
  const query = def.query
    ? queryCases(def.query as Schema).map((q) => ({ valid: q.valid, text: queryString(q.query), fields: q.fields }))
    : fc.constant({ valid: true, text: '', fields: [] as string[] });
  const body = def.body
    ? fc.oneof(
      { weight: 3, arbitrary: bodyCases(def.body as Schema, { valid: bodyOverrides(own, def.body as Schema) }).map((c) => ({ valid: c.valid, value: c.body, fields: c.fields, label: c.label })) },
      { weight: 1, arbitrary: fc.constant({ valid: !((def.body as Schema).required ?? []).length, value: undefined as Json | undefined, fields: (def.body as Schema).required ?? [], label: 'no body' }) },
    )
    : def.method === 'GET' ? fc.constant({ valid: true, value: undefined as Json | undefined, fields: [] as string[], label: 'no body' })
    : fc.oneof(
      { weight: 4, arbitrary: fc.constant({ valid: true, value: undefined as Json | undefined, fields: [] as string[], label: 'no body' }) },
      { weight: 1, arbitrary: fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { minKeys: 1, maxKeys: 3 })
        .map((value) => ({ valid: false, value: value as Json | undefined, fields: [''], label: 'unexpected body' })) },
    );
  return fc.record({ params, query, body, visitor: fc.boolean() });
}

function urlOf(path: string, c: RouteCase): string {
  let url = path;
  for (const [name, value] of c.params) url = url.replace(`:${name}`, encode(value));
  return url + c.query.text;
}

/**
 * Routes whose valid requests wait for a workflow to finish (a web simulation runs Chromium, synchronously,
 * for up to 5 minutes). This service runs no worker, so a valid request would wait out its deadline: the
 * fuzz sends such routes only requests that break something, and their valid path is tested where a
 * worker runs (test/simulations-browser.test.ts).
 */
const WAITS_FOR_A_WORKFLOW = new Set(['POST /api/v1/rest/simulations/web']);

describe('fuzz: every route of the route table', () => {
  it('covers every route the API serves', () => {
    expect(ROUTES.length).toBeGreaterThanOrEqual(80);
    expect(new Set(ROUTES.map((r) => `${r.def.method} ${r.path}`)).size).toBe(ROUTES.length);
  });

  for (const { def, path, isPublic } of ROUTES) {
    it(`${def.method} ${path}: never 5xx; problems well-formed; near-miss queries and bodies are 400 on the broken field`, async () => {
      const own = await fixture();
      const cases = routeCases(own, def, path);
      await property(WAITS_FOR_A_WORKFLOW.has(`${def.method} ${path}`) ? cases.filter((c) => !c.query.valid || !c.body.valid || c.params.some(([, , form]) => form !== 'own')) : cases, async (c) => {
        const url = urlOf(path, c);
        const what = `${def.method} ${url} ${c.body.label} ${show(c.body.value)}`;
        const headers: Record<string, string> = { origin: 'https://example.com' };
        if (c.visitor) headers['x-visitor-token'] = own.visitorToken;
        const res = await call(svc.url, def.method, url, {
          token: isPublic ? undefined : def.userToken ? own.userToken : own.token, headers,
          body: c.body.value === undefined ? undefined : JSON.stringify(c.body.value),
        });
        expectNo5xx(res, what);
        if (res.status >= 400) expectWellFormedProblem(res, what);
        if (!c.query.valid) expectValidationError(res, c.query.fields, what);
        else if (!c.body.valid) expectValidationError(res, c.body.fields, what);
      }, FUZZ_RUNS_PER_ROUTE);
    }, 120_000);
  }
});
