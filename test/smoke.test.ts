import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, startTestService, type TestService } from './helpers.ts';

let svc: TestService;
beforeAll(async () => { svc = await startTestService(); });
afterAll(async () => { await svc?.stop(); });

describe('smoke', () => {
  it('creates and reads an agent', async () => {
    const { token } = await svc.newOrg();
    const api = client(svc.url, token);
    const created = await api.post('/api/v1/rest/agents', { name: 'Front desk' });
    expect(created.status).toBe(201);
    const got = await api.get(`/api/v1/rest/agents/${created.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body.name).toBe('Front desk');
  });
});
