import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './helpers.ts';
import { newAgent, newOrg, type Api } from './support/orgs.ts';
import { startChatCompletionsServer } from './fixtures/chat-completions-server.ts';

// Simulations (issue 19) in their tool_mode (issue 15): the agent under test calls its data_captured
// tool when the simulated caller gives the data, and the run's mode decides where the call goes.

interface Got { method: string; url: string; headers: IncomingHttpHeaders; body: string }

/** The business's system: a local HTTP receiver, one inbox per path, answering JSON. */
async function startBusiness() {
  const inboxes = new Map<string, Got[]>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const inbox = inboxes.get(new URL(req.url ?? '/', 'http://x').pathname);
      if (!inbox) { res.writeHead(404).end(); return; }
      inbox.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ lead_id: 'L-1', status: 'ships tomorrow' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url() {
      const path = `/tools/${randomBytes(6).toString('hex')}`;
      inboxes.set(path, []);
      return base + path;
    },
    got: (url: string) => inboxes.get(new URL(url).pathname)!,
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

const R = '/api/v1/rest';
let business: Awaited<ReturnType<typeof startBusiness>>;
let svc: TestService;

beforeAll(async () => {
  business = await startBusiness();
  const port = await freePort();
  // The receiver is on 127.0.0.1 (a private target, allowed here); the sandbox echo endpoint is this service's own origin.
  svc = await startTestService({ ALLOW_PRIVATE_NETWORK_TARGETS: true, PORT: port, PUBLIC_BASE_URL: `http://127.0.0.1:${port}` });
}, 120_000);
afterAll(async () => {
  await svc?.stop();
  await business?.close();
});

const SCENARIO = 'Ask about the refund policy. My name is Ana Ruiz and my email is ana@example.com.';

/** An agent that asks for an email and hands it to `create_lead` (call_on data_captured) at `url`. */
async function agentWithLeadTool(api: Api, url: string) {
  const agent = await newAgent(api, 'Lead desk');
  const patched = await api.patch(`${R}/agents/${agent.id}`, { data_schema: [{ name: 'email', type: 'email', required: true }] });
  expect(patched.status, patched.text).toBe(200);
  expect((await api.post(`${R}/agents/${agent.id}/training-notes`,
    { question: 'What is your refund policy?', answer: 'Refunds are accepted within 30 days of purchase.' })).status).toBe(201);
  const tool = await api.post(`${R}/agents/${agent.id}/tools`, {
    name: 'create_lead', url, call_on: 'data_captured', parameters: { type: 'object', properties: { email: { type: 'string' } }, required: ['email'] },
  });
  expect(tool.status, tool.text).toBe(201);
  return { agent, tool: tool.body as { id: string; secret: string } };
}

/** Runs a simulation of `agentId` in `toolMode` step by step to its end; answers the run and its conversation. */
async function runToEnd(api: Api, agentId: string, toolMode: 'mock' | 'sandbox' | 'live', scenario = SCENARIO) {
  const created = await api.post(`${R}/simulations`, { opponent_widget_id: agentId, scenario_text: scenario, tool_mode: toolMode });
  expect(created.status, created.text).toBe(201);
  expect(created.body.tool_mode).toBe(toolMode);
  let last;
  for (let i = 0; i < 10; i++) {
    last = await api.post(`${R}/simulations/${created.body.id}/step`, {});
    expect(last.status, last.text).toBe(200);
    if (last.body.done) break;
  }
  expect(last!.body.simulation.status).toBe('completed');
  const conversation = await api.get(`${R}/conversations/${created.body.conversation_id}`);
  expect(conversation.status, conversation.text).toBe(200);
  return { run: last!.body.simulation, conversation: conversation.body as { id: string; tool_calls: any[]; messages: any[]; is_simulated: boolean } };
}

const leadCalls = (conversation: { tool_calls: any[] }) => conversation.tool_calls.filter((c) => c.name === 'create_lead');

describe('simulations call the agent\'s tools in their tool_mode', () => {
  it('mock sends nothing and records the call as mocked', async () => {
    const { api } = await newOrg(svc);
    const url = business.url();
    const { agent, tool } = await agentWithLeadTool(api, url);
    const { conversation } = await runToEnd(api, agent.id, 'mock');
    expect(conversation.is_simulated).toBe(true);
    expect(leadCalls(conversation)).toEqual([{ name: 'create_lead', args: { email: 'ana@example.com' }, ts: expect.any(String), status: 'mocked', duration_ms: expect.any(Number) }]);
    expect(business.got(url)).toHaveLength(0);
    const log = await api.get(`${R}/agents/${agent.id}/tools/${tool.id}/calls`);
    expect(log.body).toMatchObject({ total: 1, data: [{ status: 'mocked' }] });
  }, 90_000);

  it('sandbox sends the call to the service\'s echo endpoint, not to the tool', async () => {
    const { api } = await newOrg(svc);
    const url = business.url();
    const { agent } = await agentWithLeadTool(api, url);
    const { conversation } = await runToEnd(api, agent.id, 'sandbox');
    // ok: the echo endpoint answered (an unreachable one would be recorded as an error).
    expect(leadCalls(conversation)).toMatchObject([{ args: { email: 'ana@example.com' }, status: 'ok' }]);
    expect(business.got(url)).toHaveLength(0);
  }, 90_000);

  it('live calls the tool once, signed with its secret (verified with standardwebhooks), from inside the turn', async () => {
    const { api } = await newOrg(svc);
    const url = business.url();
    const { agent, tool } = await agentWithLeadTool(api, url);
    const { conversation } = await runToEnd(api, agent.id, 'live');
    const got = business.got(url);
    expect(got).toHaveLength(1);
    const [call] = got;
    expect(call!.method).toBe('POST');
    expect(call!.headers['webhook-id']).toMatch(/^tcall_/);
    const headers = {
      'webhook-id': String(call!.headers['webhook-id']), 'webhook-timestamp': String(call!.headers['webhook-timestamp']), 'webhook-signature': String(call!.headers['webhook-signature']),
    };
    expect(new Webhook(tool.secret).verify(call!.body, headers)).toEqual({ email: 'ana@example.com' });
    expect(() => new Webhook(`whsec_${randomBytes(32).toString('base64')}`).verify(call!.body, headers)).toThrow();
    expect(leadCalls(conversation)).toEqual([{ name: 'create_lead', args: { email: 'ana@example.com' }, ts: expect.any(String), status: 'ok', duration_ms: expect.any(Number) }]);
    expect(call!.headers['x-conversation-id']).toBe(conversation.id);
  }, 90_000);
});

describe('with a model configured', () => {
  it('the agent\'s model tools are offered in a simulated turn; a live call goes out signed and its answer goes back to the model', async () => {
    const llm = await startChatCompletionsServer({
      fallback: (request) => {
        const messages = request.body.messages as { role: string; content: unknown }[];
        const system = String(messages[0]?.content ?? '');
        const last = String(messages.at(-1)?.content ?? '');
        if (system.includes('You are a person contacting a business')) {
          return { content: /ships tomorrow/.test(last) ? 'Thanks. Goodbye!' : 'Where is my order A-17?' };
        }
        if (request.body.response_format) return { content: '{}' };
        const offered = ((request.body.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name);
        if (offered.includes('lookup_order') && messages.at(-1)?.role === 'user' && /A-17/.test(last)) {
          return { toolCalls: [{ id: 'call_order', name: 'lookup_order', args: { order_id: 'A-17' } }] };
        }
        const answered = messages.at(-1)?.role === 'tool' ? messages.at(-1)! : null;
        return { content: answered ? `Your order ${JSON.parse(String(answered.content)).status === 'ships tomorrow' ? 'ships tomorrow' : 'is unknown'}.` : 'Glad to help.' };
      },
    });
    const withModel = await startTestService({ ALLOW_PRIVATE_NETWORK_TARGETS: true, LLM_BASE_URL: llm.baseUrl, LLM_API_KEY: 'sk-test-key' });
    try {
      const { api } = await newOrg(withModel);
      const agent = await newAgent(api, 'Order desk');
      const url = business.url();
      const tool = await api.post(`${R}/agents/${agent.id}/tools`, {
        name: 'lookup_order', description: 'Looks up an order by its number', url, method: 'GET',
        parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] },
      });
      expect(tool.status, tool.text).toBe(201);
      const { run, conversation } = await runToEnd(api, agent.id, 'live', 'You want to know where your order A-17 is.');
      expect(run.messages.map((m: any) => `${m.role}: ${m.text}`)).toContain('agent: Your order ships tomorrow.');
      const got = business.got(url);
      expect(got).toHaveLength(1);
      expect(got[0]!.method).toBe('GET');
      expect(new URL(got[0]!.url, 'http://x').searchParams.get('order_id')).toBe('A-17');
      new Webhook(tool.body.secret).verify('', {
        'webhook-id': String(got[0]!.headers['webhook-id']), 'webhook-timestamp': String(got[0]!.headers['webhook-timestamp']), 'webhook-signature': String(got[0]!.headers['webhook-signature']),
      });
      expect(conversation.tool_calls.filter((c) => c.name === 'lookup_order')).toEqual([
        { name: 'lookup_order', args: { order_id: 'A-17' }, ts: expect.any(String), status: 'ok', duration_ms: expect.any(Number) },
      ]);
    } finally {
      await withModel.stop();
      await llm.close();
    }
  }, 90_000);
});
