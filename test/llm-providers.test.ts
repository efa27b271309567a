import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, startTestService, type ApiResponse, type TestService } from './helpers.ts';
import { keyWith, newAgent, type Api } from './support/orgs.ts';
import { expectFieldError, expectProblem } from './support/problems.ts';
import { startChatCompletionsServer, type ChatCompletionsServer, type RecordedRequest } from './fixtures/chat-completions-server.ts';

// One service whose deployment default (LLM_BASE_URL) is one local OpenAI-compatible server, and a second server that
// organizations register as their own provider: a turn must reach the one its agent's model setting names.
let svc: TestService;
let guarded: TestService;
let deployment: ChatCompletionsServer;
let provider: ChatCompletionsServer;
const logLines: string[] = [];
beforeAll(async () => {
  deployment = await startChatCompletionsServer({ fallback: () => ({ content: 'From the deployment default.' }) });
  provider = await startChatCompletionsServer({ fallback: () => ({ content: 'From the provider fallback.' }) });
  [svc, guarded] = await Promise.all([
    startTestService({ SENTENCE_ENCODER: 'off', ALLOW_PRIVATE_NETWORK_TARGETS: true, LLM_BASE_URL: deployment.baseUrl, LLM_MODEL: 'deployment-model' }, {
      env: { LOG_LEVEL: 'debug' }, logDestination: { write: (line: string) => { logLines.push(line); } },
    }),
    // Private targets refused, as in production: a provider's base URL is checked as every outbound URL.
    startTestService({}, { worker: false }),
  ]);
});
afterAll(async () => {
  await Promise.all([svc?.stop(), guarded?.stop()]);
  await Promise.all([deployment?.close(), provider?.close()]);
});

const P = '/api/v1/rest/llm-providers';
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Every key a test used: no response text and no log line may contain one. */
const keys = new Set<string>();
const responses: ApiResponse[] = [];
const apiKey = (label: string) => {
  const value = `sk-${label}-${randomUUID().replace(/-/g, '')}`;
  keys.add(value);
  return value;
};
/** A client that records every response, so the last test can search them all. */
function recording(api: Api): Api {
  const keep = <T extends ApiResponse>(p: Promise<T>) => p.then((r) => { responses.push(r); return r; });
  return {
    get: (path, headers) => keep(api.get(path, headers)),
    post: (path, body, headers) => keep(api.post(path, body, headers)),
    patch: (path, body, headers) => keep(api.patch(path, body, headers)),
    put: (path, body, headers) => keep(api.put(path, body, headers)),
    delete: (path, headers) => keep(api.delete(path, headers)),
  };
}
async function newOrg(on = svc) {
  const org = await on.newOrg();
  return { ...org, api: recording(client(on.url, org.token)) };
}
async function newProvider(api: Api, body: Record<string, unknown> = {}) {
  const res = await api.post(P, { name: 'Team model', base_url: provider.baseUrl, api_key: apiKey('create'), default_model: 'provider-default', ...body });
  expect(res.status, res.text).toBe(201);
  return res.body as Record<string, any>;
}

