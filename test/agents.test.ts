import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, eventually, startTestService, type TestService } from './helpers.ts';
import { newId } from '../src/ids.ts';
import { SEARCH_ATTRIBUTES } from '../src/temporal/index.ts';

let svc: TestService;
beforeAll(async () => { svc = await startTestService(); });
afterAll(async () => { await svc?.stop(); });

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('agents', () => {
  it('creates an agent without site_url as active, with a wgt_ key and Location', async () => {
    const { token } = await svc.newOrg();
    const api = client(svc.url, token);
    const res = await api.post('/api/v1/rest/agents', { name: 'Front desk' });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/api/v1/rest/agents/${res.body.id}`);
    expect(res.body).toMatchObject({ name: 'Front desk', status: 'active', voice: null, persona: null, site_url: null, has_pending_draft: false });
    expect(res.body.public_key).toMatch(/^wgt_[A-Za-z0-9_-]{20,}$/);
    expect(res.body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(res.body.created_at).toMatch(ISO_MS);
  });

  it('creates an agent with site_url in draft and stores the URL', async () => {
    const { token } = await svc.newOrg();
    const res = await client(svc.url, token).post('/api/v1/rest/agents', { name: 'Docs bot', site_url: 'https://example.com/docs' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'draft', site_url: 'https://example.com/docs' });
  });

  it('refuses a site_url that is not an http(s) URL', async () => {
    const { token } = await svc.newOrg();
    for (const site_url of ['ftp://example.com', 'not a url', 'javascript:alert(1)', '']) {
      const res = await client(svc.url, token).post('/api/v1/rest/agents', { name: 'x', site_url });
      expect(res.status, site_url).toBe(400);
      expect(res.body.errors[0].field).toBe('site_url');
    }
  });

  it('lists newest first with the envelope, a status filter and limit/offset', async () => {
    const { token } = await svc.newOrg();
    const api = client(svc.url, token);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await api.post('/api/v1/rest/agents', { name: `a${i}` })).body.id);
    await api.patch(`/api/v1/rest/agents/${ids[1]}`, { status: 'paused' });

    const all = await api.get('/api/v1/rest/agents');
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ total: 5, limit: 50, offset: 0 });
    expect(all.body.data.map((a: { id: string }) => a.id)).toEqual([...ids].reverse());

    const page = await api.get('/api/v1/rest/agents?limit=2&offset=1');
    expect(page.body).toMatchObject({ total: 5, limit: 2, offset: 1 });
    expect(page.body.data.map((a: { id: string }) => a.id)).toEqual([ids[3], ids[2]]);

    const paused = await api.get('/api/v1/rest/agents?status=paused');
    expect(paused.body.total).toBe(1);
    expect(paused.body.data[0].id).toBe(ids[1]);

    const beyond = await api.get('/api/v1/rest/agents?offset=100');
    expect(beyond.body).toMatchObject({ data: [], total: 5 });

    for (const bad of ['limit=0', 'limit=101', 'limit=1.5', 'offset=-1', 'status=deleted', 'sort=name']) {
      const res = await api.get(`/api/v1/rest/agents?${bad}`);
      expect(res.status, bad).toBe(400);
      expect(res.body.code).toBe('validation_error');
    }
    expect((await api.get('/api/v1/rest/agents?limit=100')).status).toBe(200);
    expect((await api.get('/api/v1/rest/agents?limit=1')).status).toBe(200);
  });

  it('patches the Basics group, keeps unsent fields, and treats {} as no change', async () => {
    const { token } = await svc.newOrg();
    const api = client(svc.url, token);
    const { body: agent } = await api.post('/api/v1/rest/agents', { name: 'Sales' });
    const patched = await api.patch(`/api/v1/rest/agents/${agent.id}`, { persona: 'You sell boats.', voice: 'alloy' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'Sales', persona: 'You sell boats.', voice: 'alloy', status: 'active' });

    const renamed = await api.patch(`/api/v1/rest/agents/${agent.id}`, { name: 'Boat sales' });
    expect(renamed.body).toMatchObject({ name: 'Boat sales', persona: 'You sell boats.', voice: 'alloy' });

    const empty = await api.patch(`/api/v1/rest/agents/${agent.id}`, {});
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual(renamed.body);

    const cleared = await api.patch(`/api/v1/rest/agents/${agent.id}`, { persona: null });
    expect(cleared.body.persona).toBeNull();
    expect((await api.get(`/api/v1/rest/agents/${agent.id}`)).body).toEqual(cleared.body);
  });

  it('moves between active and paused, and refuses other status values', async () => {
    const { token } = await svc.newOrg();
    const api = client(svc.url, token);
    const { body: agent } = await api.post('/api/v1/rest/agents', { name: 'S' });
    expect((await api.patch(`/api/v1/rest/agents/${agent.id}`, { status: 'paused' })).body.status).toBe('paused');
    expect((await api.patch(`/api/v1/rest/agents/${agent.id}`, { status: 'active' })).body.status).toBe('active');
    for (const status of ['draft', 'deleted', '', null, 1]) {
      const res = await api.patch(`/api/v1/rest/agents/${agent.id}`, { status });
      expect(res.status).toBe(400);
      expect(res.body.errors[0]).toMatchObject({ field: 'status' });
    }
    expect((await api.get(`/api/v1/rest/agents/${agent.id}`)).body.status).toBe('active');
  });

  it('applies every one of concurrent PATCHes of one agent, and emits its status change once', async () => {
    // A PATCH writes the row only if it is still the version it read (issue 48): the others take the row lock and apply
    // their change to what the first wrote, so no merge is lost and no second event reports the same change.
    const { token, orgId } = await svc.newOrg();
    const api = client(svc.url, token);
    const { body: agent } = await api.post('/api/v1/rest/agents', { name: 'Busy' });
    const keys = Array.from({ length: 12 }, (_, i) => `key_${i}`);
    const answers = await Promise.all(keys.map((key, i) =>
      api.patch(`/api/v1/rest/agents/${agent.id}`, { status: 'paused', phone_settings: { [key]: i } })));
    for (const res of answers) expect(res.status, res.text).toBe(200);
    const final = (await api.get(`/api/v1/rest/agents/${agent.id}`)).body;
    expect(final.status).toBe('paused');
    expect(final.phone_settings).toEqual(Object.fromEntries(keys.map((key, i) => [key, i])));
    const events = await svc.sql<{ type: string; data: { agent: { status: string } } }[]>`select type, data from events where org_id = ${orgId}`;
    expect(events.map((e) => e.type)).toEqual(['widget.paused']);
    expect(events[0]!.data.agent.status).toBe('paused');
  });

  it('answers 404 for a missing agent and for another organization\'s agent', async () => {
    const a = await svc.newOrg();
    const b = await svc.newOrg();
    const { body: agent } = await client(svc.url, a.token).post('/api/v1/rest/agents', { name: 'Mine' });
    const other = client(svc.url, b.token);
    for (const res of [
      await other.get(`/api/v1/rest/agents/${agent.id}`),
      await other.patch(`/api/v1/rest/agents/${agent.id}`, { name: 'Stolen' }),
      await other.delete(`/api/v1/rest/agents/${agent.id}`),
      await other.get(`/api/v1/rest/agents/${newId()}`),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
    expect((await other.get('/api/v1/rest/agents')).body.total).toBe(0);
    expect((await client(svc.url, a.token).get(`/api/v1/rest/agents/${agent.id}`)).body.name).toBe('Mine');
  });

  it('deletes durably: 404 at once, then a purge workflow removes dependents and the row', async () => {
    const { token, orgId } = await svc.newOrg();
    const api = client(svc.url, token);
    const { body: agent } = await api.post('/api/v1/rest/agents', { name: 'Doomed' });
    const conv = newId();
    await svc.sql`insert into conversations (id, org_id, agent_id, surface) values (${conv}, ${orgId}, ${agent.id}, 'web')`;
    await svc.sql`insert into conversation_messages (id, conversation_id, role, text) values (${newId()}, ${conv}, 'visitor', 'hi')`;
    await svc.sql`insert into usage_records (id, org_id, agent_id, conversation_id, surface) values (${newId()}, ${orgId}, ${agent.id}, ${conv}, 'web')`;

    const del = await api.delete(`/api/v1/rest/agents/${agent.id}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await api.get(`/api/v1/rest/agents/${agent.id}`)).status).toBe(404);
    expect((await api.delete(`/api/v1/rest/agents/${agent.id}`)).status).toBe(404);
    expect((await api.get('/api/v1/rest/agents')).body.total).toBe(0);

    const handle = svc.temporal.workflow.getHandle(`agent-purge:${agent.id}`);
    const result = await handle.result();
    expect(result.deleted.conversations).toBe(1);
    const description = await handle.describe();
    expect(description.typedSearchAttributes.get(SEARCH_ATTRIBUTES.OrganizationId)).toBe(orgId);
    expect(description.typedSearchAttributes.get(SEARCH_ATTRIBUTES.AgentId)).toBe(agent.id);
    expect(await svc.sql`select 1 from agents where id = ${agent.id}`).toHaveLength(0);
    expect(await svc.sql`select 1 from conversation_messages where conversation_id = ${conv}`).toHaveLength(0);
    expect(await svc.sql`select 1 from usage_records where agent_id = ${agent.id}`).toHaveLength(1);
  });

  it('finds purge runs by organization and agent through visibility', async () => {
    const { token, orgId } = await svc.newOrg();
    const api = client(svc.url, token);
    const { body: agent } = await api.post('/api/v1/rest/agents', { name: 'Findable' });
    await api.delete(`/api/v1/rest/agents/${agent.id}`);
    await svc.temporal.workflow.getHandle(`agent-purge:${agent.id}`).result();
    const found = await eventually(async () => {
      const ids: string[] = [];
      for await (const wf of svc.temporal.workflow.list({ query: `OrganizationId = "${orgId}" AND AgentId = "${agent.id}"` })) ids.push(wf.workflowId);
      return ids.length ? ids : null;
    });
    expect(found).toEqual([`agent-purge:${agent.id}`]);
  });
});
