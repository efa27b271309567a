import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, startTestService, type TestService } from './helpers.ts';
import { createHash, randomUUID } from 'node:crypto';
import { fingerprint } from '../api/middleware/idempotency.ts';
import { createSecretBox, decodeSecretsKey } from '../src/crypto/secret-box.ts';
import { claimIdempotencyKey, renewIdempotencyLeases } from '../src/db/idempotency-keys.ts';

let svc: TestService;
let limited: TestService;
beforeAll(async () => {
  [svc, limited] = await Promise.all([startTestService(), startTestService({ RATE_LIMIT_PER_MINUTE: 5 }, { worker: false })]);
});
afterAll(async () => { await Promise.all([svc?.stop(), limited?.stop()]); });

describe('Idempotency-Key', () => {
  it('replays the first response for the same key and body', async () => {
    const { token } = await svc.newOrg();
    const api = client(svc.url, token);
    const first = await api.post('/api/v1/rest/agents', { name: 'Once' }, { 'Idempotency-Key': 'create-once-1' });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    // Same JSON with other spacing and key order is the same request.
    const again = await api.post('/api/v1/rest/agents', '{ "name" : "Once" }', { 'Idempotency-Key': 'create-once-1' });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(again.body).toEqual(first.body);
    expect((await api.get('/api/v1/rest/agents')).body.total).toBe(1);
  });

  it('answers 422 when the key is reused with another body, and changes nothing', async () => {
    const { token } = await svc.newOrg();
    const api = client(svc.url, token);
    await api.post('/api/v1/rest/agents', { name: 'A' }, { 'Idempotency-Key': 'k-422' });
    const res = await api.post('/api/v1/rest/agents', { name: 'B' }, { 'Idempotency-Key': 'k-422' });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('idempotency_key_reused');
    expect((await api.get('/api/v1/rest/agents')).body.total).toBe(1);
  });

  it('answers 409 while the first request with the key is still running', async () => {
    const { token, orgId } = await svc.newOrg();
    const api = client(svc.url, token);
    // Concurrent twins: exactly one creates; the other is told to wait or gets the replay.
    const results = await Promise.all(Array.from({ length: 6 }, () =>
      api.post('/api/v1/rest/agents', { name: 'Race' }, { 'Idempotency-Key': 'race-1' })));
    const statuses = results.map((r) => r.status);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    expect(statuses).toContain(201);
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.code).toBe('idempotency_in_progress');
    expect(new Set(results.filter((r) => r.status === 201).map((r) => r.body.id)).size).toBe(1);
    expect((await api.get('/api/v1/rest/agents')).body.total).toBe(1);

    // A request frozen mid-flight (its record still in progress) makes a twin wait: 409.
    const print = fingerprint(createSecretBox(decodeSecretsKey(svc.config.SECRETS_KEY!, 'test')), 'POST', '/api/v1/rest/agents', { name: 'Race' });
    await svc.sql`insert into idempotency_keys (org_id, key, fingerprint, state) values (${orgId}, 'frozen', ${print}, 'in_progress')`;
    const frozen = await api.post('/api/v1/rest/agents', { name: 'Race' }, { 'Idempotency-Key': 'frozen' });
    expect(frozen.status).toBe(409);
    expect(frozen.body.code).toBe('idempotency_in_progress');
  });

  it('runs a retry once the request holding its key died with its process, not 24 hours later (issue 40, D15)', async () => {
    const { token, orgId } = await svc.newOrg();
    const api = client(svc.url, token);
    const [apiKey] = await svc.sql<{ id: string }[]>`select id from api_keys where org_id = ${orgId}`;
    const body = { name: 'Crashed' };
    const print = fingerprint(createSecretBox(decodeSecretsKey(svc.config.SECRETS_KEY!, 'test')), 'POST', '/api/v1/rest/agents', body);
    const dead = () => ({ fingerprint: print, apiKeyId: apiKey!.id, holder: randomUUID() });
    // What a process killed mid-request leaves behind: its claim, in progress, which nothing will renew again.
    // Within its lease the claim cannot be told from a request still running: a twin waits.
    expect(await claimIdempotencyKey(svc.sql, orgId, 'crashed-0', dead())).toBe(true);
    const early = await api.post('/api/v1/rest/agents', body, { 'Idempotency-Key': 'crashed-0' });
    expect(early.status, early.text).toBe(409);
    expect(early.body.code).toBe('idempotency_in_progress');
    // Once its lease ran out (here: a second ago, as it is IDEMPOTENCY_LEASE_SECONDS after the crash), the retry runs, once.
    expect(await claimIdempotencyKey(svc.sql, orgId, 'crashed-1', { ...dead(), leaseSeconds: -1 })).toBe(true);
    const retry = await api.post('/api/v1/rest/agents', body, { 'Idempotency-Key': 'crashed-1' });
    expect(retry.status, retry.text).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    const replay = await api.post('/api/v1/rest/agents', body, { 'Idempotency-Key': 'crashed-1' });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.id).toBe(retry.body.id);
    expect((await api.get('/api/v1/rest/agents')).body.total).toBe(1);
    // A claim whose live process renews its lease (as it does every third of a lease while the request runs) stays 409.
    const holder = randomUUID();
    expect(await claimIdempotencyKey(svc.sql, orgId, 'running-1', { fingerprint: print, apiKeyId: apiKey!.id, holder, leaseSeconds: -1 })).toBe(true);
    await renewIdempotencyLeases(svc.sql, [holder]);
    expect((await api.post('/api/v1/rest/agents', body, { 'Idempotency-Key': 'running-1' })).status).toBe(409);
  });

  it('keeps keys per organization and frees a key after a refused request', async () => {
    const a = await svc.newOrg();
    const b = await svc.newOrg();
    const ra = await client(svc.url, a.token).post('/api/v1/rest/agents', { name: 'Shared key' }, { 'Idempotency-Key': 'same' });
    const rb = await client(svc.url, b.token).post('/api/v1/rest/agents', { name: 'Shared key' }, { 'Idempotency-Key': 'same' });
    expect(rb.status).toBe(201);
    expect(rb.headers.get('idempotent-replayed')).toBeNull();
    expect(rb.body.id).not.toBe(ra.body.id);

    const api = client(svc.url, a.token);
    const bad = await api.post('/api/v1/rest/agents', { name: '' }, { 'Idempotency-Key': 'fix-me' });
    expect(bad.status).toBe(400);
    const fixed = await api.post('/api/v1/rest/agents', { name: 'Fixed' }, { 'Idempotency-Key': 'fix-me' });
    expect(fixed.status).toBe(201);
  });

  it('keeps neither a shown-once secret nor a plain hash of a body in the idempotency table', async () => {
    const { token, orgId } = await svc.newOrg();
    const api = client(svc.url, token);
    const created = await api.post('/api/v1/rest/api-keys', { name: 'ci', permissions: ['agents.read'] }, { 'Idempotency-Key': 'key-once' });
    expect(created.status).toBe(201);
    const [row] = await svc.sql<{ response_body: string; fingerprint: Buffer }[]>`
      select response_body, fingerprint from idempotency_keys where org_id = ${orgId} and key = 'key-once'`;
    expect(row!.response_body).not.toContain(created.body.token);
    expect(row!.response_body).toMatch(/^v1:/);
    const plain = createHash('sha256').update(`POST /api/v1/rest/api-keys\n{"name":"ci","permissions":["agents.read"]}`).digest();
    expect(row!.fingerprint.equals(plain)).toBe(false);
    // The replay still answers the first response, token included.
    const replay = await api.post('/api/v1/rest/api-keys', { name: 'ci', permissions: ['agents.read'] }, { 'Idempotency-Key': 'key-once' });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(created.body);
  });

  it('replays only to the key that made the request, and never a secret of a resource that is gone (issue 12, defect 8)', async () => {
    const { token } = await svc.newOrg();
    const api = client(svc.url, token);
    const other = client(svc.url, (await api.post('/api/v1/rest/api-keys', { name: 'twin', permissions: ['org.read', 'org.write', 'agents.read'] })).body.token);
    const body = { name: 'ci', permissions: ['agents.read'] };
    const created = await api.post('/api/v1/rest/api-keys', body, { 'Idempotency-Key': 'scoped-1' });
    expect(created.status).toBe(201);
    const stolen = await other.post('/api/v1/rest/api-keys', body, { 'Idempotency-Key': 'scoped-1' });
    expect(stolen.status, stolen.text).toBe(422);
    expect(stolen.body.code).toBe('idempotency_key_reused');
    expect(stolen.text).not.toContain(created.body.token);
    // The key that made it still gets its replay, until the key it created is revoked.
    expect((await api.post('/api/v1/rest/api-keys', body, { 'Idempotency-Key': 'scoped-1' })).body.token).toBe(created.body.token);
    expect((await api.delete(`/api/v1/rest/api-keys/${created.body.id}`)).status).toBe(204);
    const gone = await api.post('/api/v1/rest/api-keys', body, { 'Idempotency-Key': 'scoped-1' });
    expect(gone.status, gone.text).toBe(409);
    expect(gone.body.code).toBe('invalid_state');
    expect(gone.text).not.toContain(created.body.token);

    // A webhook secret likewise: not to another key, not after the endpoint is deleted.
    const hook = { url: 'https://93.184.216.34/in', events: ['widget.ready'] };
    const endpoint = await api.post('/api/v1/rest/webhooks', hook, { 'Idempotency-Key': 'hook-1' });
    expect(endpoint.status, endpoint.text).toBe(201);
    expect((await other.post('/api/v1/rest/webhooks', hook, { 'Idempotency-Key': 'hook-1' })).status).toBe(422);
    expect((await api.delete(`/api/v1/rest/webhooks/${endpoint.body.id}`)).status).toBe(204);
    const replay = await api.post('/api/v1/rest/webhooks', hook, { 'Idempotency-Key': 'hook-1' });
    expect(replay.status, replay.text).toBe(409);
    expect(replay.text).not.toContain(endpoint.body.secret);
  });

  it('refuses a malformed key', async () => {
    const { token } = await svc.newOrg();
    const res = await client(svc.url, token).post('/api/v1/rest/agents', { name: 'x' }, { 'Idempotency-Key': 'x'.repeat(256) });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].field).toBe('Idempotency-Key');
  });
});