describe('LLM providers: CRUD', () => {
  it('creates, reads, lists, updates and deletes a provider; the key is write-only (set, last 4 at most)', async () => {
    const { api } = await newOrg();
    const key = apiKey('crud');
    const created = await api.post(P, { name: 'Team model', base_url: `${provider.baseUrl}/`, api_key: key, default_model: 'gpt-team' });
    expect(created.status, created.text).toBe(201);
    const p = created.body;
    expect(created.headers.get('location')).toBe(`${P}/${p.id}`);
    expect(p).toEqual({
      id: expect.any(String), name: 'Team model', base_url: provider.baseUrl, api_key_set: true, api_key_last4: key.slice(-4),
      default_model: 'gpt-team', created_at: expect.stringMatching(ISO_MS), updated_at: expect.stringMatching(ISO_MS),
    });
    expect((await api.get(`${P}/${p.id}`)).body).toEqual(p);
    const list = await api.get(`${P}?limit=10`);
    expect(list.body).toEqual({ data: [p], total: 1, limit: 10, offset: 0 });

    expect((await api.patch(`${P}/${p.id}`, {})).body).toEqual(p);
    const rotated = apiKey('rotated');
    const patched = await api.patch(`${P}/${p.id}`, { name: 'Renamed', default_model: 'gpt-other', api_key: rotated });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ name: 'Renamed', default_model: 'gpt-other', api_key_set: true, api_key_last4: rotated.slice(-4), base_url: provider.baseUrl });
    const cleared = await api.patch(`${P}/${p.id}`, { api_key: null });
    expect(cleared.body).toMatchObject({ api_key_set: false, api_key_last4: null });
    // A short key shows nothing of itself.
    expect((await api.patch(`${P}/${p.id}`, { api_key: 'short-key' })).body).toMatchObject({ api_key_set: true, api_key_last4: null });
    keys.add('short-key');

    expect((await api.delete(`${P}/${p.id}`)).status).toBe(204);
    expectProblem(await api.get(`${P}/${p.id}`), 404, 'not_found');
    expectProblem(await api.delete(`${P}/${p.id}`), 404, 'not_found');
  });

  it('replays a create sent again with the same Idempotency-Key', async () => {
    const { api } = await newOrg();
    const body = { name: 'Once', base_url: provider.baseUrl, api_key: apiKey('idem'), default_model: 'm1' };
    const first = await api.post(P, body, { 'idempotency-key': 'create-provider-1' });
    const again = await api.post(P, body, { 'idempotency-key': 'create-provider-1' });
    expect(first.status, first.text).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    expect((await api.get(P)).body.total).toBe(1);
  });

  it('refuses bad fields with 400 and changes nothing', async () => {
    const { api } = await newOrg();
    expectFieldError(await api.post(P, { name: 'x', base_url: provider.baseUrl }), 'default_model');
    expectFieldError(await api.post(P, { name: 'x', base_url: provider.baseUrl, default_model: 'm', secret: 'no' }), 'secret');
    expectFieldError(await api.post(P, { name: 'x', base_url: 'ftp://models.example.com/v1', default_model: 'm' }), 'base_url', 'https_required');
    expectFieldError(await api.post(P, { name: 'x', base_url: 'not a url', default_model: 'm' }), 'base_url');
    expectFieldError(await api.post(P, { name: '', base_url: provider.baseUrl, default_model: 'm' }), 'name');
    expectFieldError(await api.post(P, { name: 'x', base_url: provider.baseUrl, default_model: 'two words' }), 'default_model');
    const p = await newProvider(api);
    expectFieldError(await api.patch(`${P}/${p.id}`, { base_url: 'ftp://models.example.com/v1' }), 'base_url');
    expect((await api.get(`${P}/${p.id}`)).body).toEqual(p);
    expect((await api.get(P)).body.total).toBe(1);
  });

  it('refuses a base URL on a private address where private targets are not allowed', async () => {
    const { api } = await newOrg(guarded);
    expectProblem(await api.post(P, { name: 'x', base_url: 'https://127.0.0.1/v1', default_model: 'm' }), 400, 'private_network_target');
    expectProblem(await api.post(P, { name: 'x', base_url: 'https://10.1.2.3/v1', default_model: 'm' }), 400, 'private_network_target');
    expectFieldError(await api.post(P, { name: 'x', base_url: 'http://models.example.com/v1', default_model: 'm' }), 'base_url', 'https_required');
    expect((await api.get(P)).body.total).toBe(0);
  });

  it('needs org.read to read and org.write to change', async () => {
    const { api, token } = await newOrg();
    const p = await newProvider(api);
    const reader = await keyWith(svc, token, ['org.read']);
    expect((await reader.api.get(`${P}/${p.id}`)).status).toBe(200);
    expect((await reader.api.post(P, { name: 'x', base_url: provider.baseUrl, default_model: 'm' })).body.required_permission).toBe('org.write');
    expectProblem(await reader.api.patch(`${P}/${p.id}`, { name: 'y' }), 403, 'missing_permission');
    expectProblem(await reader.api.delete(`${P}/${p.id}`), 403, 'missing_permission');
    const agentsOnly = await keyWith(svc, token, ['agents.read']);
    expectProblem(await agentsOnly.api.get(P), 403, 'missing_permission');
  });

  it('keeps organizations apart: another organization\'s provider is 404 and cannot be named by its agents', async () => {
    const a = await newOrg();
    const b = await newOrg();
    const p = await newProvider(a.api);
    expectProblem(await b.api.get(`${P}/${p.id}`), 404, 'not_found');
    expectProblem(await b.api.patch(`${P}/${p.id}`, { name: 'stolen' }), 404, 'not_found');
    expectProblem(await b.api.delete(`${P}/${p.id}`), 404, 'not_found');
    expect((await b.api.get(P)).body).toMatchObject({ data: [], total: 0 });
    const agent = await newAgent(b.api, 'Other org agent');
    expectFieldError(await b.api.patch(`/api/v1/rest/agents/${agent.id}`, { model: { provider_id: p.id } }), 'model.provider_id', 'unknown_llm_provider');
    expect((await a.api.get(`${P}/${p.id}`)).body).toEqual(p);
  });
});

