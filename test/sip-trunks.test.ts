import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, startTestService, type ApiResponse, type TestService } from './helpers.ts';
import { keyWith as issueKey, type Api } from './support/orgs.ts';
import { createSecretBox, decodeSecretsKey } from '../src/crypto/secret-box.ts';
import { findSipTrunk, findSipTrunkByHost, loadSipTrunkPassword } from '../src/db/sip-trunks.ts';

let svc: TestService;
const logLines: string[] = [];
beforeAll(async () => {
  // Debug logs captured: no line may ever carry a password.
  svc = await startTestService({}, { worker: false, env: { LOG_LEVEL: 'debug' }, logDestination: { write: (line: string) => { logLines.push(line); } } });
});
afterAll(async () => { await svc?.stop(); });

const T = '/api/v1/rest/sip-trunks';
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Every password a test used: no response text and no log line may contain one. */
const passwords = new Set<string>();
const responses: ApiResponse[] = [];
const password = (label: string) => {
  const value = `pw-${label}-${Math.random().toString(36).slice(2)}-Zq9!`;
  passwords.add(value);
  return value;
};
/** A client that records every response, so the final test can search them all. */
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

async function newOrg() {
  const org = await svc.newOrg();
  return { ...org, api: recording(client(svc.url, org.token)) };
}

async function createTrunk(api: Api, fields: Record<string, unknown> = {}) {
  const res = await api.post(T, { label: 'Main PBX', sip_host: 'pbx.example.com', sip_username: 'trunk-user', password: password('create'), ...fields });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; label: string; sip_host: string; sip_username: string; created_at: string; updated_at: string };
}

const sealedPassword = async (id: string) =>
  (await svc.sql<{ password_sealed: string }[]>`select password_sealed from sip_trunks where id = ${id}`)[0]!.password_sealed;
const box = () => createSecretBox(decodeSecretsKey(svc.config.SECRETS_KEY!, 'SECRETS_KEY'));

