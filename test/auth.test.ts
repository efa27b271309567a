import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, client, startTestService, type TestService } from './helpers.ts';
import { keyWith } from './support/orgs.ts';
import { PERMISSIONS, type Permission } from '../src/schemas/permissions.ts';
import { newId } from '../src/ids.ts';

let svc: TestService;
beforeAll(async () => { svc = await startTestService({ AMS_BOOTSTRAP_TOKEN: 'sk_bootstrap_test_token_0123456789' }); });
afterAll(async () => { await svc?.stop(); });

describe('authentication', () => {
  it('answers 401 with WWW-Authenticate for a missing, malformed, unknown or revoked token', async () => {
    const { token } = await svc.newOrg();
    const revoked = await keyWith(svc, token, ['agents.read']);
    expect((await client(svc.url, token).delete(`/api/v1/rest/api-keys/${revoked.id}`)).status).toBe(204);
    const cases: Record<string, string | undefined> = {
      none: undefined, basic: 'Basic dXNlcjpwYXNz', empty: 'Bearer ', unknown: 'Bearer sk_doesnotexist',
      noPrefix: 'Bearer abcdef', revoked: `Bearer ${revoked.token}`,
    };
    for (const [name, authorization] of Object.entries(cases)) {
      const res = await call(svc.url, 'GET', '/api/v1/rest/agents', { headers: authorization ? { authorization } : {} });
      expect(res.status, name).toBe(401);
      expect(res.headers.get('www-authenticate'), name).toBe('Bearer');
      expect(res.headers.get('content-type'), name).toMatch(/^application\/problem\+json/);
      expect(res.body.code, name).toBe('unauthorized');
      expect(res.body.request_id, name).toBe(res.headers.get('x-request-id'));
    }
  });

  it('revokes at once: the next request with the key is 401', async () => {
    const { token } = await svc.newOrg();
    const key = await keyWith(svc, token, ['agents.read']);
    expect((await client(svc.url, key.token).get('/api/v1/rest/agents')).status).toBe(200);
    expect((await client(svc.url, token).delete(`/api/v1/rest/api-keys/${key.id}`)).status).toBe(204);
    expect((await client(svc.url, key.token).get('/api/v1/rest/agents')).status).toBe(401);
    expect((await client(svc.url, token).delete(`/api/v1/rest/api-keys/${key.id}`)).status).toBe(404);
  });

  it('makes AMS_BOOTSTRAP_TOKEN an all-permission key of the organization "default"', async () => {
    const api = client(svc.url, 'sk_bootstrap_test_token_0123456789');
    expect((await api.get('/api/v1/rest/agents')).status).toBe(200);
    const keys = await api.get('/api/v1/rest/api-keys');
    expect(keys.status).toBe(200);
    const bootstrap = keys.body.data.find((k: { name: string }) => k.name === 'bootstrap');
    expect(bootstrap.permissions.sort()).toEqual([...PERMISSIONS].sort());
    const [org] = await svc.sql`select o.name from organizations o join api_keys k on k.org_id = o.id where k.id = ${bootstrap.id}`;
    expect(org!.name).toBe('default');
  });
});

describe('permissions for agents', () => {
  const rows: { method: string; path: (id: string) => string; body?: unknown; needs: Permission[] }[] = [
    { method: 'GET', path: () => '/api/v1/rest/agents', needs: ['agents.read'] },
    { method: 'GET', path: (id) => `/api/v1/rest/agents/${id}`, needs: ['agents.read'] },
    { method: 'POST', path: () => '/api/v1/rest/agents', body: { name: 'P' }, needs: ['agents.write'] },
    { method: 'PATCH', path: (id) => `/api/v1/rest/agents/${id}`, body: { name: 'Q' }, needs: ['agents.write'] },
    { method: 'DELETE', path: (id) => `/api/v1/rest/agents/${id}`, needs: ['agents.write'] },
    { method: 'DELETE', path: (id) => `/api/v1/rest/agents/${id}?delete_kbs=true`, needs: ['agents.write', 'knowledge.write'] },
  ];

  for (const row of rows) {
    it(`${row.method} ${row.path(':id')} needs ${row.needs.join(' + ')}`, async () => {
      const { token } = await svc.newOrg();
      const admin = client(svc.url, token);
      const agentId = (await admin.post('/api/v1/rest/agents', { name: 'Target' })).body.id;
      // Every subset missing one required permission is refused with that permission named.
      for (const missing of row.needs) {
        const others = PERMISSIONS.filter((p) => p !== missing);
        const key = await keyWith(svc, token, others);
        const res = await call(svc.url, row.method, row.path(agentId), { token: key.token, body: row.body });
        expect(res.status, `without ${missing}`).toBe(403);
        expect(res.body).toMatchObject({ code: 'missing_permission', required_permission: missing });
      }
      const exact = await keyWith(svc, token, row.needs);
      const ok = await call(svc.url, row.method, row.path(agentId), { token: exact.token, body: row.body });
      expect(ok.status).toBeLessThan(300);
    });
  }

  it('user tokens (ut_) act with their own permissions', async () => {
    const { token } = await svc.newOrg();
    const user = await keyWith(svc, token, ['agents.read'], { user_email: 'Ada@Example.com' });
    expect(user.token).toMatch(/^ut_/);
    expect(user.kind).toBe('user');
    expect((await client(svc.url, user.token).get('/api/v1/rest/agents')).status).toBe(200);
    expect((await client(svc.url, user.token).post('/api/v1/rest/agents', { name: 'x' })).status).toBe(403);
  });
});

