import { afterAll, beforeAll, expect, it } from 'vitest';
import { client, startTestService, type TestService } from './helpers.ts';

const lines: string[] = [];
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({}, { env: { LOG_LEVEL: 'debug' }, worker: false, logDestination: { write: (line: string) => { lines.push(line); } } });
});
afterAll(async () => { await svc?.stop(); });

it('logs one JSON line per request with its request id, and never a token', async () => {
  const { token } = await svc.newOrg();
  const api = client(svc.url, token);
  const created = await api.post('/api/v1/rest/api-keys', { name: 'secret-holder', permissions: ['agents.read'] }, { 'X-Request-Id': 'trace-me-123' });
  expect(created.status).toBe(201);
  await client(svc.url, created.body.token).get('/api/v1/rest/agents?limit=5');
  await client(svc.url, 'sk_wrong_token_value_1234567890').get('/api/v1/rest/agents');
  await api.post('/api/v1/rest/agents', '{"name": ', { 'X-Request-Id': 'bad-json-1' });

  const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  const create = records.find((r) => r.request_id === 'trace-me-123' && r.msg === 'request');
  expect(create).toMatchObject({ method: 'POST', path: '/api/v1/rest/api-keys', status: 201 });
  expect(typeof create!.duration_ms).toBe('number');
  expect(records.find((r) => r.request_id === 'bad-json-1')).toMatchObject({ status: 400 });
  const all = lines.join('\n');
  for (const secret of [token, created.body.token, 'sk_wrong_token_value_1234567890']) expect(all).not.toContain(secret);
  expect(all).not.toMatch(/authorization/i);
});