describe('an agent\'s model setting', () => {
  it('is null until set, shows every member once set, and null clears it', async () => {
    const { api } = await newOrg();
    const p = await newProvider(api);
    const agent = await newAgent(api, 'Model agent');
    expect(agent.model).toBeNull();
    const set = await api.patch(`/api/v1/rest/agents/${agent.id}`, { model: { provider_id: p.id, temperature: 0.7 } });
    expect(set.status, set.text).toBe(200);
    expect(set.body.model).toEqual({ provider_id: p.id, model: null, temperature: 0.7, max_tokens: null, reply_language: 'auto' });
    expect((await api.get(`/api/v1/rest/agents/${agent.id}`)).body.model).toEqual(set.body.model);
    // Part of the export, like every configuration field.
    const exported = await api.get(`/api/v1/rest/agents/${agent.id}/export`);
    expect(exported.status, exported.text).toBe(200);
    expect(exported.body.agent.configuration.model).toEqual(set.body.model);
    const cleared = await api.patch(`/api/v1/rest/agents/${agent.id}`, { model: null });
    expect(cleared.body.model).toBeNull();
  });

  it('refuses out-of-range and unknown values with a field error and changes nothing', async () => {
    const { api } = await newOrg();
    const agent = await newAgent(api, 'Strict agent');
    const path = `/api/v1/rest/agents/${agent.id}`;
    expectFieldError(await api.patch(path, { model: { temperature: 2.5 } }), 'model.temperature');
    expectFieldError(await api.patch(path, { model: { temperature: -0.1 } }), 'model.temperature');
    expectFieldError(await api.patch(path, { model: { max_tokens: 0 } }), 'model.max_tokens');
    expectFieldError(await api.patch(path, { model: { max_tokens: 32001 } }), 'model.max_tokens');
    expectFieldError(await api.patch(path, { model: { reply_language: 'Klingon!' } }), 'model.reply_language');
    expectFieldError(await api.patch(path, { model: { top_p: 1 } }), 'model.top_p');
    expectFieldError(await api.patch(path, { model: { provider_id: randomUUID() } }), 'model.provider_id', 'unknown_llm_provider');
    expectFieldError(await api.put(`${path}/draft`, { model: { provider_id: randomUUID() } }), 'model.provider_id', 'unknown_llm_provider');
    expect((await api.get(path)).body.model).toBeNull();
  });

  it('a provider an agent uses cannot be deleted (409 llm_provider_in_use); once released it can', async () => {
    const { api } = await newOrg();
    const p = await newProvider(api);
    const agent = await newAgent(api, 'User of the provider');
    expect((await api.patch(`/api/v1/rest/agents/${agent.id}`, { model: { provider_id: p.id } })).status).toBe(200);
    const refused = expectProblem(await api.delete(`${P}/${p.id}`), 409, 'llm_provider_in_use');
    expect(refused.agent_count).toBe(1);
    expect((await api.get(`${P}/${p.id}`)).status).toBe(200);
    // A pending draft that names it holds it too.
    expect((await api.patch(`/api/v1/rest/agents/${agent.id}`, { model: null })).status).toBe(200);
    expect((await api.put(`/api/v1/rest/agents/${agent.id}/draft`, { model: { provider_id: p.id } })).status).toBe(200);
    expectProblem(await api.delete(`${P}/${p.id}`), 409, 'llm_provider_in_use');
    expect((await api.delete(`/api/v1/rest/agents/${agent.id}/draft`)).status).toBe(204);
    expect((await api.delete(`${P}/${p.id}`)).status).toBe(204);
  });
});

/** Starts a web conversation with the agent and sends `text`; answers the agent's reply texts. */
async function converse(agent: Record<string, any>, text: string): Promise<string[]> {
  const pub = client(svc.url);
  const base = `/api/v1/public/widgets/${agent.public_key}/conversations`;
  const started = await pub.post(base, { page_url: 'https://example.com/' });
  expect(started.status, started.text).toBe(201);
  const sent = await call(`${base}/${started.body.conversation_id}/messages`, started.body.visitor_token as string, text);
  expect(sent.status, sent.text).toBe(200);
  return (sent.body.messages as { text: string }[]).map((m) => m.text);
}
const call = (path: string, token: string, text: string) => client(svc.url).post(path, { text }, { 'x-visitor-token': token });

