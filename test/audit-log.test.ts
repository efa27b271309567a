import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './helpers.ts';
import { keyWith, newOrg } from './support/orgs.ts';
import { expectProblem } from './support/problems.ts';
import { deleteAuditEntriesBefore } from '../src/db/audit-log.ts';

let svc: TestService;
beforeAll(async () => { svc = await startTestService({}, { worker: false }); });
afterAll(async () => { await svc?.stop(); });

const LOG = '/api/v1/rest/audit-log';

async function mcpCall(token: string, name: string, args: Record<string, unknown>) {
  const res = await fetch(`${svc.url}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  expect(res.status).toBe(200);
  return res.json() as Promise<{ result: { isError?: boolean; structuredContent: any } }>;
}

describe('audit log', () => {
  it('records each write through REST with who, what, where and the outcome, and no read', async () => {
    const { api } = await newOrg(svc);
    const created = await api.post('/api/v1/rest/agents', { name: 'Audited' }, { 'x-request-id': 'audit-req-1' });
    expect(created.status).toBe(201);
    await api.get(`/api/v1/rest/agents/${created.body.id}`);
    const patched = await api.patch(`/api/v1/rest/agents/${created.body.id}`, { name: 'Audited again' });
    expect(patched.status).toBe(200);
    const bad = await api.patch(`/api/v1/rest/agents/${created.body.id}`, { name: 42 });
    expect(bad.status).toBe(400);

    const log = await api.get(LOG);
    expect(log.status, log.text).toBe(200);
    const keys = await api.get('/api/v1/rest/api-keys');
    const entries = log.body.data as any[];
    expect(entries.map((e) => [e.operation, e.outcome, e.status])).toEqual([
      ['update_agent', 'failed', 400], ['update_agent', 'succeeded', 200], ['create_agent', 'succeeded', 201],
    ]);
    expect(log.body.total).toBe(3);
    const first = entries[2];
    expect(first).toMatchObject({
      channel: 'rest', method: 'POST', path: '/api/v1/rest/agents', resource_id: created.body.id, error_code: null,
      request_id: 'audit-req-1', actor: { type: 'api_key', member_id: null },
    });
    expect(keys.body.data.map((k: { id: string }) => k.id)).toContain(first.actor.api_key_id);
    expect(first.client_address).toMatch(/127\.0\.0\.1/);
    expect(entries[0]).toMatchObject({ error_code: 'validation_error', resource_id: created.body.id });

    // Filters: by operation, outcome and resource.
    expect((await api.get(`${LOG}?outcome=failed`)).body.total).toBe(1);
    expect((await api.get(`${LOG}?operation=create_agent`)).body.data[0].id).toBe(first.id);
    expect((await api.get(`${LOG}?resource_id=${created.body.id}`)).body.total).toBe(3);
    expect((await api.get(`${LOG}?to=${encodeURIComponent(first.at)}`)).body.total).toBe(0);
  });

  it('records every one of many writes made at once, each with its own request, outcome and resource', async () => {
    const { api } = await newOrg(svc);
    const created = await api.post('/api/v1/rest/agents', { name: 'Many writes' });
    expect(created.status).toBe(201);
    const path = `/api/v1/rest/agents/${created.body.id}`;
    // Concurrent writes are appended together (one statement for those that come while one is written): none is lost.
    const answers = await Promise.all(Array.from({ length: 24 }, (_, i) =>
      api.patch(path, i % 4 === 3 ? { name: 7 } : { name: `Many writes ${i}` }, { 'x-request-id': `burst-${i}` })));
    expect(answers.map((a) => a.status)).toEqual(Array.from({ length: 24 }, (_, i) => (i % 4 === 3 ? 400 : 200)));
    const log = await api.get(`${LOG}?operation=update_agent&limit=100`);
    expect(log.status, log.text).toBe(200);
    const entries = log.body.data as any[];
    expect(entries).toHaveLength(24);
    expect(entries.map((e) => e.request_id).sort()).toEqual(Array.from({ length: 24 }, (_, i) => `burst-${i}`).sort());
    for (const e of entries) {
      const i = Number(e.request_id.slice('burst-'.length));
      expect(e).toMatchObject({ resource_id: created.body.id, method: 'PATCH', path, status: i % 4 === 3 ? 400 : 200,
        outcome: i % 4 === 3 ? 'failed' : 'succeeded', error_code: i % 4 === 3 ? 'validation_error' : null });
    }
  });

  it('names the member of a user token and a refused write, and keeps organizations apart', async () => {
    const { api } = await newOrg(svc);
    const other = await newOrg(svc);
    const member = await keyWith(svc, api, ['agents.read'], { user_email: `ops-${Date.now()}@example.com` });
    const refused = await member.api.post('/api/v1/rest/agents', { name: 'Nope' });
    expectProblem(refused, 403, 'missing_permission');
    const log = (await api.get(`${LOG}?operation=create_agent`)).body.data as any[];
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ outcome: 'failed', status: 403, error_code: 'missing_permission', actor: { type: 'member', api_key_id: member.id } });
    expect(log[0].actor.member_id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await api.get(`${LOG}?member_id=${log[0].actor.member_id}`)).body.total).toBe(1);
    expect((await other.api.get(`${LOG}?operation=create_agent`)).body.total).toBe(0);
  });

  it('records MCP tool calls as such, needs org.read, and refuses bad filters', async () => {
    const { api, token } = await newOrg(svc);
    const result = await mcpCall(token, 'create_contact', { email_lower: `mia-${Date.now()}@example.com` });
    expect(result.result.isError).toBeFalsy();
    const [entry] = (await api.get(`${LOG}?channel=mcp`)).body.data;
    expect(entry).toMatchObject({ operation: 'create_contact', channel: 'mcp', resource_id: result.result.structuredContent.id, outcome: 'succeeded' });
    expect(entry.client_address).toMatch(/127\.0\.0\.1/);

    const reader = await keyWith(svc, api, ['agents.read']);
    expectProblem(await reader.api.get(LOG), 403, 'missing_permission');
    expectProblem(await api.get(`${LOG}?channel=fax`), 400, 'validation_error');
    expectProblem(await api.get(`${LOG}?from=yesterday`), 400, 'validation_error');
  });

  it('records a write from the /inbox page as channel inbox', async () => {
    const { api } = await newOrg(svc);
    const res = await api.post('/api/v1/rest/contacts', { email_lower: `inbox-${Date.now()}@example.com` }, { referer: `${svc.url}/inbox` });
    expect(res.status).toBe(201);
    // A Referer naming another host's /inbox is an ordinary REST call.
    await api.post('/api/v1/rest/contacts', { email_lower: `elsewhere-${Date.now()}@example.com` }, { referer: 'https://evil.example/inbox' });
    const log = (await api.get(LOG)).body.data as any[];
    expect(log.map((e) => e.channel)).toEqual(['rest', 'inbox']);
    expect(log[1].resource_id).toBe(res.body.id);
  });

  it('is append-only: no update or delete but the retention sweep', async () => {
    const { api, orgId } = await newOrg(svc);
    expect((await api.post('/api/v1/rest/contacts', { email_lower: `kept-${Date.now()}@example.com` })).status).toBe(201);
    await expect(svc.sql`update audit_log set outcome = 'failed' where org_id = ${orgId}`).rejects.toThrow(/append-only/);
    await expect(svc.sql`delete from audit_log where org_id = ${orgId}`).rejects.toThrow(/append-only/);
    // The sweep deletes what came before its cutoff and keeps what came after.
    const [{ at }] = await svc.sql<[{ at: Date }]>`select max(at) as at from audit_log where org_id = ${orgId}`;
    expect((await api.post('/api/v1/rest/contacts', { email_lower: `later-${Date.now()}@example.com` })).status).toBe(201);
    expect(await deleteAuditEntriesBefore(svc.sql, new Date(at.getTime() + 1), { orgId })).toBe(1);
    const left = await api.get(LOG);
    expect(left.body.data.map((e: any) => e.operation)).toEqual(['create_contact']);
    expect(left.body.total).toBe(1);
  });
});
