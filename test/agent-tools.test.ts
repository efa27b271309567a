import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, eventually, startTestService, type TestService } from './helpers.ts';
import { orgWithAgent, type Api } from './support/orgs.ts';
import { expectFieldError, expectProblem } from './support/problems.ts';
import { startChatCompletionsServer, type ChatCompletionsServer } from './fixtures/chat-completions-server.ts';
import { setConversationToolMode } from '../src/db/agent-tools.ts';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { Worker } from '@temporalio/worker';
import { workflowBundle } from './helpers.ts';

// Agent tools (issue 15): the API, and calls to a real local HTTP receiver standing for the
// business's system, through the conversation workflow, offline and with the LLM runtime.

/** How one path of the business's system answers. */
interface Answer { status?: number; json?: unknown; body?: string; delayMs?: number }
interface Got { method: string; url: string; headers: IncomingHttpHeaders; body: string }

/** The business's system: one inbox per path, each answering as told. */
async function startBusiness() {
  const paths = new Map<string, { answer: Answer; got: Got[] }>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const inbox = paths.get(path);
      if (!inbox) { res.writeHead(404).end(); return; }
      inbox.got.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const { answer } = inbox;
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' });
        res.end(answer.body ?? JSON.stringify(answer.json ?? { ok: true }));
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs); else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url(answer: Answer = {}) {
      const path = `/tools/${randomBytes(6).toString('hex')}`;
      paths.set(path, { answer, got: [] });
      return base + path;
    },
    got: (url: string) => paths.get(new URL(url).pathname)!.got,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let business: Awaited<ReturnType<typeof startBusiness>>;
let strict: TestService;
let svc: TestService;
let llmSvc: TestService;
let llm: ChatCompletionsServer;
const logLines: string[] = [];

beforeAll(async () => {
  business = await startBusiness();
  llm = await startChatCompletionsServer();
  const port = await freePort();
  const logDestination = new Writable({ write(chunk, _enc, done) { logLines.push(String(chunk)); done(); } });
  // Private targets refused, as in production; no worker: the API alone.
  strict = await startTestService({ LOG_LEVEL: 'debug' }, { worker: false, logDestination });
  // The offline runtime; the sandbox echo endpoint is this service's own origin.
  svc = await startTestService({ ALLOW_PRIVATE_NETWORK_TARGETS: true, PORT: port, PUBLIC_BASE_URL: `http://127.0.0.1:${port}` });
  llmSvc = await startTestService({ ALLOW_PRIVATE_NETWORK_TARGETS: true, LLM_BASE_URL: llm.baseUrl, LLM_MODEL: 'test-model' });
}, 120_000);
afterAll(async () => {
  await strict?.stop();
  await svc?.stop();
  await llmSvc?.stop();
  await llm?.close();
  await business?.close();
});

const A = '/api/v1/rest/agents';
const tools = (agentId: string) => `${A}/${agentId}/tools`;
const PUBLIC_URL = 'https://93.184.215.14/hooks/orders';
const MISSING = '0190a5c4-0000-7000-8000-000000000000';
const ORDER_PARAMS = { type: 'object', properties: { order_id: { type: 'string', description: 'The order number' } }, required: ['order_id'], additionalProperties: false };

async function countTools(svc0: TestService, agentId: string): Promise<number> {
  const [row] = await svc0.sql<{ n: number }[]>`select count(*)::int as n from agent_tools where agent_id = ${agentId}`;
  return row!.n;
}