describe('SIP trunks API', () => {
  it('creates (201, Location), gets, lists, patches and deletes; never shows the password', async () => {
    const { api, orgId } = await newOrg();
    const secret = password('crud');
    const created = await api.post(T, { label: 'Main PBX', sip_host: 'sip:pbx.example.com:5060', sip_username: 'acme', password: secret });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`${T}/${created.body.id}`);
    expect(Object.keys(created.body).sort()).toEqual(['created_at', 'id', 'label', 'sip_host', 'sip_username', 'updated_at']);
    expect(created.body).toMatchObject({ label: 'Main PBX', sip_host: 'pbx.example.com:5060', sip_username: 'acme' });
    expect(created.body.created_at).toMatch(ISO_MS);
    expect(created.text).not.toContain(secret);
    const id: string = created.body.id;

    const one = await api.get(`${T}/${id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(created.body);

    const second = await createTrunk(api, { label: 'Backup' });
    const list = await api.get(T);
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ total: 2, limit: 50, offset: 0 });
    expect(list.body.data.map((t: { id: string }) => t.id)).toEqual([second.id, id]);
    const page = await api.get(`${T}?limit=1&offset=1`);
    expect(page.body).toMatchObject({ total: 2, limit: 1, offset: 1, data: [{ id }] });
    expect((await api.get(`${T}?limit=0`)).status).toBe(400);
    expect((await api.get(`${T}?limit=101`)).status).toBe(400);

    const patched = await api.patch(`${T}/${id}`, { label: 'Renamed', sip_host: 'SIPS:acme@PBX2.example.com:5061;transport=tls', sip_username: 'acme2' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id, label: 'Renamed', sip_host: 'pbx2.example.com:5061', sip_username: 'acme2', created_at: created.body.created_at });
    expect(Date.parse(patched.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.body.updated_at));
    const unchanged = await api.patch(`${T}/${id}`, {});
    expect(unchanged.status).toBe(200);
    expect(unchanged.body).toEqual(patched.body);
    // The password was never touched by those patches.
    expect(await loadSipTrunkPassword(svc.sql, box(), orgId, id)).toBe(secret);

    expect((await api.delete(`${T}/${id}`)).status).toBe(204);
    expect((await api.get(`${T}/${id}`)).status).toBe(404);
    expect((await api.patch(`${T}/${id}`, { label: 'x' })).status).toBe(404);
    expect((await api.delete(`${T}/${id}`)).status).toBe(404);
    expect((await api.get(`${T}/not-a-uuid`)).status).toBe(404);
    expect((await api.get(T)).body.total).toBe(1);
  });

  it('stores the password encrypted, and PATCH password rotates it', async () => {
    const { api, orgId } = await newOrg();
    const first = password('first');
    const trunk = await createTrunk(api, { password: first });
    const sealed = await sealedPassword(trunk.id);
    expect(sealed).toMatch(/^v1:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain(first);
    expect(sealed).not.toContain(Buffer.from(first).toString('base64').slice(0, 12));
    // The whole row, as text, holds no plaintext either.
    const [row] = await svc.sql`select row_to_json(t)::text as json from sip_trunks t where id = ${trunk.id}`;
    expect(row!.json).not.toContain(first);
    expect(await loadSipTrunkPassword(svc.sql, box(), orgId, trunk.id)).toBe(first);

    const second = password('second');
    const rotated = await api.patch(`${T}/${trunk.id}`, { password: second });
    expect(rotated.status).toBe(200);
    expect(Object.keys(rotated.body)).not.toContain('password');
    expect(rotated.text).not.toContain(second);
    const resealed = await sealedPassword(trunk.id);
    expect(resealed).not.toBe(sealed);
    expect(resealed).not.toContain(second);
    expect(await loadSipTrunkPassword(svc.sql, box(), orgId, trunk.id)).toBe(second);

    // Same password again: a fresh IV, so another ciphertext.
    await api.patch(`${T}/${trunk.id}`, { password: second });
    expect(await sealedPassword(trunk.id)).not.toBe(resealed);
    // A sealed value is bound to its trunk: copied onto another, it does not open.
    const other = await createTrunk(api);
    await svc.sql`update sip_trunks set password_sealed = ${resealed} where id = ${other.id}`;
    await expect(loadSipTrunkPassword(svc.sql, box(), orgId, other.id)).rejects.toThrow(/does not authenticate/);
    // And another service key cannot open it.
    const foreign = createSecretBox(decodeSecretsKey(Buffer.alloc(32, 9).toString('base64'), 'test'));
    await expect(loadSipTrunkPassword(svc.sql, foreign, orgId, trunk.id)).rejects.toThrow();
  });

  it('replays an idempotent create without the password, and stores none', async () => {
    const { api, orgId } = await newOrg();
    const secret = password('idem');
    const body = { label: 'Idem', sip_host: 'pbx.example.com', sip_username: 'u', password: secret };
    const first = await api.post(T, body, { 'Idempotency-Key': 'trunk-1' });
    const again = await api.post(T, body, { 'Idempotency-Key': 'trunk-1' });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    const stored = await svc.sql`select response_body from idempotency_keys where org_id = ${orgId} and key = 'trunk-1'`;
    expect(stored[0]!.response_body).not.toContain(secret);
  });

  it('normalizes sip_host to a bare lower-case hostname[:port]', async () => {
    const { api } = await newOrg();
    for (const [input, expected] of [
      ['PBX.Example.COM', 'pbx.example.com'],
      ['sip:pbx.example.com', 'pbx.example.com'],
      ['sips:trunk@PBX.example.com:5061;transport=tls?x=y', 'pbx.example.com:5061'],
      ['https://admin:pw@pbx.example.com:8443/admin/login', 'pbx.example.com:8443'],
      ['http://pbx.example.com/', 'pbx.example.com'],
      ['203.0.113.7:5060', '203.0.113.7:5060'],
      ['sip:[2001:DB8:0:0::1]:5060', '[2001:db8::1]:5060'],
      ['  pbx.example.com.  ', 'pbx.example.com'],
    ] as const) {
      const trunk = await createTrunk(api, { sip_host: input });
      expect(trunk.sip_host, input).toBe(expected);
    }
  });

  it('refuses invalid hosts with invalid_sip_host on sip_host', async () => {
    const { api } = await newOrg();
    const trunk = await createTrunk(api);
    for (const sip_host of [
      '', ' ', 'sip:', 'pbx example.com', 'pbx..example.com', '-pbx.example.com', 'pbx_1.example.com', 'pbx.example.com:0',
      'pbx.example.com:65536', 'pbx.example.com:', 'pbx.example.com:sip', '999.1.1.1', '2001:db8::1', '[2001:db8::1', 'ftp://pbx.example.com',
    ]) {
      const secret = password('bad-host');
      const res = await api.post(T, { label: 'x', sip_host, sip_username: 'u', password: secret });
      expect(res.status, sip_host).toBe(400);
      expect(res.body.code).toBe('validation_error');
      expect(res.body.errors, sip_host).toEqual([{ field: 'sip_host', code: sip_host === '' ? 'too_short' : 'invalid_sip_host', message: expect.any(String) }]);
      expect(res.text).not.toContain(secret);
      if (sip_host !== '') {
        const patch = await api.patch(`${T}/${trunk.id}`, { sip_host });
        expect(patch.status, sip_host).toBe(400);
        expect(patch.body.errors[0]).toMatchObject({ field: 'sip_host', code: 'invalid_sip_host' });
      }
    }
    expect((await api.get(`${T}/${trunk.id}`)).body.sip_host).toBe('pbx.example.com');
    expect((await api.patch(`${T}/${trunk.id}`, { sip_host: 'x'.repeat(301) })).body.errors[0]).toMatchObject({ field: 'sip_host', code: 'too_long' });
  });

  it('validates the other fields', async () => {
    const { api } = await newOrg();
    const trunk = await createTrunk(api);
    const valid = { label: 'L', sip_host: 'pbx.example.com', sip_username: 'u', password: password('valid') };
    const bad = async (res: ApiResponse, field: string, code: string) => {
      expect(res.status, res.text).toBe(400);
      expect(res.body.code).toBe('validation_error');
      expect(res.body.errors).toContainEqual(expect.objectContaining({ field, code }));
    };
    for (const field of ['label', 'sip_host', 'sip_username', 'password']) {
      const { [field]: _omit, ...rest } = valid as Record<string, unknown>;
      await bad(await api.post(T, rest), field, 'required');
    }
    await bad(await api.post(T, { ...valid, password: '' }), 'password', 'too_short');
    await bad(await api.post(T, { ...valid, password: 'x'.repeat(257) }), 'password', 'too_long');
    await bad(await api.post(T, { ...valid, password: 12345678 }), 'password', 'invalid_type');
    await bad(await api.post(T, { ...valid, label: '' }), 'label', 'too_short');
    await bad(await api.post(T, { ...valid, label: 'x'.repeat(201) }), 'label', 'too_long');
    await bad(await api.post(T, { ...valid, sip_username: 'has space' }), 'sip_username', 'invalid_sip_username');
    await bad(await api.post(T, { ...valid, id: trunk.id }), 'id', 'unknown_field');
    await bad(await api.patch(`${T}/${trunk.id}`, { password: '' }), 'password', 'too_short');
    await bad(await api.patch(`${T}/${trunk.id}`, { password: null }), 'password', 'invalid_type');
    await bad(await api.patch(`${T}/${trunk.id}`, { password_sealed: 'v1:x' }), 'password_sealed', 'unknown_field');
    expect((await api.post(T, { ...valid, password: 'x'.repeat(256) })).status).toBe(201);
    // 400 before 404: a bad body on a missing trunk is still a bad body.
    await bad(await api.patch(`${T}/0190a5c4-0000-7000-8000-000000000000`, { label: '' }), 'label', 'too_short');
  });

  it('checks permissions: org.read to read, org.write to change', async () => {
    const { api, token } = await newOrg();
    const trunk = await createTrunk(api);
    const keyWith = async (permissions: string[]) => recording((await issueKey(svc, token, permissions)).api);
    const reader = await keyWith(['org.read']);
    const agentsOnly = await keyWith(['agents.read', 'agents.write']);
    expect((await reader.get(T)).status).toBe(200);
    expect((await reader.get(`${T}/${trunk.id}`)).status).toBe(200);
    for (const res of [
      await reader.post(T, { label: 'x', sip_host: 'pbx.example.com', sip_username: 'u', password: password('reader') }),
      await reader.patch(`${T}/${trunk.id}`, { password: password('reader') }),
      await reader.delete(`${T}/${trunk.id}`),
      // 403 before 400 and 404.
      await reader.post(T, { label: 1 }),
      await reader.patch(`${T}/0190a5c4-0000-7000-8000-000000000000`, { label: '' }),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'missing_permission', required_permission: 'org.write' });
    }
    for (const res of [await agentsOnly.get(T), await agentsOnly.get(`${T}/${trunk.id}`)]) {
      expect(res.status).toBe(403);
      expect(res.body.required_permission).toBe('org.read');
    }
    expect((await agentsOnly.post(T, { label: 'x' })).body.required_permission).toBe('org.write');
    expect((await client(svc.url).get(T)).status).toBe(401);
    expect((await api.get(`${T}/${trunk.id}`)).body.label).toBe('Main PBX');
  });

  it('hides one organization\'s trunks from another (404, as missing)', async () => {
    const a = await newOrg();
    const b = await newOrg();
    const trunk = await createTrunk(a.api);
    for (const res of [
      await b.api.get(`${T}/${trunk.id}`), await b.api.patch(`${T}/${trunk.id}`, { label: 'mine' }),
      await b.api.patch(`${T}/${trunk.id}`, { password: password('steal') }), await b.api.delete(`${T}/${trunk.id}`),
    ]) expect(res.status).toBe(404);
    expect((await b.api.get(T)).body.total).toBe(0);
    expect((await a.api.get(`${T}/${trunk.id}`)).body).toEqual(trunk);
  });

  it('answers 409 sip_trunk_in_use while transfer rules reference the trunk', async () => {
    const { api, orgId } = await newOrg();
    const trunk = await createTrunk(api);
    const { body: agent } = await api.post('/api/v1/rest/agents', { name: 'Switchboard' });
    const { body: other } = await api.post('/api/v1/rest/agents', { name: 'Other' });
    const R = (agentId: string) => `/api/v1/rest/agents/${agentId}/transfer-rules`;
    const rule = { name: 'PBX', condition: 'caller asks for sales', transfer_type: 'sip_refer', sip_trunk_id: trunk.id, destination_phone: '+14155550100' };
    const r1 = (await api.post(R(agent.id), rule)).body;
    const r2 = (await api.post(R(other.id), { ...rule, destination_phone: null, destination_sip_uri: 'sip:sales@pbx.example.com' })).body;
    expect(r2.sip_trunk_id).toBe(trunk.id);

    const inUse = await api.delete(`${T}/${trunk.id}`);
    expect(inUse.status).toBe(409);
    expect(inUse.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(inUse.body).toMatchObject({ code: 'sip_trunk_in_use', status: 409, transfer_rule_count: 2 });
    expect(inUse.body.detail).toMatch(/2 transfer rules use this SIP trunk: reassign them to another trunk or delete them first/);

    // Reassigning one rule to another trunk, deleting the other's agent: no live rule is left.
    const spare = await createTrunk(api, { label: 'Spare' });
    expect((await api.patch(`${R(agent.id)}/${r1.id}`, { sip_trunk_id: spare.id })).status).toBe(200);
    const once = await api.delete(`${T}/${trunk.id}`);
    expect(once.body).toMatchObject({ code: 'sip_trunk_in_use', transfer_rule_count: 1 });
    expect(once.body.detail).toMatch(/^1 transfer rule uses this SIP trunk/);
    expect((await api.delete(`/api/v1/rest/agents/${other.id}`)).status).toBe(204);
    // The deleted agent's rule (waiting for its purge) does not keep the trunk; it goes with it.
    expect((await api.delete(`${T}/${trunk.id}`)).status).toBe(204);
    expect(await svc.sql`select 1 from transfer_rules where id = ${r2.id}`).toHaveLength(0);
    expect(await findSipTrunk(svc.sql, orgId, trunk.id)).toBeNull();

    // The spare one is in use by r1 until that rule is deleted.
    expect((await api.delete(`${T}/${spare.id}`)).status).toBe(409);
    expect((await api.delete(`${R(agent.id)}/${r1.id}`)).status).toBe(204);
    expect((await api.delete(`${T}/${spare.id}`)).status).toBe(204);
  });

  it('finds a trunk by host and user name for import (findSipTrunkByHost)', async () => {
    const a = await newOrg();
    const b = await newOrg();
    const trunk = await createTrunk(a.api, { sip_host: 'pbx.example.com:5060', sip_username: 'acme' });
    expect(await findSipTrunkByHost(svc.sql, a.orgId, 'sip:acme@PBX.example.com:5060;transport=udp', 'acme')).toEqual(trunk);
    expect(await findSipTrunkByHost(svc.sql, a.orgId, 'pbx.example.com:5060', 'acme')).toEqual(trunk);
    expect(await findSipTrunkByHost(svc.sql, a.orgId, 'pbx.example.com', 'acme')).toBeNull();
    expect(await findSipTrunkByHost(svc.sql, a.orgId, 'pbx.example.com:5060', 'other')).toBeNull();
    expect(await findSipTrunkByHost(svc.sql, a.orgId, 'not a host', 'acme')).toBeNull();
    expect(await findSipTrunkByHost(svc.sql, b.orgId, 'pbx.example.com:5060', 'acme')).toBeNull();
    expect(await findSipTrunk(svc.sql, b.orgId, trunk.id)).toBeNull();
  });

  it('documents the family in OpenAPI, with the password write-only and never in a response', async () => {
    const doc = (await client(svc.url).get('/api/v1/openapi.json')).body;
    expect(Object.keys(doc.paths[T])).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths[`${T}/{id}`])).toEqual(['get', 'patch', 'delete']);
    expect(doc.paths[T].post['x-permissions']).toEqual(['org.write']);
    expect(doc.paths[T].get['x-permissions']).toEqual(['org.read']);
    const { SipTrunk, SipTrunkCreate, SipTrunkPatch } = doc.components.schemas;
    expect(Object.keys(SipTrunk.properties)).toEqual(['id', 'label', 'sip_host', 'sip_username', 'created_at', 'updated_at']);
    expect(SipTrunk.required).toEqual(['id', 'label', 'sip_host', 'sip_username', 'created_at', 'updated_at']);
    expect(SipTrunkCreate.required).toEqual(['label', 'sip_host', 'sip_username', 'password']);
    expect(SipTrunkCreate.properties.password).toMatchObject({ type: 'string', writeOnly: true, minLength: 1, maxLength: 256 });
    expect(SipTrunkPatch.properties.password).toMatchObject({ writeOnly: true });
    expect(SipTrunkCreate.additionalProperties).toBe(false);
    expect(doc.paths[T].get.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/SipTrunkList' });
  });

  // Last: searches what every test above answered and logged.
  it('never answers or logs a password', () => {
    expect(responses.length).toBeGreaterThan(50);
    expect(passwords.size).toBeGreaterThan(10);
    const answered = responses.map((r) => r.text).join('\n');
    // No body carries a `password` member (problem documents may name the field in errors[]).
    expect(answered).not.toMatch(/"password"\s*:/);
    expect(answered).toMatch(/"field":"password"/);
    const logged = logLines.join('\n');
    expect(logged).toContain('/api/v1/rest/sip-trunks');
    for (const secret of passwords) {
      expect(answered).not.toContain(secret);
      expect(logged).not.toContain(secret);
    }
  });
});
