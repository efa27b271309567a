import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { FAMILIES } from '../api/app.ts';
import type { RouteDef, RouteFamily } from '../api/routing.ts';
import { client, eventually, startTestService, type TestService } from './helpers.ts';

let svc: TestService;
beforeAll(async () => { svc = await startTestService(); });
afterAll(async () => { await svc?.stop(); });

const REST = '/api/v1/rest';
const MISSING = '0190a5c4-0000-7000-8000-000000000000';
const COLD = { name: 'Billing', condition: 'The caller asks about an invoice', destination_phone: '+14155550123' };
type Json = Record<string, any>;

/** The official SDK client over Streamable HTTP, with a bearer token. */
async function mcp(token: string, url = svc.url): Promise<Client> {
  const c = new Client({ name: 'mcp-test', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL('/mcp', url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return c;
}

async function orgClient() {
  const { token, orgId } = await svc.newOrg();
  const api = client(svc.url, token);
  const tools = await mcp(token);
  return { token, orgId, api, tools };
}

async function keyWith(api: ReturnType<typeof client>, permissions: string[]): Promise<string> {
  const res = await api.post(`${REST}/api-keys`, { name: 'mcp', permissions });
  expect(res.status, res.text).toBe(201);
  return res.body.token;
}

async function callTool(c: Client, name: string, args: Json, meta?: Json): Promise<CallToolResult & { structuredContent: Json }> {
  return await c.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) }) as CallToolResult & { structuredContent: Json };
}

/** A successful call: structured content, and the same JSON as text. */
async function ok(c: Client, name: string, args: Json, meta?: Json): Promise<Json> {
  const result = await callTool(c, name, args, meta);
  expect(result.isError ?? false, JSON.stringify(result)).toBe(false);
  expect(result.content).toEqual([{ type: 'text', text: JSON.stringify(result.structuredContent) }]);
  return result.structuredContent;
}

/** A refused call: isError, and the problem body as structured content and as text. */
async function refused(c: Client, name: string, args: Json): Promise<Json> {
  const result = await callTool(c, name, args);
  expect(result.isError, JSON.stringify(result)).toBe(true);
  expect(JSON.parse((result.content as { text: string }[])[0]!.text)).toEqual(result.structuredContent);
  return result.structuredContent;
}

/** A raw JSON-RPC POST, to see the HTTP side of the transport. */
async function rawPost(body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${svc.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', ...headers },
    body: JSON.stringify(body),
  });
}

const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };

/** The route table itself: every operation that takes a token and answers once (an event stream is no tool). */
const isPublic = (f: RouteFamily) => f.public === true || f.base.startsWith('/api/v1/public');
const OPERATIONS: { def: RouteDef; base: string }[] = FAMILIES.flatMap((f) => (isPublic(f) ? [] : f.routes.filter((d) => !d.eventStream)).map((def) => ({ def, base: f.base })));

/** A schema as JSON, without TypeBox's symbols and component names. */
function json(schema: unknown): Json {
  return JSON.parse(JSON.stringify(schema), (_k, v) => {
    if (v && typeof v === 'object' && !Array.isArray(v) && typeof v.$id === 'string') {
      const { $id: _id, ...rest } = v;
      return rest;
    }
    return v;
  });
}