/** The requests a server received for the turn whose visitor message is `text`. */
const requestsFor = (server: ChatCompletionsServer, text: string): RecordedRequest[] =>
  server.requests.filter((r) => JSON.stringify(r.body?.messages ?? []).includes(text));

describe('the runtime follows the agent\'s model setting', () => {
  it('a turn of an agent naming a provider goes to that provider, with its key, model, temperature and max_tokens', async () => {
    const { api } = await newOrg();
    const key = apiKey('runtime');
    const p = await newProvider(api, { api_key: key });
    const agent = await newAgent(api, 'Provider agent');
    const set = await api.patch(`/api/v1/rest/agents/${agent.id}`, { model: { provider_id: p.id, model: 'team-model-7', temperature: 0.3, max_tokens: 321 } });
    expect(set.status, set.text).toBe(200);
    const question = `What do you sell? ${randomUUID()}`;
    provider.enqueue({ content: 'We sell bread, says the provider.' });
    const replies = await converse(agent, question);
    expect(replies).toEqual(['We sell bread, says the provider.']);
    const seen = requestsFor(provider, question);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.body).toMatchObject({ model: 'team-model-7', temperature: 0.3, max_tokens: 321 });
    expect(seen[0]!.headers.authorization).toBe(`Bearer ${key}`);
    expect(requestsFor(deployment, question)).toHaveLength(0);
  });

  it('without a model name the provider\'s default_model is asked; without a setting the deployment default answers as before', async () => {
    const { api } = await newOrg();
    const p = await newProvider(api, { default_model: 'provider-default-model' });
    const withProvider = await newAgent(api, 'Default model agent');
    expect((await api.patch(`/api/v1/rest/agents/${withProvider.id}`, { model: { provider_id: p.id } })).status).toBe(200);
    const q1 = `Opening hours? ${randomUUID()}`;
    provider.enqueue({ content: 'Nine to five.' });
    expect(await converse(withProvider, q1)).toEqual(['Nine to five.']);
    const first = requestsFor(provider, q1)[0]!.body;
    expect(first.model).toBe('provider-default-model');
    expect(first).not.toHaveProperty('temperature');
    expect(first).not.toHaveProperty('max_tokens');

    const plain = await newAgent(api, 'Plain agent');
    const q2 = `Do you deliver? ${randomUUID()}`;
    deployment.enqueue({ content: 'Yes, says the deployment.' });
    expect(await converse(plain, q2)).toEqual(['Yes, says the deployment.']);
    expect(requestsFor(deployment, q2)[0]!.body.model).toBe('deployment-model');
    expect(requestsFor(provider, q2)).toHaveLength(0);

    // No provider: the deployment's endpoint, with the setting's model and sampling.
    const tuned = await newAgent(api, 'Tuned agent');
    expect((await api.patch(`/api/v1/rest/agents/${tuned.id}`, { model: { provider_id: null, model: 'deployment-large', max_tokens: 64 } })).status).toBe(200);
    const q3 = `Gluten free? ${randomUUID()}`;
    deployment.enqueue({ content: 'Some of it.' });
    expect(await converse(tuned, q3)).toEqual(['Some of it.']);
    expect(requestsFor(deployment, q3)[0]!.body).toMatchObject({ model: 'deployment-large', max_tokens: 64 });
  });

  it('reply_language fixes the language the agent is told to answer in', async () => {
    const { api } = await newOrg();
    const p = await newProvider(api);
    const agent = await newAgent(api, 'Fixed language agent');
    expect((await api.patch(`/api/v1/rest/agents/${agent.id}`, { model: { provider_id: p.id, reply_language: 'fr' } })).status).toBe(200);
    const question = `Hello there ${randomUUID()}`;
    provider.enqueue({ content: 'Bonjour !' });
    expect(await converse(agent, question)).toEqual(['Bonjour !']);
    const system = requestsFor(provider, question)[0]!.body.messages[0].content as string;
    expect(system).toContain('Reply in French (page language "fr")');
  });

  it('never returns nor logs a key', () => {
    expect(keys.size).toBeGreaterThan(3);
    expect(responses.length).toBeGreaterThan(20);
    for (const key of keys) {
      for (const res of responses) expect(res.text.includes(key), `${key} in a response`).toBe(false);
      for (const line of logLines) expect(line.includes(key), `${key} in a log line`).toBe(false);
    }
    expect(logLines.length).toBeGreaterThan(0);
  });
});