describe('tools API', () => {
  it('CRUD and rotate-secret; the secret only on create and rotate, never in logs', async () => {
    const { api, agent } = await orgWithAgent(strict);
    const created = await api.post(tools(agent.id), { name: 'lookup_order', description: 'Looks up an order', parameters: ORDER_PARAMS, url: PUBLIC_URL, method: 'GET', timeout_seconds: 5 });
    expect(created.status, created.text).toBe(201);
    expect(created.headers.get('location')).toBe(`${tools(agent.id)}/${created.body.id}`);
    expect(Object.keys(created.body)).toEqual(['id', 'name', 'description', 'parameters', 'url', 'method', 'timeout_seconds', 'call_on', 'enabled', 'created_at', 'updated_at', 'secret']);
    expect(created.body).toMatchObject({ name: 'lookup_order', method: 'GET', timeout_seconds: 5, call_on: 'model', enabled: true, parameters: ORDER_PARAMS });
    const secret: string = created.body.secret;
    expect(secret).toMatch(/^whsec_/);

    const got = await api.get(`${tools(agent.id)}/${created.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body.secret).toBeUndefined();
    const { secret: _s, ...withoutSecret } = created.body;
    expect(got.body).toEqual(withoutSecret);

    const defaults = await api.post(tools(agent.id), { name: 'notify_crm', url: PUBLIC_URL });
    expect(defaults.body).toMatchObject({ method: 'POST', timeout_seconds: 10, call_on: 'model', enabled: true, parameters: { type: 'object', properties: {} }, description: null });

    const patched = await api.patch(`${tools(agent.id)}/${created.body.id}`, { enabled: false, call_on: 'data_captured' });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ enabled: false, call_on: 'data_captured', name: 'lookup_order' });
    expect((await api.patch(`${tools(agent.id)}/${created.body.id}`, {})).body.enabled).toBe(false);

    const list = await api.get(tools(agent.id));
    expect(list.body).toMatchObject({ total: 2, limit: 50, offset: 0 });
    expect(list.body.data.map((t: any) => t.name)).toEqual(['notify_crm', 'lookup_order']);
    expect(list.text).not.toContain('whsec_');

    const rotated = await api.post(`${tools(agent.id)}/${created.body.id}/rotate-secret`);
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(secret);

    // Sealed at rest.
    const [row] = await strict.sql<any[]>`select secret_sealed, previous_secret_sealed from agent_tools where id = ${created.body.id}`;
    expect(row.secret_sealed).toMatch(/^v1:/);
    expect(row.previous_secret_sealed).toMatch(/^v1:/);

    expect((await api.delete(`${tools(agent.id)}/${defaults.body.id}`)).status).toBe(204);
    expectProblem(await api.get(`${tools(agent.id)}/${defaults.body.id}`), 404, 'not_found');
    expectProblem(await api.delete(`${tools(agent.id)}/${defaults.body.id}`), 404, 'not_found');

    const calls = await api.get(`${tools(agent.id)}/${created.body.id}/calls`);
    expect(calls.body).toEqual({ data: [], total: 0, limit: 50, offset: 0 });

    const all = logLines.join('\n');
    expect(all).toContain('/tools');
    for (const s of [secret, rotated.body.secret as string]) expect(all).not.toContain(s.slice(6));
  });

  it('refuses a bad JSON Schema, a private URL, a duplicate name, a reserved name and a 21st tool, changing nothing', async () => {
    const { api, agent } = await orgWithAgent(strict);
    const ok = await api.post(tools(agent.id), { name: 'lookup_order', url: PUBLIC_URL, parameters: ORDER_PARAMS });
    expect(ok.status, ok.text).toBe(201);

    const badType = expectFieldError(await api.post(tools(agent.id), { name: 't1', url: PUBLIC_URL, parameters: { type: 'object', properties: { a: { type: 'strin' } } } }), 'parameters', 'invalid_schema');
    expect(badType.detail).toMatch(/not a valid JSON Schema/);
    expectFieldError(await api.post(tools(agent.id), { name: 't2', url: PUBLIC_URL, parameters: { type: 'object', properties: { a: { type: 'string', minLenght: 2 } } } }), 'parameters', 'invalid_schema');
    expectFieldError(await api.post(tools(agent.id), { name: 't3', url: PUBLIC_URL, parameters: { type: 'array' } }), 'parameters', 'invalid_schema');
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`p${i}`, { type: 'string' }]));
    expectFieldError(await api.post(tools(agent.id), { name: 't4', url: PUBLIC_URL, parameters: { type: 'object', properties: many } }), 'parameters', 'too_many_properties');
    const local = expectProblem(await api.post(tools(agent.id), { name: 't5', url: 'https://127.0.0.1/hook' }), 400, 'private_network_target');
    // The problem names its remedy (issue 42): a newcomer crawling a local site learns the setting from it.
    expect(JSON.stringify(local)).toMatch(/ALLOW_PRIVATE_NETWORK_TARGETS=true/);
    expectProblem(await api.post(tools(agent.id), { name: 't6', url: 'https://10.1.2.3/hook' }), 400, 'private_network_target');
    expectFieldError(await api.post(tools(agent.id), { name: 't7', url: 'http://93.184.215.14/hook' }), 'url', 'https_required');
    expectFieldError(await api.post(tools(agent.id), { name: 'lookup_order', url: PUBLIC_URL }), 'name', 'duplicate_name');
    expectFieldError(await api.post(tools(agent.id), { name: 'search_knowledge', url: PUBLIC_URL }), 'name', 'reserved_name');
    expectFieldError(await api.post(tools(agent.id), { name: '1bad name', url: PUBLIC_URL }), 'name');
    expectFieldError(await api.post(tools(agent.id), { name: 't8', url: PUBLIC_URL, timeout_seconds: 31 }), 'timeout_seconds');
    expectFieldError(await api.post(tools(agent.id), { name: 't9', url: PUBLIC_URL, method: 'PUT' }), 'method');
    expectFieldError(await api.post(tools(agent.id), { name: 't10', url: PUBLIC_URL, secret: 'whsec_abc' }), 'secret', 'unknown_field');
    expect(await countTools(strict, agent.id)).toBe(1);

    // PATCH refusals leave the tool as it was.
    const before = (await api.get(`${tools(agent.id)}/${ok.body.id}`)).body;
    expectFieldError(await api.patch(`${tools(agent.id)}/${ok.body.id}`, { parameters: { type: 'object', properties: { a: { type: 7 } } }, name: 'x' }), 'parameters', 'invalid_schema');
    expectProblem(await api.patch(`${tools(agent.id)}/${ok.body.id}`, { url: 'https://192.168.1.1/x' }), 400, 'private_network_target');
    const second = await api.post(tools(agent.id), { name: 'second', url: PUBLIC_URL });
    expectFieldError(await api.patch(`${tools(agent.id)}/${second.body.id}`, { name: 'lookup_order' }), 'name', 'duplicate_name');
    expect((await api.get(`${tools(agent.id)}/${ok.body.id}`)).body).toEqual(before);

    for (let i = 2; i < 20; i += 1) expect((await api.post(tools(agent.id), { name: `tool_${i}`, url: PUBLIC_URL })).status).toBe(201);
    expectProblem(await api.post(tools(agent.id), { name: 'tool_21', url: PUBLIC_URL }), 409, 'invalid_state');
    expect(await countTools(strict, agent.id)).toBe(20);
  });

  it('answers 404 for another organization\'s agent or tool, and for a missing one', async () => {
    const { api, agent } = await orgWithAgent(strict);
    const tool = (await api.post(tools(agent.id), { name: 'lookup_order', url: PUBLIC_URL })).body;
    const other = await orgWithAgent(strict);
    expectProblem(await other.api.get(tools(agent.id)), 404, 'not_found');
    expectProblem(await other.api.get(`${tools(agent.id)}/${tool.id}`), 404, 'not_found');
    expectProblem(await other.api.post(tools(agent.id), { name: 'x', url: PUBLIC_URL }), 404, 'not_found');
    expectProblem(await other.api.patch(`${tools(agent.id)}/${tool.id}`, { enabled: false }), 404, 'not_found');
    expectProblem(await other.api.post(`${tools(agent.id)}/${tool.id}/rotate-secret`), 404, 'not_found');
    expectProblem(await other.api.get(`${tools(agent.id)}/${tool.id}/calls`), 404, 'not_found');
    expectProblem(await other.api.delete(`${tools(agent.id)}/${tool.id}`), 404, 'not_found');
    // Another org's tool under one's own agent is 404 too.
    expectProblem(await other.api.get(`${tools(other.agent.id)}/${tool.id}`), 404, 'not_found');
    expectProblem(await api.get(`${tools(agent.id)}/${MISSING}`), 404, 'not_found');
    expectProblem(await api.get(`${tools(MISSING)}`), 404, 'not_found');
    expect((await api.get(`${tools(agent.id)}/${tool.id}`)).body.enabled).toBe(true);
  });

  it('travels with export, import and clone without its secret; the agent\'s delete removes it', async () => {
    const { api, agent } = await orgWithAgent(strict);
    const tool = (await api.post(tools(agent.id), { name: 'lookup_order', url: PUBLIC_URL, parameters: ORDER_PARAMS, call_on: 'data_captured', timeout_seconds: 7 })).body;
    const manifest = await api.get(`${A}/${agent.id}/export`);
    expect(manifest.status, manifest.text).toBe(200);
    expect(manifest.text).not.toContain('whsec_');
    expect(manifest.body.tools).toEqual([{ name: 'lookup_order', description: null, parameters: ORDER_PARAMS, url: PUBLIC_URL, method: 'POST', timeout_seconds: 7, call_on: 'data_captured', enabled: true }]);

    const other = await orgWithAgent(strict);
    const imported = await other.api.post(`${A}/import`, manifest.body);
    expect(imported.status, imported.text).toBe(201);
    const importedTools = (await other.api.get(tools(imported.body.id))).body.data;
    expect(importedTools).toMatchObject([{ name: 'lookup_order', parameters: ORDER_PARAMS, call_on: 'data_captured', timeout_seconds: 7 }]);

    const bad = structuredClone(manifest.body);
    bad.tools.push({ ...bad.tools[0], parameters: { type: 'object', properties: { a: { type: 'nope' } } } });
    const refused = await other.api.post(`${A}/import`, bad);
    expect(refused.status).toBe(400);
    expect(refused.body.errors.map((e: any) => e.field)).toEqual(expect.arrayContaining(['tools[1].parameters', 'tools[1].name']));

    const clone = await api.post(`${A}/${agent.id}/clone`, {});
    expect(clone.status, clone.text).toBe(201);
    expect((await api.get(tools(clone.body.id))).body.data).toMatchObject([{ name: 'lookup_order', call_on: 'data_captured' }]);
    const sealed = await strict.sql<{ secret_sealed: string }[]>`select secret_sealed from agent_tools where name = 'lookup_order' and agent_id in (${agent.id}, ${clone.body.id})`;
    expect(new Set(sealed.map((r) => r.secret_sealed)).size).toBe(2);

    expect((await api.delete(`${A}/${agent.id}`)).status).toBe(204);
    expect(await countTools(strict, agent.id)).toBe(0);
    expectProblem(await api.get(`${tools(agent.id)}/${tool.id}`), 404, 'not_found');
  });
});

/** A web conversation with the agent: its id and a function that sends a message and answers the agent's replies. */
async function converse(target: TestService, publicKey: string, mode?: 'live' | 'sandbox' | 'mock') {
  const pub = client(target.url);
  const base = `/api/v1/public/widgets/${publicKey}/conversations`;
  const started = await pub.post(base, { page_url: 'https://shop.example/checkout' });
  expect(started.status, started.text).toBe(201);
  const id: string = started.body.conversation_id;
  if (mode) await setConversationToolMode(target.sql, id, mode);
  return {
    id,
    async say(text: string): Promise<string> {
      const sent = await pub.post(`${base}/${id}/messages`, { text }, { 'x-visitor-token': started.body.visitor_token });
      expect(sent.status, sent.text).toBe(200);
      return (sent.body.messages as { text: string }[]).map((m) => m.text).join('\n');
    },
    async end(): Promise<void> {
      const ended = await pub.post(`${base}/${id}/end`, {}, { 'x-visitor-token': started.body.visitor_token });
      expect(ended.status, ended.text).toBe(200);
    },
  };
}

async function agentCapturingEmail(api: Api) {
  const res = await api.post(A, { name: 'Checkout desk' });
  expect(res.status, res.text).toBe(201);
  const patched = await api.patch(`${A}/${res.body.id}`, { data_schema: [{ name: 'email', type: 'email', required: true }] });
  expect(patched.status, patched.text).toBe(200);
  return res.body as { id: string; public_key: string };
}

async function conversationOf(api: Api, id: string) {
  const res = await api.get(`/api/v1/rest/conversations/${id}`);
  expect(res.status, res.text).toBe(200);
  return res.body as { tool_calls: any[]; messages: any[] };
}

describe('data_captured tools (offline runtime)', () => {
  it('are called once, signed (verified with standardwebhooks), when the visitor gives the data; the call is recorded', async () => {
    const { api } = await orgWithAgent(svc);
    const agent = await agentCapturingEmail(api);
    const url = business.url({ json: { lead_id: 'L-1' } });
    const tool = (await api.post(tools(agent.id), { name: 'create_lead', url, call_on: 'data_captured', parameters: { type: 'object', properties: { email: { type: 'string' } }, required: ['email'] } })).body;
    const chat = await converse(svc, agent.public_key);
    await chat.say('Hello, do you ship to Spain?');
    expect(business.got(url)).toHaveLength(0);
    await chat.say('You can reach me at Jane@Example.org');
    await chat.say('Also my email is jane@example.org, in case');

    const got = business.got(url);
    expect(got).toHaveLength(1);
    const [call] = got;
    expect(call!.method).toBe('POST');
    expect(JSON.parse(call!.body)).toEqual({ email: 'jane@example.org' });
    expect(call!.headers['webhook-id']).toMatch(/^tcall_/);
    expect(call!.headers['x-conversation-id']).toBe(chat.id);
    const verified = new Webhook(tool.secret).verify(call!.body, {
      'webhook-id': String(call!.headers['webhook-id']), 'webhook-timestamp': String(call!.headers['webhook-timestamp']), 'webhook-signature': String(call!.headers['webhook-signature']),
    });
    expect(verified).toEqual({ email: 'jane@example.org' });
    expect(() => new Webhook(`whsec_${randomBytes(32).toString('base64')}`).verify(call!.body, {
      'webhook-id': String(call!.headers['webhook-id']), 'webhook-timestamp': String(call!.headers['webhook-timestamp']), 'webhook-signature': String(call!.headers['webhook-signature']),
    })).toThrow();

    const conversation = await conversationOf(api, chat.id);
    const records = conversation.tool_calls.filter((c) => c.name === 'create_lead');
    expect(records).toEqual([{ name: 'create_lead', args: { email: 'jane@example.org' }, ts: expect.any(String), status: 'ok', duration_ms: expect.any(Number) }]);
    const log = await api.get(`${tools(agent.id)}/${tool.id}/calls`);
    expect(log.body).toMatchObject({ total: 1, data: [{ conversation_id: chat.id, status: 'ok', duration_ms: records[0].duration_ms }] });
    expect(Object.keys(log.body.data[0])).toEqual(['id', 'conversation_id', 'status', 'duration_ms', 'created_at']);
  }, 90_000);

  it('survive a timeout, a 500 and an oversized answer: each recorded, the visitor told, the conversation goes on', async () => {
    const { api } = await orgWithAgent(svc);
    const agent = await agentCapturingEmail(api);
    const slow = business.url({ delayMs: 4000 });
    const failing = business.url({ status: 500, json: { error: 'boom' } });
    const huge = business.url({ body: JSON.stringify({ blob: 'x'.repeat(70 * 1024) }) });
    const unavailable = business.url({ status: 503 });
    for (const [name, url, extra] of [
      ['slow_tool', slow, { timeout_seconds: 1 }], ['failing_tool', failing, {}], ['huge_tool', huge, {}], ['unavailable_tool', unavailable, { method: 'GET' }],
    ] as const) {
      expect((await api.post(tools(agent.id), { name, url, call_on: 'data_captured', ...extra })).status).toBe(201);
    }
    const chat = await converse(svc, agent.public_key);
    const reply = await chat.say('My email is sam@example.org');
    expect(reply).toContain('could not complete that step');
    expect(reply).toMatch(/contact details|team will get back/);
    // The conversation goes on.
    expect((await chat.say('Thanks, bye for now')).length).toBeGreaterThan(0);

    const records = (await conversationOf(api, chat.id)).tool_calls.filter((c) => c.name.endsWith('_tool'));
    expect(records.map((c) => [c.name, c.status])).toEqual([['slow_tool', 'timeout'], ['failing_tool', 'error'], ['huge_tool', 'error'], ['unavailable_tool', 'error']]);
    // A GET that got a 503 is retried by the activity's policy (3 attempts), each with the same webhook-id.
    const retried = business.got(unavailable);
    expect(retried).toHaveLength(3);
    expect(new Set(retried.map((r) => r.headers['webhook-id'])).size).toBe(1);
    // The failing POST got an answer: it is never repeated. The answer over 64 KB is dropped.
    expect(business.got(failing)).toHaveLength(1);
    expect(business.got(huge)).toHaveLength(1);
    expect(business.got(slow)).toHaveLength(1);
  }, 90_000);
});

describe('the call as an activity of the conversation workflow', () => {
  it('is an update and an activity in the lifecycle history, with no readable arguments or answer, and replays', async () => {
    const { api } = await orgWithAgent(svc);
    const agent = await agentCapturingEmail(api);
    const url = business.url({ json: { lead: 'secret-lead-answer' } });
    await api.post(tools(agent.id), { name: 'create_lead', url, call_on: 'data_captured' });
    const chat = await converse(svc, agent.public_key);
    await chat.say('My email is replayed.visitor@example.org');
    expect(business.got(url)).toHaveLength(1);
    await chat.end();
    const lifecycle = svc.temporal.workflow.getHandle(`conversation:${chat.id}`);
    await lifecycle.result();
    const history = await lifecycle.fetchHistory();
    const text = JSON.stringify(history);
    expect(text).toContain('callTool');
    expect(text).toContain('callAgentTool');
    expect(text).not.toContain('replayed.visitor@example.org');
    expect(text).not.toContain('secret-lead-answer');
    const results = Worker.runReplayHistories({ workflowBundle: await workflowBundle() }, [{ workflowId: lifecycle.workflowId, history }]);
    for await (const result of results) expect(result.error, String(result.error)).toBeUndefined();
    if (process.env.RECORD_HISTORIES === '1') {
      const { stdout } = await promisify(execFile)(inject('cliPath'), ['workflow', 'show', '--workflow-id', lifecycle.workflowId,
        '--address', inject('temporalAddress'), '--output', 'json'], { maxBuffer: 64 * 1024 * 1024 });
      await writeFile(fileURLToPath(new URL('./fixtures/histories/conversation-tool-call.json', import.meta.url)), stdout);
    }
  }, 90_000);
});

describe('tool modes', () => {
  async function setup() {
    const { api } = await orgWithAgent(svc);
    const agent = await agentCapturingEmail(api);
    const url = business.url({ json: { accepted: true } });
    const tool = (await api.post(tools(agent.id), { name: 'create_lead', url, call_on: 'data_captured' })).body;
    return { api, agent, url, tool };
  }

  it('live sends to the tool\'s URL', async () => {
    const { api, agent, url } = await setup();
    const chat = await converse(svc, agent.public_key, 'live');
    await chat.say('My email is live@example.org');
    expect(business.got(url)).toHaveLength(1);
    expect((await conversationOf(api, chat.id)).tool_calls.find((c) => c.name === 'create_lead')).toMatchObject({ status: 'ok' });
  }, 60_000);

  it('sandbox sends to the service\'s own echo endpoint, not to the tool', async () => {
    const { api, agent, url, tool } = await setup();
    const chat = await converse(svc, agent.public_key, 'sandbox');
    await chat.say('My email is sandbox@example.org');
    expect(business.got(url)).toHaveLength(0);
    expect((await conversationOf(api, chat.id)).tool_calls.find((c) => c.name === 'create_lead')).toMatchObject({ status: 'ok', args: { email: 'sandbox@example.org' } });
    expect((await api.get(`${tools(agent.id)}/${tool.id}/calls`)).body.data).toMatchObject([{ status: 'ok', conversation_id: chat.id }]);
    // The echo endpoint needs no token and answers what it got.
    const echo = await client(svc.url).post('/api/v1/public/tool-sandbox/echo', { tool: 'create_lead', arguments: { a: 1 } }, { 'webhook-id': 'tcall_x' });
    expect(echo.status, echo.text).toBe(200);
    expect(echo.body).toEqual({ sandbox: true, tool: 'create_lead', arguments: { a: 1 }, webhook_id: 'tcall_x' });
  }, 60_000);

  it('mock sends nothing and records the call as mocked', async () => {
    const { api, agent, url } = await setup();
    const chat = await converse(svc, agent.public_key, 'mock');
    await chat.say('My email is mock@example.org');
    expect(business.got(url)).toHaveLength(0);
    expect((await conversationOf(api, chat.id)).tool_calls.find((c) => c.name === 'create_lead')).toMatchObject({ status: 'mocked', args: { email: 'mock@example.org' } });
  }, 60_000);
});

describe('model tools (LLM runtime)', () => {
  it('are offered to the model as functions; the call goes out signed and its answer goes back to the model', async () => {
    const { api } = await orgWithAgent(llmSvc);
    const agent = (await api.post(A, { name: 'Order desk' })).body;
    const url = business.url({ json: { order_id: 'A-17', status: 'ships tomorrow' } });
    const tool = (await api.post(tools(agent.id), { name: 'lookup_order', description: 'Looks up an order by its number', url, method: 'GET', parameters: ORDER_PARAMS })).body;
    const disabled = business.url();
    await api.post(tools(agent.id), { name: 'disabled_tool', url: disabled, enabled: false });

    llm.enqueue(
      { toolCalls: [{ id: 'call_order', name: 'lookup_order', args: { order_id: 'A-17' } }] },
      { content: 'Your order A-17 ships tomorrow.' },
    );
    const before = llm.requests.length;
    const chat = await converse(llmSvc, agent.public_key);
    expect(await chat.say('Where is my order A-17?')).toBe('Your order A-17 ships tomorrow.');

    const [first, second] = llm.requests.slice(before);
    const offered = first!.body.tools.map((t: any) => t.function.name);
    expect(offered).toContain('lookup_order');
    expect(offered).not.toContain('disabled_tool');
    expect(first!.body.tools.find((t: any) => t.function.name === 'lookup_order').function).toEqual({ name: 'lookup_order', description: 'Looks up an order by its number', parameters: ORDER_PARAMS });
    const toolMessage = second!.body.messages.find((m: any) => m.role === 'tool' && m.tool_call_id === 'call_order');
    expect(JSON.parse(toolMessage.content)).toEqual({ order_id: 'A-17', status: 'ships tomorrow' });

    const got = business.got(url);
    expect(got).toHaveLength(1);
    expect(got[0]!.method).toBe('GET');
    expect(new URL(got[0]!.url, 'http://x').searchParams.get('order_id')).toBe('A-17');
    new Webhook(tool.secret).verify('', {
      'webhook-id': String(got[0]!.headers['webhook-id']), 'webhook-timestamp': String(got[0]!.headers['webhook-timestamp']), 'webhook-signature': String(got[0]!.headers['webhook-signature']),
    });
    expect(business.got(disabled)).toHaveLength(0);

    const conversation = await conversationOf(api, chat.id);
    expect(conversation.tool_calls.find((c) => c.name === 'lookup_order')).toEqual({ name: 'lookup_order', args: { order_id: 'A-17' }, ts: expect.any(String), status: 'ok', duration_ms: expect.any(Number) });
    await eventually(async () => (await api.get(`${tools(agent.id)}/${tool.id}/calls`)).body.total === 1);
  }, 90_000);

  it('tells the model when a tool fails, and arguments that do not fit the parameters are not sent', async () => {
    const { api } = await orgWithAgent(llmSvc);
    const agent = (await api.post(A, { name: 'Order desk' })).body;
    const url = business.url({ status: 500 });
    await api.post(tools(agent.id), { name: 'lookup_order', url, parameters: ORDER_PARAMS });
    llm.enqueue(
      { toolCalls: [{ id: 'c_bad', name: 'lookup_order', args: { order: 5 } }, { id: 'c_500', name: 'lookup_order', args: { order_id: 'B-2' } }] },
      { content: 'Sorry, I could not look that up. Shall I connect you with a person?' },
    );
    const before = llm.requests.length;
    const chat = await converse(llmSvc, agent.public_key);
    expect(await chat.say('Where is order B-2?')).toContain('could not look that up');
    const second = llm.requests[before + 1]!;
    const results = second.body.messages.filter((m: any) => m.role === 'tool').map((m: any) => [m.tool_call_id, JSON.parse(m.content)]);
    expect(results[0][1].error).toMatch(/do not fit/);
    expect(results[1][1]).toMatchObject({ error: 'HTTP 500', instruction: expect.stringContaining('could not be completed') });
    expect(business.got(url)).toHaveLength(1);
    expect((await conversationOf(api, chat.id)).tool_calls.filter((c) => c.name === 'lookup_order').map((c) => c.status)).toEqual(['error', 'error']);
  }, 90_000);
});