describe('MCP endpoint: transport and authentication', () => {
  it('initializes statelessly through the SDK client: server info, capabilities, no session id', async () => {
    const { token, tools } = await orgClient();
    expect(tools.getServerVersion()).toMatchObject({ name: 'agent-management-service' });
    expect(tools.getServerCapabilities()).toMatchObject({ tools: {}, resources: {}, prompts: {} });
    const res = await rawPost(INITIALIZE, { authorization: `Bearer ${token}`, 'x-request-id': 'mcp-init-1' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    expect(res.headers.get('x-request-id')).toBe('mcp-init-1');
    expect(res.headers.get('ratelimit-policy')).toBe('"default";q=1200;w=60');
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', id: 1, result: { serverInfo: { name: 'agent-management-service' } } });
    await tools.close();
  });

  it('answers 401 with WWW-Authenticate: Bearer without a token or with an unknown one, on every method', async () => {
    for (const headers of [{}, { authorization: 'Bearer sk_not_a_real_token' }] as Record<string, string>[]) {
      const res = await rawPost(INITIALIZE, headers);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await res.json()).toMatchObject({ status: 401, code: 'unauthorized', request_id: expect.any(String) });
    }
    for (const method of ['GET', 'DELETE']) expect((await fetch(`${svc.url}/mcp`, { method })).status).toBe(401);
    const sdk = new Client({ name: 'mcp-test', version: '1.0.0' });
    await expect(sdk.connect(new StreamableHTTPClientTransport(new URL('/mcp', svc.url)))).rejects.toThrow();
  });

  it('answers GET and DELETE with 405 and Allow: POST, as a stateless server does (no SSE stream, no session)', async () => {
    const { token, tools } = await orgClient();
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${svc.url}/mcp`, { method, headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(await res.json()).toMatchObject({ status: 405, code: 'method_not_allowed' });
    }
    // The SDK client takes the 405 as "no stream here" and keeps working.
    expect((await tools.listTools()).tools.length).toBeGreaterThan(0);
    await tools.close();
  });

  it('counts one MCP request once against the token\'s rate limit, however many REST calls it makes', async () => {
    const { token, api } = await orgClient();
    const agent = (await api.post(`${REST}/agents`, { name: 'Counted' })).body;
    const remaining = async () => {
      const res = await rawPost({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_agent', arguments: { agent_id: agent.id } } }, { authorization: `Bearer ${token}` });
      expect(res.status).toBe(200);
      expect((await res.json()).result.structuredContent.id).toBe(agent.id);
      return Number(/r=(\d+)/.exec(res.headers.get('ratelimit') ?? '')![1]);
    };
    const first = await remaining();
    expect(await remaining()).toBe(first - 1);
  });

  it('refuses past the rate limit with 429 and Retry-After, as REST does', async () => {
    const limited = await startTestService({ RATE_LIMIT_PER_MINUTE: 2 }, { worker: false });
    try {
      const { token } = await limited.newOrg();
      const post = () => fetch(`${limited.url}/mcp`, {
        method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(INITIALIZE),
      });
      expect((await post()).status).toBe(200);
      expect((await post()).status).toBe(200);
      const third = await post();
      expect(third.status).toBe(429);
      expect(third.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(await third.json()).toMatchObject({ code: 'rate_limited' });
    } finally {
      await limited.stop();
    }
  });

  it('carries the MCP request\'s id into the problem body of a refused call', async () => {
    const { token } = await orgClient();
    const res = await rawPost({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get_agent', arguments: { agent_id: MISSING } } },
      { authorization: `Bearer ${token}`, 'x-request-id': 'mcp-call-42' });
    expect(res.headers.get('x-request-id')).toBe('mcp-call-42');
    const body = await res.json();
    expect(body.result.isError).toBe(true);
    expect(body.result.structuredContent).toMatchObject({ status: 404, code: 'not_found', request_id: 'mcp-call-42' });
  });
});

describe('MCP tools generated from the route table', () => {
  it('lists one tool per operation of the route table that takes a token, named as the specification names them', async () => {
    const { tools } = await orgClient();
    const listed = (await tools.listTools()).tools;
    const names = listed.map((t) => t.name).sort();
    expect(names).toEqual(OPERATIONS.map((o) => o.def.operationId).sort());
    expect(new Set(names).size).toBe(names.length);
    for (const name of ['update_agent', 'create_transfer_rule', 'update_transfer_rule', 'get_transfer_rule', 'list_transfer_rules',
      'delete_transfer_rule', 'list_agents', 'get_agent', 'pause_widget', 'recrawl_site']) expect(names).toContain(name);
    for (const name of names) expect(name).toMatch(/^[a-z]+(_[a-z]+)+$/);
    // The visitor endpoints take no token: they are no tools.
    const visitor = FAMILIES.flatMap((f) => (isPublic(f) ? f.routes : []));
    expect(visitor.length).toBeGreaterThan(0);
    for (const r of visitor) expect(names).not.toContain(r.operationId);
    await tools.close();
  });

  it('gives every tool the input schema of its route: path ids, query parameters and body, from the same JSON Schemas', async () => {
    const { tools } = await orgClient();
    const listed = new Map((await tools.listTools()).tools.map((t) => [t.name, t] as const));
    for (const { def, base } of OPERATIONS) {
      const tool = listed.get(def.operationId)!;
      const schema = tool.inputSchema as Json;
      expect(schema.type).toBe('object');
      expect(schema.additionalProperties, def.operationId).toBe(false);
      const query = def.query ? json(def.query) : { properties: {}, required: [] };
      const body = def.body ? json(def.body) : { properties: {}, required: [] };
      const params = def.params ? json(def.params) : { properties: {} };
      const pathParams = [...(base + def.path).matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]!);
      const ids = Object.keys(schema.properties).filter((k) => !(k in query.properties) && !(k in body.properties));
      expect(ids.length, def.operationId).toBe(pathParams.length);
      pathParams.forEach((param, i) => {
        expect(ids[i], def.operationId).toMatch(/^[a-z_]+_id$|^[a-z_]+$/);
        expect(schema.properties[ids[i]!], `${def.operationId} ${param}`).toEqual(params.properties[param]);
      });
      for (const [name, prop] of Object.entries({ ...query.properties, ...body.properties })) {
        expect(schema.properties[name], `${def.operationId} ${name}`).toEqual(prop);
      }
      const withoutDefault = (s: Json) => (s.required ?? []).filter((n: string) => !('default' in s.properties[n]));
      expect(new Set(schema.required ?? []), def.operationId).toEqual(new Set([...ids, ...withoutDefault(query), ...withoutDefault(body)]));
      const a = tool.annotations!;
      expect(a.readOnlyHint, def.operationId).toBe(def.method === 'GET');
      if (def.method !== 'GET') {
        expect(a.destructiveHint, def.operationId).toBe(def.method === 'DELETE');
        expect(a.idempotentHint, def.operationId).toBe(def.method === 'PUT' || def.method === 'DELETE');
      }
      expect(tool.description, def.operationId).toContain(def.summary);
      for (const p of def.permissions) expect(tool.description, def.operationId).toContain(p);
    }
    await tools.close();
  });

  it('names path ids as the contract says', async () => {
    const { tools } = await orgClient();
    const listed = new Map((await tools.listTools()).tools.map((t) => [t.name, t] as const));
    const ids = (name: string) => (listed.get(name)!.inputSchema.required ?? []).filter((n) => n.endsWith('_id'));
    expect(ids('update_agent')).toEqual(['agent_id']);
    for (const name of ['get_transfer_rule', 'update_transfer_rule', 'delete_transfer_rule']) expect(ids(name)).toEqual(['agent_id', 'rule_id']);
    expect(ids('create_transfer_rule')).toEqual(expect.arrayContaining(['agent_id']));
    expect(ids('recrawl_site')).toEqual(['site_id']);
    expect(ids('pause_widget')).toEqual(['widget_id']);
    expect(ids('retry_webhook_delivery')).toEqual(['webhook_id', 'delivery_id']);
    expect(ids('detach_knowledge_base')).toEqual(['knowledge_base_id', 'agent_id']);
    expect(ids('get_email_inbox')).toEqual(['email_inbox_id']);
    await tools.close();
  });

  it('lists the tools a token may not call too, their descriptions naming the permission it lacks', async () => {
    const { api } = await orgClient();
    const reader = await mcp(await keyWith(api, ['agents.read']));
    const listed = new Map((await reader.listTools()).tools.map((t) => [t.name, t] as const));
    expect(listed.size).toBe(OPERATIONS.length);
    expect(listed.get('update_agent')!.description).toContain('This token lacks agents.write');
    expect(listed.get('get_agent')!.description).toContain('Needs the permission agents.read.');
    expect(listed.get('get_agent')!.description).not.toContain('lacks');
    await reader.close();
  });
});

describe('MCP tool calls run the REST handlers', () => {
  it('update_agent changes what GET then shows', async () => {
    const { api, tools } = await orgClient();
    const created = await ok(tools, 'create_agent', { name: 'Harbour desk' });
    expect(created).toMatchObject({ name: 'Harbour desk', status: 'active' });
    const updated = await ok(tools, 'update_agent', { agent_id: created.id, persona: 'A calm harbour master', greeting: 'Ahoy!', domains: ['harbour.example.com'] });
    expect(updated).toMatchObject({ id: created.id, persona: 'A calm harbour master', greeting: 'Ahoy!', domains: ['harbour.example.com'] });
    const rest = await api.get(`${REST}/agents/${created.id}`);
    expect(rest.body).toMatchObject({ persona: 'A calm harbour master', greeting: 'Ahoy!', domains: ['harbour.example.com'] });
    expect(await ok(tools, 'get_agent', { agent_id: created.id })).toEqual(rest.body);
    await tools.close();
  });

  it('creates, lists, reads, updates and deletes transfer rules', async () => {
    const { api, tools } = await orgClient();
    const agent = await ok(tools, 'create_agent', { name: 'Switchboard' });
    const rule = await ok(tools, 'create_transfer_rule', { agent_id: agent.id, ...COLD, priority: 5 });
    expect(rule).toMatchObject({ widget_id: agent.id, ...COLD, priority: 5, transfer_type: 'cold', enabled: true });
    const warm = await ok(tools, 'create_transfer_rule', { agent_id: agent.id, name: 'Sales', condition: 'Wants a quote', destination_phone: '+14155550124', transfer_type: 'warm', warm_brief: 'Quote request' });
    const list = await ok(tools, 'list_transfer_rules', { agent_id: agent.id });
    expect(list).toMatchObject({ total: 2, limit: 50, offset: 0 });
    expect(list.data.map((r: Json) => r.id)).toEqual([rule.id, warm.id]); // highest priority first
    expect(await ok(tools, 'list_transfer_rules', { agent_id: agent.id, limit: 1, offset: 1 })).toMatchObject({ data: [{ id: warm.id }], total: 2, limit: 1, offset: 1 });
    expect(await ok(tools, 'get_transfer_rule', { agent_id: agent.id, rule_id: rule.id })).toEqual(rule);
    const updated = await ok(tools, 'update_transfer_rule', { agent_id: agent.id, rule_id: warm.id, transfer_type: 'cold' });
    expect(updated).toMatchObject({ transfer_type: 'cold', warm_brief: null });
    expect((await api.get(`${REST}/agents/${agent.id}/transfer-rules/${warm.id}`)).body).toEqual(updated);

    const invalid = await refused(tools, 'create_transfer_rule', { agent_id: agent.id, ...COLD, destination_phone: '0123' });
    expect(invalid).toMatchObject({ status: 400, code: 'validation_error', errors: [expect.objectContaining({ field: 'destination_phone' })] });
    const unknown = await refused(tools, 'update_transfer_rule', { agent_id: agent.id, rule_id: rule.id, colour: 'blue' });
    expect(unknown.errors).toContainEqual(expect.objectContaining({ field: 'colour', code: 'unknown_field' }));
    const missingId = await refused(tools, 'get_transfer_rule', { agent_id: agent.id });
    expect(missingId).toMatchObject({ status: 400, code: 'validation_error', errors: [{ field: 'rule_id', code: 'required', message: 'rule_id is required' }] });

    expect(await ok(tools, 'delete_transfer_rule', { agent_id: agent.id, rule_id: rule.id })).toEqual({});
    expect(await refused(tools, 'get_transfer_rule', { agent_id: agent.id, rule_id: rule.id })).toMatchObject({ status: 404, code: 'not_found' });
    expect((await api.get(`${REST}/agents/${agent.id}/transfer-rules`)).body.data.map((r: Json) => r.id)).toEqual([warm.id]);
    await tools.close();
  });

  it('replays a create with the same idempotency key given in _meta', async () => {
    const { api, tools } = await orgClient();
    const first = await ok(tools, 'create_agent', { name: 'Once' }, { idempotency_key: 'mcp-once-1' });
    const again = await ok(tools, 'create_agent', { name: 'Once' }, { idempotency_key: 'mcp-once-1' });
    expect(again.id).toBe(first.id);
    expect((await api.get(`${REST}/agents`)).body.total).toBe(1);
    const reused = await callTool(tools, 'create_agent', { name: 'Twice' }, { idempotency_key: 'mcp-once-1' });
    expect(reused.isError).toBe(true);
    expect(reused.structuredContent).toMatchObject({ status: 422, code: 'idempotency_key_reused' });
    expect((await api.get(`${REST}/agents`)).body.total).toBe(1);
    await tools.close();
  });

  it('refuses a call without the permission (403 missing_permission) and changes nothing', async () => {
    const { api, tools } = await orgClient();
    const agent = await ok(tools, 'create_agent', { name: 'Guarded' });
    const reader = await mcp(await keyWith(api, ['agents.read']));
    const denied = await refused(reader, 'update_agent', { agent_id: agent.id, name: 'Hijacked' });
    expect(denied).toMatchObject({ status: 403, code: 'missing_permission', required_permission: 'agents.write' });
    const rule = await refused(reader, 'create_transfer_rule', { agent_id: agent.id, ...COLD });
    expect(rule).toMatchObject({ status: 403, required_permission: 'agents.write' });
    expect((await api.get(`${REST}/agents/${agent.id}`)).body.name).toBe('Guarded');
    expect((await api.get(`${REST}/agents/${agent.id}/transfer-rules`)).body.total).toBe(0);
    expect(await ok(reader, 'get_agent', { agent_id: agent.id })).toMatchObject({ name: 'Guarded' });
    await reader.close();
  });

  it('answers another organization\'s id with isError and 404, and changes nothing there', async () => {
    const mine = await orgClient();
    const theirs = await orgClient();
    const agent = await ok(theirs.tools, 'create_agent', { name: 'Theirs' });
    const rule = await ok(theirs.tools, 'create_transfer_rule', { agent_id: agent.id, ...COLD });
    for (const [name, args] of [
      ['get_agent', { agent_id: agent.id }],
      ['update_agent', { agent_id: agent.id, name: 'Mine now' }],
      ['delete_agent', { agent_id: agent.id }],
      ['get_transfer_rule', { agent_id: agent.id, rule_id: rule.id }],
      ['update_transfer_rule', { agent_id: agent.id, rule_id: rule.id, name: 'Mine now' }],
      ['delete_transfer_rule', { agent_id: agent.id, rule_id: rule.id }],
    ] as const) {
      expect(await refused(mine.tools, name, args), name).toMatchObject({ status: 404, code: 'not_found' });
    }
    expect((await theirs.api.get(`${REST}/agents/${agent.id}`)).body.name).toBe('Theirs');
    expect((await theirs.api.get(`${REST}/agents/${agent.id}/transfer-rules/${rule.id}`)).body.name).toBe(COLD.name);
  });

  it('never lets a path id change which route is called (dot segments, empty ids)', async () => {
    const { api, tools } = await orgClient();
    const agent = await ok(tools, 'create_agent', { name: 'Anchor' });
    // `/knowledge-bases/../agents/<id>` would be `DELETE /agents/<id>` once the URL is parsed.
    for (const id of ['..', '.', '']) {
      const problem = await refused(tools, 'detach_knowledge_base', { knowledge_base_id: id, agent_id: agent.id });
      expect(problem).toMatchObject({ status: 400, code: 'validation_error', errors: [{ field: 'knowledge_base_id', code: 'invalid_value', message: 'knowledge_base_id must name a resource' }] });
    }
    expect(await refused(tools, 'get_agent', { agent_id: '' })).toMatchObject({ status: 400 });
    expect(await refused(tools, 'detach_knowledge_base', { knowledge_base_id: '%2e%2e', agent_id: agent.id })).toMatchObject({ status: 404 });
    expect(await refused(tools, 'get_agent', { agent_id: '../agents' })).toMatchObject({ status: 404 });
    expect((await api.get(`${REST}/agents/${agent.id}`)).status).toBe(200);
    await tools.close();
  });

  it('refuses an unknown tool as a protocol error', async () => {
    const { tools } = await orgClient();
    await expect(tools.callTool({ name: 'launch_rocket', arguments: {} })).rejects.toThrow(/unknown tool launch_rocket/);
  });
});

describe('MCP batches and the rate limit (issue 40, D17)', () => {
  const contact = (id: number, email: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'create_contact', arguments: { email_lower: email } } });
  const remainingOf = (res: Response) => Number(/r=(\d+)/.exec(res.headers.get('ratelimit') ?? '')![1]);

  it('refuses a batch of more than 20 messages whole, with 400 and JSON-RPC -32600, and runs none of it', async () => {
    const { token, api } = await orgClient();
    const res = await rawPost(Array.from({ length: 21 }, (_, i) => contact(i + 1, `over${i}@batch.test`)), { authorization: `Bearer ${token}` });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = await res.json();
    expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, data: { code: 'batch_too_large', max_batch: 20 } } });
    expect(body.error.message).toMatch(/at most 20 messages/);
    expect((await api.get(`${REST}/contacts`)).body.total).toBe(0);
    const empty = await rawPost([], { authorization: `Bearer ${token}` });
    expect(empty.status).toBe(400);
    expect(await empty.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    // Twenty is the cap, not a refusal: every call runs.
    const twenty = await rawPost(Array.from({ length: 20 }, (_, i) => contact(i + 1, `cap${i}@batch.test`)), { authorization: `Bearer ${token}` });
    expect(twenty.status).toBe(200);
    const answers = await twenty.json();
    expect(answers.map((a: Json) => a.id)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    for (const a of answers) expect(a.result.isError ?? false, JSON.stringify(a)).toBe(false);
    expect((await api.get(`${REST}/contacts`)).body.total).toBe(20);
  });

  it('counts every message of a batch against the token\'s budget, shared with REST: past it, a call answers rate_limited and does not run', async () => {
    const limited = await startTestService({ RATE_LIMIT_PER_MINUTE: 40 }, { worker: false });
    try {
      const { token } = await limited.newOrg();
      const api = client(limited.url, token);
      // Another key of the organization has a budget of its own: it counts what was made.
      const counter = client(limited.url, (await api.post(`${REST}/api-keys`, { name: 'counter', permissions: ['campaigns.read'] })).body.token);
      const post = (body: unknown) => fetch(`${limited.url}/mcp`, {
        method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-03-26' },
        body: JSON.stringify(body),
      });
      const before = remainingOf(await post({ jsonrpc: '2.0', id: 1, method: 'ping' }));
      const five = await post(Array.from({ length: 5 }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name: 'list_contacts', arguments: {} } })));
      expect(five.status).toBe(200);
      expect((await five.json()).map((a: Json) => a.result.structuredContent.total)).toEqual([0, 0, 0, 0, 0]);
      expect(remainingOf(five)).toBe(before - 5);
      // REST takes from the same budget, down to 12 left.
      let left = remainingOf(five);
      while (left > 12) left = remainingOf(await fetch(`${limited.url}${REST}/contacts`, { headers: { authorization: `Bearer ${token}` } }));
      expect(left).toBe(12);

      const batch = await post(Array.from({ length: 20 }, (_, i) => contact(i + 1, `budget${i}@batch.test`)));
      expect(batch.status).toBe(200);
      expect(remainingOf(batch)).toBe(0);
      const answers: Json[] = await batch.json();
      expect(answers.map((a) => a.id)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      const ran = answers.filter((a) => a.result);
      const refused = answers.filter((a) => a.error);
      expect(ran).toHaveLength(12);
      for (const a of ran) expect(a.result.isError ?? false).toBe(false);
      expect(refused).toHaveLength(8);
      for (const a of refused) {
        expect(a.error).toMatchObject({ code: -32029, data: { status: 429, code: 'rate_limited', retry_after: expect.any(Number) } });
        expect(a.error.message).toMatch(/rate limit of 40 requests a minute exceeded/);
      }
      expect((await counter.get(`${REST}/contacts`)).body.total).toBe(12);
      // The budget is spent for REST too.
      const rest = await fetch(`${limited.url}${REST}/contacts`, { headers: { authorization: `Bearer ${token}` } });
      expect(rest.status).toBe(429);
      expect(rest.headers.get('retry-after')).toMatch(/^\d+$/);
    } finally {
      await limited.stop();
    }
  });
});

describe('MCP: the live inbox stream is no tool (issue 40, D21)', () => {
  it('leaves stream_live_conversations out of tools/list; calling it is an unknown tool that opens nothing', async () => {
    const { api, orgId } = await orgClient();
    const created = await api.post(`${REST}/api-keys`, { name: 'advisor', permissions: ['conversations.read'], user_email: 'advisor@mcp.test' });
    expect(created.status, created.text).toBe(201);
    const member = await mcp(created.body.token);
    const names = (await member.listTools()).tools.map((t) => t.name);
    expect(names).toContain('list_live_conversations');
    expect(names).not.toContain('stream_live_conversations');
    await expect(member.callTool({ name: 'stream_live_conversations', arguments: {} })).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/unknown tool stream_live_conversations/) });
    // The stream's handler never ran: it would have marked the member as watching the inbox (staffed).
    const rows = await svc.sql<{ seen: Date | null }[]>`select live_inbox_seen_at as seen from members where org_id = ${orgId} and email = 'advisor@mcp.test'`;
    expect(rows).toEqual([{ seen: null }]);
    // The session goes on.
    expect((await ok(member, 'list_live_conversations', {})).data).toEqual([]);
    await member.close();
  });
});

describe('MCP: malformed params (issue 40, I14)', () => {
  it('answers -32602 with a short message naming the field, never a schema dump, and still runs the rest of a batch', async () => {
    const { token, api } = await orgClient();
    const agent = (await api.post(`${REST}/agents`, { name: 'Params' })).body;
    const cases: [string, unknown, string, RegExp][] = [
      ['tools/call', 'x', 'params', /params must be an object/],
      ['tools/call', null, 'params', /params must be an object/],
      ['tools/call', [1], 'params', /params must be an object/],
      ['tools/call', { arguments: {} }, 'name', /name is required/],
      ['tools/call', { name: 5, arguments: {} }, 'name', /name must be a string/],
      ['tools/call', { name: 'get_agent', arguments: 'x' }, 'arguments', /arguments must be an object/],
      ['resources/read', { uri: 5 }, 'uri', /uri must be a string/],
      ['resources/read', {}, 'uri', /uri is required/],
      ['prompts/get', { name: 'review_agent', arguments: { agent_id: 5 } }, 'arguments.agent_id', /arguments\.agent_id must be a string/],
      ['tools/list', { cursor: 5 }, 'cursor', /cursor must be a string/],
    ];
    for (const [method, params, field, message] of cases) {
      const res = await rawPost({ jsonrpc: '2.0', id: 7, method, params }, { authorization: `Bearer ${token}` });
      const label = `${method} ${JSON.stringify(params)}`;
      expect(res.status, label).toBe(200);
      const body = await res.json();
      expect(body, label).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32602, data: { errors: [expect.objectContaining({ field })] } } });
      expect(body.error.message, label).toMatch(message);
      expect(body.error.message, label).not.toMatch(/[[\]{}"]|expected|received|invalid_type|zod|\bat\s/i);
      expect(body.error.message.length, label).toBeLessThan(120);
    }
    // In a batch, the malformed request is answered and the others run.
    const batch = await rawPost([
      { jsonrpc: '2.0', id: 'bad', method: 'tools/call', params: { name: 'get_agent', arguments: 'x' } },
      { jsonrpc: '2.0', id: 'good', method: 'tools/call', params: { name: 'get_agent', arguments: { agent_id: agent.id } } },
    ], { authorization: `Bearer ${token}`, 'mcp-protocol-version': '2025-03-26' });
    expect(batch.status).toBe(200);
    const [bad, good] = await batch.json();
    expect(bad).toMatchObject({ id: 'bad', error: { code: -32602 } });
    expect(good).toMatchObject({ id: 'good', result: { structuredContent: { id: agent.id } } });
    // A tool's own arguments are judged by its route: a tool execution error naming the argument.
    const sdk = await mcp(token);
    const unknown = await refused(sdk, 'get_agent', { agent_id: agent.id, colour: 'blue' });
    expect(unknown.errors).toContainEqual(expect.objectContaining({ field: 'colour', code: 'unknown_field' }));
    await sdk.close();
  });
});

describe('MCP resources and prompts', () => {
  it('reads agent://<id> and conversation://<id>, lists agents and both templates, and refuses what the token cannot see', async () => {
    const { api, tools } = await orgClient();
    const agent = (await api.post(`${REST}/agents`, { name: 'Lighthouse' })).body;
    const started = await fetch(`${svc.url}/api/v1/public/widgets/${agent.public_key}/conversations`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ page_url: 'https://lighthouse.example.com/' }),
    });
    expect(started.status).toBe(201);
    const conversationId = (await started.json()).conversation_id;

    const read = await tools.readResource({ uri: `agent://${agent.id}` });
    expect(read.contents).toHaveLength(1);
    expect(read.contents[0]).toMatchObject({ uri: `agent://${agent.id}`, mimeType: 'application/json' });
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toEqual((await api.get(`${REST}/agents/${agent.id}`)).body);
    const transcript = JSON.parse(((await tools.readResource({ uri: `conversation://${conversationId}` })).contents[0] as { text: string }).text);
    expect(transcript).toMatchObject({ id: conversationId, widget_id: agent.id, messages: [expect.objectContaining({ role: 'agent' })] });

    expect((await tools.listResources()).resources).toContainEqual(expect.objectContaining({ uri: `agent://${agent.id}`, name: 'Lighthouse' }));
    expect((await tools.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual(['agent://{agent_id}', 'conversation://{conversation_id}']);
    await expect(tools.readResource({ uri: `agent://${MISSING}` })).rejects.toThrow(/not found/);
    await expect(tools.readResource({ uri: 'mailto:someone' })).rejects.toThrow(/unknown resource/);
    await expect(tools.readResource({ uri: 'agent://%E0%A4%A' })).rejects.toThrow(/not a valid id/);
    const stranger = await orgClient();
    await expect(stranger.tools.readResource({ uri: `conversation://${conversationId}` })).rejects.toThrow(/not found/);
    await tools.close();
  });

  it('review_agent reads the agent and its evaluated conversations and asks for PATCH changes', async () => {
    const { api, tools } = await orgClient();
    const agent = (await api.patch(`${REST}/agents/${(await api.post(`${REST}/agents`, { name: 'Ferry desk' })).body.id}`, {
      goals: ['Capture the visitor email'],
    })).body;
    const base = `${svc.url}/api/v1/public/widgets/${agent.public_key}/conversations`;
    const started = await (await fetch(base, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ page_url: 'https://ferry.example.com/' }) })).json();
    const headers = { 'content-type': 'application/json', 'x-visitor-token': started.visitor_token };
    await fetch(`${base}/${started.conversation_id}/messages`, { method: 'POST', headers, body: JSON.stringify({ text: 'When does the first ferry leave?' }) });
    expect((await fetch(`${base}/${started.conversation_id}/end`, { method: 'POST', headers })).status).toBe(200);
    // A second conversation, still going: not evaluated, so not part of the review.
    await fetch(base, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ page_url: 'https://ferry.example.com/' }) });
    await eventually(async () => (await api.get(`${REST}/conversations/${started.conversation_id}`)).body.outcome !== null, 60_000);

    const prompts = (await tools.listPrompts()).prompts;
    expect(prompts).toEqual([expect.objectContaining({ name: 'review_agent', arguments: [expect.objectContaining({ name: 'agent_id', required: true })] })]);
    const prompt = await tools.getPrompt({ name: 'review_agent', arguments: { agent_id: agent.id } });
    const [ask, config, ...conversations] = prompt.messages;
    expect(ask!.content).toMatchObject({ type: 'text', text: expect.stringMatching(/update_agent/) });
    expect((ask!.content as { text: string }).text).toContain('PATCH');
    expect(config!.content).toMatchObject({ type: 'resource', resource: { uri: `agent://${agent.id}` } });
    expect(conversations.map((m) => (m.content as { resource: { uri: string } }).resource.uri)).toEqual([`conversation://${started.conversation_id}`]);
    const evaluated = JSON.parse((conversations[0]!.content as { resource: { text: string } }).resource.text);
    expect(evaluated).toMatchObject({ id: started.conversation_id, outcome: expect.any(String), messages: expect.arrayContaining([expect.objectContaining({ text: 'When does the first ferry leave?' })]) });

    await expect(tools.getPrompt({ name: 'review_agent', arguments: { agent_id: MISSING } })).rejects.toThrow(/not found/);
    await tools.close();
  });
});

