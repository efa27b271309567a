import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, eventually, indexedByMeaning, startTestService, type TestService } from './helpers.ts';
import { startFixtureSite, type FixtureSite } from '../fixtures/fixture-site.ts';
import { workflowIds } from '../src/temporal/index.ts';

// Long enough that a visitor's next request comes well within it on a loaded machine: at 3 s, the first test's
// conversation was once ended by inactivity between its last message and the visitor's own end.
const SETTINGS = { ALLOW_PRIVATE_NETWORK_TARGETS: true, CRAWL_DELAY_MS: 0, CONVERSATION_INACTIVITY_SECONDS: 12 } as const;

let svc: TestService;
let web: FixtureSite;
beforeAll(async () => {
  svc = await startTestService(SETTINGS);
  web = await startFixtureSite({ pages: 6 });
  web.setPage('/articles/5', '<html><head><title>Moorings</title></head><body><nav>Menu</nav><article><h1>Moorings</h1>'
    + '<p>Winter mooring at Blue Lagoon Marina costs 42 euros per metre per month, electricity included.</p>'
    + '<p>Summer berths are booked through the harbour master.</p></article><footer>Footer boilerplate</footer></body></html>');
});
afterAll(async () => {
  await svc?.stop();
  await web?.close();
});

const REST = '/api/v1/rest';
const PUBLIC = '/api/v1/public/widgets';
const ORIGIN = 'https://boats.example.com';

/** A request from a visitor's browser on `origin`. */
async function visitor(method: string, path: string, opts: { body?: unknown; token?: string; origin?: string | null } = {}) {
  const headers: Record<string, string> = {};
  if (opts.origin !== null) headers.origin = opts.origin ?? ORIGIN;
  if (opts.token) headers['x-visitor-token'] = opts.token;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(svc.url + path, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined, text };
}

async function crawledAgent(config: Record<string, unknown> = {}) {
  const { token, orgId } = await svc.newOrg();
  const api = client(svc.url, token);
  const agent = (await api.post(`${REST}/agents`, { name: 'Marina', site_url: web.url })).body;
  await indexedByMeaning(api, agent.id);
  const patched = await api.patch(`${REST}/agents/${agent.id}`, config);
  expect(patched.status, patched.text).toBe(200);
  return { api, orgId, agent: patched.body };
}

const events = async (orgId: string) =>
  svc.sql<{ type: string; data: any }[]>`select type, data from events where org_id = ${orgId} and type like 'conversation.%' order by created_at, id`;