describe('rate limiting', () => {
  it('sends RateLimit fields on every authenticated response and 429 with Retry-After past the limit', async () => {
    const { token } = await limited.newOrg();
    const api = client(limited.url, token);
    const seen: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = i === 4 ? await api.get('/api/v1/rest/agents/not-a-uuid') : await api.get('/api/v1/rest/agents');
      expect(res.headers.get('ratelimit-policy')).toBe('"default";q=5;w=60');
      const m = /^"default";r=(\d+);t=(\d+)$/.exec(res.headers.get('ratelimit') ?? '');
      expect(m).not.toBeNull();
      expect(Number(m![2])).toBeGreaterThan(0);
      expect(Number(m![2])).toBeLessThanOrEqual(60);
      seen.push(Number(m![1]));
    }
    expect(seen).toEqual([4, 3, 2, 1, 0]);
    const refused = await api.get('/api/v1/rest/agents');
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('ratelimit')).toMatch(/^"default";r=0;t=\d+$/);

    // Limits are per token: another key of the same organization still has its quota.
    const other = await limited.newOrg();
    expect((await client(limited.url, other.token).get('/api/v1/rest/agents')).status).toBe(200);
  });

  it('sends no RateLimit fields to unauthenticated requests', async () => {
    const res = await client(limited.url).get('/api/v1/rest/agents');
    expect(res.status).toBe(401);
    expect(res.headers.get('ratelimit')).toBeNull();
  });
});