describe('api keys', () => {
  it('shows the token only on create, lists and gets without it', async () => {
    const { token } = await svc.newOrg();
    const api = client(svc.url, token);
    const created = await api.post('/api/v1/rest/api-keys', { name: 'ci', permissions: ['agents.read', 'agents.write'] });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`/api/v1/rest/api-keys/${created.body.id}`);
    expect(created.body).toMatchObject({ name: 'ci', kind: 'org', user_email: null, permissions: ['agents.read', 'agents.write'] });
    expect(created.body.token).toMatch(/^sk_[A-Za-z0-9_-]{40,}$/);
    const listed = await api.get('/api/v1/rest/api-keys');
    expect(listed.body.total).toBe(2);
    expect(listed.text).not.toContain(created.body.token);
    const got = await api.get(`/api/v1/rest/api-keys/${created.body.id}`);
    expect(got.body.token).toBeUndefined();
    expect(got.body.name).toBe('ci');
    const [row] = await svc.sql`select token_hash from api_keys where id = ${created.body.id}`;
    expect(Buffer.from(row!.token_hash).toString()).not.toContain(created.body.token);
  });

  it('refuses to grant a permission the calling key lacks', async () => {
    const { token } = await svc.newOrg();
    const limited = await keyWith(svc, token, ['org.write', 'agents.read']);
    const res = await client(svc.url, limited.token).post('/api/v1/rest/api-keys', { name: 'x', permissions: ['agents.read', 'agents.write'] });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'missing_permission', required_permission: 'agents.write' });
    const ok = await client(svc.url, limited.token).post('/api/v1/rest/api-keys', { name: 'x', permissions: ['agents.read'] });
    expect(ok.status).toBe(201);
  });

  it('needs org.write to issue and revoke, org.read to list', async () => {
    const { token } = await svc.newOrg();
    const reader = await keyWith(svc, token, ['org.read']);
    const api = client(svc.url, reader.token);
    expect((await api.get('/api/v1/rest/api-keys')).status).toBe(200);
    expect((await api.post('/api/v1/rest/api-keys', { name: 'x', permissions: [] })).body.required_permission).toBe('org.write');
    expect((await api.delete(`/api/v1/rest/api-keys/${reader.id}`)).body.required_permission).toBe('org.write');
    const none = await keyWith(svc, token, ['agents.read']);
    expect((await client(svc.url, none.token).get('/api/v1/rest/api-keys')).body.required_permission).toBe('org.read');
  });

  it('refuses unknown permissions and bad emails with field errors', async () => {
    const { token } = await svc.newOrg();
    const api = client(svc.url, token);
    const bad = await api.post('/api/v1/rest/api-keys', { name: 'x', permissions: ['agents.read', 'root'] });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatchObject({ field: 'permissions[1]', code: 'invalid_value' });
    const email = await api.post('/api/v1/rest/api-keys', { name: 'x', permissions: [], user_email: 'nope' });
    expect(email.body.errors[0]).toMatchObject({ field: 'user_email', code: 'invalid_email' });
  });

  it('revokes only keys whose permissions the calling key holds, else 403 naming what it lacks (issue 12, defect 10)', async () => {
    const { token } = await svc.newOrg();
    const admin = await keyWith(svc, token, [...PERMISSIONS]);
    const manager = await keyWith(svc, token, ['org.read', 'org.write']);
    const weak = await keyWith(svc, token, ['org.read', 'agents.read']);
    const api = client(svc.url, manager.token);
    const refused = await api.delete(`/api/v1/rest/api-keys/${admin.id}`);
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body).toMatchObject({ code: 'missing_permission', required_permission: 'agents.read' });
    expect((await api.delete(`/api/v1/rest/api-keys/${weak.id}`)).body.required_permission).toBe('agents.read');
    // Nothing was revoked: both keys still work.
    expect((await client(svc.url, admin.token).get('/api/v1/rest/agents')).status).toBe(200);
    expect((await client(svc.url, weak.token).get('/api/v1/rest/agents')).status).toBe(200);
    // The bootstrap key (every permission) is out of its reach too.
    const [boot] = await svc.sql<{ id: string; org_id: string }[]>`select id, org_id from api_keys where name = 'bootstrap'`;
    const bootManager = await keyWith(svc, 'sk_bootstrap_test_token_0123456789', ['org.read', 'org.write']);
    expect((await client(svc.url, bootManager.token).delete(`/api/v1/rest/api-keys/${boot!.id}`)).status).toBe(403);
    expect((await client(svc.url, 'sk_bootstrap_test_token_0123456789').get('/api/v1/rest/agents')).status).toBe(200);
    // A key it covers (a subset of its own permissions, itself included) goes.
    const narrower = await keyWith(svc, token, ['org.read']);
    expect((await api.delete(`/api/v1/rest/api-keys/${narrower.id}`)).status).toBe(204);
    expect((await client(svc.url, admin.token).delete(`/api/v1/rest/api-keys/${weak.id}`)).status).toBe(204);
    expect((await api.delete(`/api/v1/rest/api-keys/${manager.id}`)).status).toBe(204);
  });

  it('keeps organizations sealed: keys of one are 404 to another', async () => {
    const a = await svc.newOrg();
    const b = await svc.newOrg();
    const key = await keyWith(svc, a.token, ['agents.read']);
    expect((await client(svc.url, b.token).get(`/api/v1/rest/api-keys/${key.id}`)).status).toBe(404);
    expect((await client(svc.url, b.token).delete(`/api/v1/rest/api-keys/${key.id}`)).status).toBe(404);
    expect((await client(svc.url, b.token).get(`/api/v1/rest/api-keys/${newId()}`)).status).toBe(404);
    expect((await client(svc.url, key.token).get('/api/v1/rest/agents')).status).toBe(200);
  });
});