describe('stdio bridge (npm run mcp)', () => {
  it('serves the same tools over stdio to the SDK stdio client, forwarding to AMS_URL with the token', async () => {
    const { api, token } = await orgClient();
    const agent = (await api.post(`${REST}/agents`, { name: 'Desktop' })).body;
    const transport = new StdioClientTransport({
      command: 'npm', args: ['run', '--silent', 'mcp', '--', '--token', token],
      env: { ...process.env, AMS_URL: svc.url } as Record<string, string>, stderr: 'pipe',
    });
    const bridge = new Client({ name: 'desktop', version: '1.0.0' });
    await bridge.connect(transport);
    try {
      const tools: Tool[] = (await bridge.listTools()).tools;
      expect(tools.map((t) => t.name).sort()).toEqual(OPERATIONS.map((o) => o.def.operationId).sort());
      const updated = await ok(bridge, 'update_agent', { agent_id: agent.id, persona: 'Set from the desktop' });
      expect(updated.persona).toBe('Set from the desktop');
      expect((await api.get(`${REST}/agents/${agent.id}`)).body.persona).toBe('Set from the desktop');
      expect(await refused(bridge, 'get_agent', { agent_id: MISSING })).toMatchObject({ status: 404 });
      expect(JSON.parse(((await bridge.readResource({ uri: `agent://${agent.id}` })).contents[0] as { text: string }).text).id).toBe(agent.id);
      expect((await bridge.listPrompts()).prompts.map((p) => p.name)).toEqual(['review_agent']);
    } finally {
      await bridge.close();
    }
  });
});
