import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, MISSING_CHROMIUM } from './browser.ts';
import { eventually, startTestService, type TestService } from './helpers.ts';
import { expectProblem } from './support/problems.ts';
import { newAgent, newOrg, type Api } from './support/orgs.ts';
import { createSecretBox, decodeSecretsKey } from '../src/crypto/secret-box.ts';
import { simulationToken } from '../src/simulations/web-marker.ts';

const R = '/api/v1/rest';
const SCREENSHOT = join(process.cwd(), '.data', 'screenshots', 'web-simulation.png');
const SCENARIO = 'Ask about the refund policy and delivery. My email is ana@example.com.';

let svc: TestService;
let site: Server;
let siteUrl: string;
let api: Api;
let token: string;
/** How often the never-loading page was opened, and how often the browser let go of it. */
const slow = { opened: 0, closed: 0 };

/** A local shop site: `/plain` has no embed snippet (it is injected), `/embedded?agent=` has it. */
function page(path: string, agent: string | null): string {
  const snippet = path === '/embedded' && agent ? `<script src="${svc.url}/embed.js" data-agent="${agent}" async></script>` : '';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title></head>
    <body><h1>Acme garden shop</h1><p>Everything for your garden.</p>${snippet}</body></html>`;
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(MISSING_CHROMIUM);
  svc = await startTestService({ ALLOW_PRIVATE_NETWORK_TARGETS: true });
  ({ api, token } = await newOrg(svc));
  site = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://site');
    // A page that never finishes loading: the browser waits on it until it is closed.
    if (url.pathname === '/slow') {
      slow.opened += 1;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.write('<!doctype html><html><body><p>Loading');
      res.once('close', () => { slow.closed += 1; });
      return;
    }
    if (!['/plain', '/embedded'].includes(url.pathname)) { res.writeHead(404).end('not here'); return; }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(url.pathname, url.searchParams.get('agent')));
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as { port: number }).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => (site ? site.close(resolve) : resolve(undefined)));
  await svc?.stop();
});

async function shopAgent() {
  const agent = await newAgent(api, 'Acme help');
  expect((await api.patch(`${R}/agents/${agent.id}`, {
    data_schema: [{ name: 'email', type: 'email', required: true, description: 'Visitor email' }],
    acceptance_criteria: ['The agent explains the refund policy'],
  })).status).toBe(200);
  for (const note of [
    { question: 'What is your refund policy?', answer: 'Refunds are accepted within 30 days of purchase.' },
    { question: 'Do you offer delivery?', answer: 'Delivery takes 3 business days anywhere in France.' },
  ]) expect((await api.post(`${R}/agents/${agent.id}/training-notes`, note)).status).toBe(201);
  return agent;
}

it('drives the real widget on a page without the embed (injected), keeps a screenshot, stores a simulated conversation', async () => {
  const agent = await shopAgent();
  const res = await api.post(`${R}/simulations/web`, { widget_id: agent.id, scenario_text: SCENARIO, page_url: `${siteUrl}/plain`, max_turns: 6 });
  expect(res.status, res.text).toBe(201);
  expect(res.headers.get('location')).toBe(`${R}/simulations/${res.body.id}`);
  const run = res.body;
  expect(run).toMatchObject({ kind: 'web', status: 'completed', ended_reason: 'goal_met', opponent_widget_id: agent.id, page_url: `${siteUrl}/plain`, has_screenshot: true, error: null });
  expect(run.conversation_id).toMatch(/^[0-9a-f-]{36}$/);
  const texts = run.messages.map((m: any) => `${m.role}: ${m.text}`);
  expect(texts).toContain('visitor: Hello! Can you tell me about your refund policy?');
  expect(texts.some((t: string) => t.startsWith('agent: Refunds are accepted within 30 days'))).toBe(true);
  expect(texts).toContain('visitor: My email is ana@example.com.');
  expect(texts.some((t: string) => /3 business days/.test(t))).toBe(true);
  const conv = await api.get(`${R}/conversations/${run.conversation_id}`);
  expect(conv.body).toMatchObject({ is_simulated: true, surface: 'web', status: 'ended' });
  // Simulated from its first event: a receiver filtering on is_simulated never sees it as real (real-clients D13).
  const events = await svc.sql<{ type: string; data: any }[]>`select type, data from events
    where data->'conversation'->>'id' = ${run.conversation_id} order by created_at, id`;
  expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['conversation.started', 'conversation.ended']));
  for (const event of events) expect(event.data.conversation.is_simulated, event.type).toBe(true);

  expect((await fetch(`${svc.url}${R}/simulations/${run.id}/screenshot`)).status).toBe(401);
  const shot = await fetch(`${svc.url}${R}/simulations/${run.id}/screenshot`, { headers: { authorization: `Bearer ${token}` } });
  expect(shot.status).toBe(200);
  expect(shot.headers.get('content-type')).toBe('image/png');
  const bytes = Buffer.from(await shot.arrayBuffer());
  expect(bytes.subarray(1, 4).toString()).toBe('PNG');
  // Over MCP, through the official SDK: an image content block holding the same bytes (real-clients D2).
  const mcp = new Client({ name: 'screenshot-test', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL('/mcp', svc.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  try {
    const result = await mcp.callTool({ name: 'get_simulation_screenshot', arguments: { simulation_id: run.id } });
    expect(result.isError, JSON.stringify(result).slice(0, 500)).toBeFalsy();
    expect(result.content).toEqual([{ type: 'image', mimeType: 'image/png', data: bytes.toString('base64') }]);
  } finally {
    await mcp.close();
  }
  await mkdir(join(process.cwd(), '.data', 'screenshots'), { recursive: true });
  await writeFile(SCREENSHOT, bytes);
}, 180_000);

it('uses the snippet a page already has, and a page that cannot be opened gives a failed run, not a 5xx', async () => {
  const agent = await shopAgent();
  const res = await api.post(`${R}/simulations/web`, { widget_id: agent.id, scenario_text: SCENARIO, page_url: `${siteUrl}/embedded?agent=${agent.public_key}`, max_turns: 6 });
  expect(res.status, res.text).toBe(201);
  expect(res.body).toMatchObject({ status: 'completed', has_screenshot: true });
  expect(res.body.messages.filter((m: any) => m.role === 'visitor').length).toBeGreaterThan(1);
  // One widget, not two: the page's own snippet was used.
  const starts = await svc.sql<{ n: number }[]>`select count(*)::int as n from conversations where agent_id = ${agent.id}`;
  expect(starts[0]!.n).toBe(1);

  const missing = await api.post(`${R}/simulations/web`, { widget_id: agent.id, scenario_text: SCENARIO, page_url: `${siteUrl}/nowhere` });
  expect(missing.status, missing.text).toBe(201);
  expect(missing.body).toMatchObject({ status: 'failed', ended_reason: 'error', blocked_requests: [] });
  const closed = await api.post(`${R}/simulations/web`, { widget_id: agent.id, scenario_text: SCENARIO, page_url: 'http://127.0.0.1:9/' });
  expect(closed.status, closed.text).toBe(201);
  expect(closed.body.status).toBe('failed');
  // The same words for a 404 and a closed port (issue 40, D12): the error is no port scanner. The detail is logged.
  expect(missing.body.error).toBe('the page could not be opened');
  expect(closed.body.error).toBe('the page could not be opened');
  expect((await api.get(`${R}/simulations/${closed.body.id}/screenshot`)).status).toBe(404);
}, 180_000);

it('POST /simulations/:id/cancel stops a web run: Chromium is closed and the run is canceled, durably', async () => {
  const agent = await shopAgent();
  const started = api.post(`${R}/simulations/web`, { widget_id: agent.id, scenario_text: SCENARIO, page_url: `${siteUrl}/slow`, max_turns: 3 });
  // The browser is open and waiting on the page.
  await eventually(async () => slow.opened > 0, 60_000);
  const [run] = (await svc.sql<{ id: string }[]>`select id from simulations where agent_id = ${agent.id} and status = 'running'`);
  expect(run).toBeDefined();
  const canceled = await api.post(`${R}/simulations/${run!.id}/cancel`);
  expect(canceled.status, canceled.text).toBe(200);
  expect(canceled.body).toMatchObject({ id: run!.id, status: 'canceled', ended_reason: 'canceled' });
  // Chromium let go of the page (closed before the run was recorded canceled; the socket's close reaches the site just after).
  await eventually(async () => slow.closed === slow.opened, 10_000);
  const res = await started;
  expect(res.status, res.text).toBe(201);
  expect(res.body).toMatchObject({ id: run!.id, status: 'canceled' });
  const handle = svc.temporal.workflow.getHandle(`web-simulation:${run!.id}`);
  expect(await handle.result()).toEqual({ status: 'canceled' });
  expect((await api.get(`${R}/simulations/${run!.id}`)).body.status).toBe('canceled');
  expectProblem(await api.post(`${R}/simulations/${run!.id}/cancel`), 409, 'invalid_state');
}, 180_000);

describe('the browser reaches no private address (issue 40, D12)', () => {
  // Every test server listens on loopback, so one must pass for public: OUTBOUND_ALLOWED_HOSTS lets
  // 127.0.0.1 (the "public" site, and the service itself) through, while 127.0.0.2 stays private.
  let strict: TestService;
  let strictApi: Api;
  let publicSite: Server;
  let internal: Server;
  let publicUrl: string;
  let internalUrl: string;
  const internalRequests: string[] = [];

  beforeAll(async () => {
    strict = await startTestService({ ALLOW_PRIVATE_NETWORK_TARGETS: false, OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' });
    ({ api: strictApi } = await newOrg(strict));
    internal = createServer((req: IncomingMessage, res) => {
      internalRequests.push(`${req.method} ${req.url}`);
      res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>INTERNAL-SECRET-PAGE token=internal_only_4242</h1>');
    });
    await new Promise<void>((resolve) => internal.listen(0, '127.0.0.2', resolve));
    internalUrl = `http://127.0.0.2:${(internal.address() as { port: number }).port}`;
    publicSite = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://site').pathname;
      if (path === '/moved') { res.writeHead(302, { location: `${internalUrl}/latest/meta-data/` }).end(); return; }
      if (path !== '/shop') { res.writeHead(404).end('not here'); return; }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><html lang="en"><head><title>Shop</title></head>
        <body><h1>Acme garden shop</h1><p>Everything for your garden.</p>
        <iframe src="${internalUrl}/admin" width="600" height="200"></iframe><img src="${internalUrl}/logo.png" alt="">
        <script>fetch('${internalUrl}/api/secrets').catch(() => undefined);</script></body></html>`);
    });
    await new Promise<void>((resolve) => publicSite.listen(0, '127.0.0.1', resolve));
    publicUrl = `http://127.0.0.1:${(publicSite.address() as { port: number }).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => (publicSite ? publicSite.close(resolve) : resolve(undefined)));
    await new Promise((resolve) => (internal ? internal.close(resolve) : resolve(undefined)));
    await strict?.stop();
  });

  it('refuses a redirect, a frame, an image and a fetch to a private address, records them on the run, and fetches nothing private', async () => {
    const agent = await newAgent(strictApi, 'Acme help');
    expect((await strictApi.post(`${R}/agents/${agent.id}/training-notes`, { question: 'What is your refund policy?', answer: 'Refunds are accepted within 30 days of purchase.' })).status).toBe(201);
    // The private address itself is refused at the door, as before.
    const direct = await strictApi.post(`${R}/simulations/web`, { widget_id: agent.id, scenario_text: SCENARIO, page_url: `${internalUrl}/admin` });
    expect(direct.status, direct.text).toBe(400);
    expect(direct.body.code).toBe('private_network_target');

    // An allowed page that redirects to a private one: the hop is refused, the run fails with words that tell nothing of the target.
    const moved = await strictApi.post(`${R}/simulations/web`, { widget_id: agent.id, scenario_text: SCENARIO, page_url: `${publicUrl}/moved`, max_turns: 1 });
    expect(moved.status, moved.text).toBe(201);
    expect(moved.body).toMatchObject({ status: 'failed', ended_reason: 'error', has_screenshot: false });
    expect(moved.body.error).toBe('the page could not be opened; blocked_requests lists what the browser was not allowed to reach');
    expect(moved.body.blocked_requests).toEqual([{ origin: internalUrl, reason: 'private_network_target', count: expect.any(Number) }]);

    // An allowed page that embeds a private frame and image and fetches from a private address: the page works, they do not load.
    const framed = await strictApi.post(`${R}/simulations/web`, { widget_id: agent.id, scenario_text: 'Ask about the refund policy.', page_url: `${publicUrl}/shop`, max_turns: 1 });
    expect(framed.status, framed.text).toBe(201);
    expect(framed.body).toMatchObject({ status: 'completed', has_screenshot: true, error: null });
    expect(framed.body.messages.some((m: any) => m.role === 'agent' && /30 days/.test(m.text))).toBe(true);
    const [entry, ...others] = framed.body.blocked_requests;
    expect(others).toEqual([]);
    expect(entry).toEqual({ origin: internalUrl, reason: 'private_network_target', count: expect.any(Number) });
    expect(entry.count).toBeGreaterThanOrEqual(3); // the frame, the image and the fetch
    const stored = await strictApi.get(`${R}/simulations/${framed.body.id}`);
    expect(stored.body.blocked_requests).toEqual(framed.body.blocked_requests);

    expect(internalRequests).toEqual([]);
  }, 240_000);
});