describe('a visitor conversation through the public endpoints', () => {
  it('runs from greeting to evaluation, grounded in the crawled site, with all three events and a usage record', async () => {
    const { api, orgId, agent } = await crawledAgent({
      greeting: 'Welcome to the marina!', domains: ['boats.example.com'],
      goals: ['Capture the visitor email'], acceptance_criteria: ['Greets the visitor'],
      data_schema: [{ name: 'email', type: 'email', description: 'The visitor email address', required: true }],
    });
    const config = await visitor('GET', `${PUBLIC}/${agent.public_key}/config`);
    expect(config.status, config.text).toBe(200);
    expect(config.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(config.body).toMatchObject({ widget_id: agent.public_key, status: 'active', accepting_conversations: true, theme: agent.theme });

    const started = await visitor('POST', `${PUBLIC}/${agent.public_key}/conversations`, { body: { page_url: `${ORIGIN}/pricing`, language: 'en', visitor_id: 'browser-skipper-1' } });
    expect(started.status, started.text).toBe(201);
    const { conversation_id: id, visitor_token: token, visitor_id: visitorId } = started.body;
    expect(visitorId).toBe('browser-skipper-1');
    expect(started.body.messages).toEqual([{ id: expect.any(String), role: 'agent', text: expect.stringContaining('Welcome to the marina'), ts: expect.any(String) }]);

    const answer = await visitor('POST', `${PUBLIC}/${agent.public_key}/conversations/${id}/messages`, { token, body: { text: 'How much does winter mooring cost?' } });
    expect(answer.status, answer.text).toBe(200);
    const reply = answer.body.messages.map((m: any) => m.text).join(' ');
    expect(reply).toContain('42 euros');
    expect(answer.body.messages.every((m: any) => m.role === 'agent')).toBe(true);

    const email = await visitor('POST', `${PUBLIC}/${agent.public_key}/conversations/${id}/messages`, { token, body: { text: 'You can reach me at Skipper@Example.org' } });
    expect(email.status).toBe(200);

    const all = await visitor('GET', `${PUBLIC}/${agent.public_key}/conversations/${id}/messages`, { token });
    expect(all.body.messages.map((m: any) => m.role)).toEqual(['agent', 'visitor', 'agent', 'visitor', ...all.body.messages.slice(4).map(() => 'agent')]);
    const after = await visitor('GET', `${PUBLIC}/${agent.public_key}/conversations/${id}/messages?after=${all.body.messages[2].id}`, { token });
    expect(after.body.messages).toEqual(all.body.messages.slice(3));

    const ended = await visitor('POST', `${PUBLIC}/${agent.public_key}/conversations/${id}/end`, { token });
    expect(ended.status, ended.text).toBe(200);
    expect(ended.body).toMatchObject({ conversation_id: id, status: 'ended' });
    expect((await visitor('POST', `${PUBLIC}/${agent.public_key}/conversations/${id}/messages`, { token, body: { text: 'hello?' } })).body.code).toBe('invalid_state');

    const got = await eventually(async () => {
      const list = await events(orgId);
      return list.length === 3 && list;
    }, 30_000);
    expect(got.map((e) => e.type)).toEqual(['conversation.started', 'conversation.ended', 'conversation.evaluated']);
    expect(got[0]!.data.conversation).toMatchObject({ id, widget_id: agent.id, surface: 'web', status: 'active', page_url: `${ORIGIN}/pricing` });
    expect(got[1]!.data.conversation).toMatchObject({ id, status: 'ended' });
    const evaluated = got[2]!.data.conversation;
    expect(evaluated.extracted_data).toMatchObject({ email: 'skipper@example.org' });
    expect(evaluated.criteria_results).toEqual(expect.arrayContaining([
      expect.objectContaining({ criterion: 'Capture the visitor email', verdict: 'pass' }),
      expect.objectContaining({ criterion: 'Greets the visitor', verdict: 'pass' }),
    ]));
    expect(typeof evaluated.intent).toBe('string');
    expect(['resolved', 'unresolved', 'handoff_requested', 'abandoned']).toContain(evaluated.outcome);

    const [row] = await svc.sql<any[]>`select tool_calls, ended_reason, evaluation_status from conversations where id = ${id}`;
    expect(row.ended_reason).toBe('visitor');
    expect(row.evaluation_status).toBe('completed');
    expect(row.tool_calls.map((c: any) => c.name)).toContain('search_knowledge');
    expect(row.tool_calls.every((c: any) => typeof c.ts === 'string' && typeof c.args === 'object')).toBe(true);
    const [usage] = await svc.sql<any[]>`select * from usage_records where conversation_id = ${id}`;
    expect(usage).toMatchObject({ agent_id: agent.id, surface: 'web', messages: all.body.messages.length });
    // Whole seconds between the conversation's start and end, as they read at millisecond precision.
    const [times] = await svc.sql<{ started_at: Date; ended_at: Date }[]>`select started_at, ended_at from conversations where id = ${id}`;
    expect(usage.duration_seconds).toBe(Math.max(0, Math.round((times!.ended_at.getTime() - times!.started_at.getTime()) / 1000)));

    // The lifecycle workflow carries the search attributes an operator filters by.
    const handle = svc.temporal.workflow.getHandle(workflowIds.conversation(id));
    await handle.result();
    const described = await handle.describe();
    expect(described.status.name).toBe('COMPLETED');
    expect(described.searchAttributes).toMatchObject({ OrganizationId: [orgId], AgentId: [agent.id] });
    const evaluation = await svc.temporal.workflow.getHandle(workflowIds.conversationEvaluation(id)).describe();
    expect(evaluation.searchAttributes).toMatchObject({ OrganizationId: [orgId], AgentId: [agent.id] });

    // The email made a contact of the visitor, with the conversation counted and the data as facts.
    const contacts = await api.get(`${REST}/contacts?search=skipper`);
    expect(contacts.status, contacts.text).toBe(200);
    expect(contacts.body.data).toHaveLength(1);
    const contact = contacts.body.data[0];
    expect(contact).toMatchObject({ email_lower: 'skipper@example.org', conversation_count: 1, facts: { email: 'skipper@example.org' } });
    expect((await svc.sql`select contact_id from conversations where id = ${id}`)[0]!.contact_id).toBe(contact.id);
    // The same browser comes back: the new conversation is the same contact's from its start.
    const again = await visitor('POST', `${PUBLIC}/${agent.public_key}/conversations`, { body: { page_url: `${ORIGIN}/`, visitor_id: 'browser-skipper-1' } });
    expect(again.status).toBe(201);
    expect((await svc.sql`select contact_id from conversations where id = ${again.body.conversation_id}`)[0]!.contact_id).toBe(contact.id);
    expect((await api.get(`${REST}/contacts/${contact.id}`)).body.conversation_count).toBe(2);
  }, 90_000);

  it('ends a quiet conversation after the inactivity timeout and evaluates it', async () => {
    const { orgId, agent } = await crawledAgent();
    const started = await visitor('POST', `${PUBLIC}/${agent.public_key}/conversations`, { body: { page_url: `${ORIGIN}/` } });
    expect(started.status).toBe(201);
    const id = started.body.conversation_id;
    await visitor('POST', `${PUBLIC}/${agent.public_key}/conversations/${id}/messages`, { token: started.body.visitor_token, body: { text: 'Do you sell xylophones?' } });
    const types = await eventually(async () => {
      const list = (await events(orgId)).map((e) => e.type);
      return list.length === 3 && list;
    }, 60_000);
    expect(types).toEqual(['conversation.started', 'conversation.ended', 'conversation.evaluated']);
    const [row] = await svc.sql<any[]>`select status, ended_reason, ended_at, last_activity_at from conversations where id = ${id}`;
    expect(row).toMatchObject({ status: 'ended', ended_reason: 'inactivity' });
    expect(row.ended_at.getTime()).toBe(row.last_activity_at.getTime());
    // A crawl, then a workflow timer and an evaluation: under a loaded machine this takes a while.
  }, 120_000);
});

describe('public endpoint rules', () => {
  it('a paused agent\'s widget loads but refuses to start', async () => {
    const { api, agent } = await crawledAgent();
    await api.patch(`${REST}/agents/${agent.id}`, { status: 'paused' });
    const config = await visitor('GET', `${PUBLIC}/${agent.public_key}/config`);
    expect(config.body).toMatchObject({ status: 'paused', accepting_conversations: false });
    const refused = await visitor('POST', `${PUBLIC}/${agent.public_key}/conversations`, { body: { page_url: `${ORIGIN}/` } });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('agent_paused');
    expect(refused.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect((await svc.sql`select 1 from conversations where agent_id = ${agent.id}`).length).toBe(0);
  }, 60_000);

  it('domains decide which origins may use the widget; CORS preflight; tokens and ids', async () => {
    const { api, agent } = await crawledAgent({ domains: ['*.boats.example.com', 'boats.example.com'] });
    const path = `${PUBLIC}/${agent.public_key}`;
    for (const origin of ['https://evil.example.net', 'null', null]) {
      const res = await visitor('GET', `${path}/config`, { origin });
      expect(res.status, String(origin)).toBe(403);
      expect(res.body.code).toBe('origin_not_allowed');
      expect((await visitor('POST', `${path}/conversations`, { origin, body: { page_url: `${ORIGIN}/` } })).status).toBe(403);
    }
    expect((await visitor('GET', `${path}/config`, { origin: 'https://shop.boats.example.com:8443' })).status).toBe(200);

    const preflight = await fetch(svc.url + `${path}/conversations`, {
      method: 'OPTIONS', headers: { origin: ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-visitor-token' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/X-Visitor-Token/i);

    const started = (await visitor('POST', `${path}/conversations`, { body: { page_url: `${ORIGIN}/`, visitor_id: 'visitor-1234' } })).body;
    expect(started.visitor_id).toBe('visitor-1234');
    const msg = `${path}/conversations/${started.conversation_id}/messages`;
    expect((await visitor('POST', msg, { body: { text: 'hi' } })).status).toBe(401);
    expect((await visitor('POST', msg, { token: 'vt_wrong', body: { text: 'hi' } })).status).toBe(401);
    expect((await visitor('POST', msg, { token: started.visitor_token, body: { text: '' } })).status).toBe(400);
    expect((await visitor('POST', msg, { token: started.visitor_token, body: { text: 'x'.repeat(4001) } })).status).toBe(400);
    // Another agent's widget id with this conversation: 404.
    const other = (await api.post(`${REST}/agents`, { name: 'Other' })).body;
    expect((await visitor('POST', `${PUBLIC}/${other.public_key}/conversations/${started.conversation_id}/messages`, { token: started.visitor_token, body: { text: 'hi' } })).status).toBe(404);
    expect((await visitor('GET', `${PUBLIC}/wgt_${'x'.repeat(24)}/config`)).status).toBe(404);
    expect((await visitor('POST', `${path}/conversations`, { body: { page_url: 'javascript:alert(1)' } })).status).toBe(400);
    expect((await visitor('POST', `${path}/conversations`, { body: { page_url: `${ORIGIN}/`, visitor_id: 'bad id!' } })).status).toBe(400);
  }, 60_000);
});

describe('public rate limit', () => {
  it('counts per client address, with RateLimit fields, and answers 429 with CORS and Retry-After past the limit', async () => {
    const limited = await startTestService({ PUBLIC_RATE_LIMIT_PER_MINUTE: 3 }, { worker: false });
    try {
      const { token } = await limited.newOrg();
      const agent = (await client(limited.url, token).post(`${REST}/agents`, { name: 'Limited' })).body;
      const get = () => fetch(`${limited.url}${PUBLIC}/${agent.public_key}/config`, { headers: { origin: ORIGIN } });
      for (let i = 0; i < 3; i++) {
        const ok = await get();
        expect(ok.status).toBe(200);
        expect(ok.headers.get('ratelimit')).toMatch(new RegExp(`^"public";r=${2 - i};t=\\d+$`));
      }
      const refused = await get();
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(refused.headers.get('access-control-allow-origin')).toBe(ORIGIN);
      expect(((await refused.json()) as any).code).toBe('rate_limited');
      // Authenticated traffic is counted per token, not here.
      expect((await client(limited.url, token).get(`${REST}/agents/${agent.id}`)).status).toBe(200);
    } finally {
      await limited.stop();
    }
  });
});