it('a visitor cannot mark a conversation simulated: a forged or stale simulation header starts a real one', async () => {
  const agent = await shopAgent();
  const start = (marker: string) => fetch(`${svc.url}/api/v1/public/widgets/${agent.public_key}/conversations`, {
    method: 'POST', headers: { 'content-type': 'application/json', origin: siteUrl, 'x-simulation-token': marker },
    body: JSON.stringify({ page_url: `${siteUrl}/plain` }),
  });
  // A well-signed token of a run that is no web simulation of this agent (a turn-based run) does not count either.
  const turns = await api.post(`${R}/simulations`, { opponent_widget_id: agent.id, scenario_text: 'Ask about delivery' });
  expect(turns.status, turns.text).toBe(201);
  const secrets = createSecretBox(decodeSecretsKey(svc.config.SECRETS_KEY!, 'test'));
  for (const marker of ['01234567-89ab-7def-8123-456789abcdef.forged', 'nonsense', '', simulationToken(secrets, turns.body.id, agent.public_key)]) {
    const res = await start(marker);
    expect(res.status, marker).toBe(201);
    const { conversation_id: id } = await res.json() as { conversation_id: string };
    expect((await api.get(`${R}/conversations/${id}`)).body.is_simulated, marker).toBe(false);
  }
});
