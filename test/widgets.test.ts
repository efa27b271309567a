import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, eventually, startTestService, type TestService } from './helpers.ts';
import { newOrg } from './support/orgs.ts';

let svc: TestService;
beforeAll(async () => { svc = await startTestService({ PURGE_BATCH_SIZE: 50 }); });
afterAll(async () => { await svc?.stop(); });

const REST = '/api/v1/rest';
const W = '/api/v1/widgets';

const events = async (orgId: string) =>
  svc.sql<{ type: string; data: any }[]>`select type, data from events where org_id = ${orgId} order by created_at, id`;

describe('widgets', () => {
  it('creates a widget in draft with a wgt_ id; it is the same entity as an agent', async () => {
    const { api } = await newOrg(svc);
    const res = await api.post(W, { name: 'Help', site_url: 'https://example.com/' });
    expect(res.status, res.text).toBe(201);
    const widget = res.body;
    expect(widget.id).toMatch(/^wgt_[A-Za-z0-9_-]{20,}$/);
    expect(res.headers.get('location')).toBe(`${W}/${widget.id}`);
    expect(widget).toEqual({
      id: widget.id, agent_id: expect.any(String), name: 'Help', status: 'draft', display_mode: 'floating', position: 'bottom_right',
      voice: null, persona: null, theme: { mode: 'auto', primary: '#2563EB', radius: 12 }, intro_title: null, intro_subtitle: null,
      suggested_prompts: [], button_label: null, show_label: true, domains: [], site_url: 'https://example.com/',
      created_at: expect.stringMatching(/Z$/), updated_at: expect.stringMatching(/Z$/),
    });
    const agent = (await api.get(`${REST}/agents/${widget.agent_id}`)).body;
    expect(agent).toMatchObject({ id: widget.agent_id, public_key: widget.id, status: 'draft', site_url: 'https://example.com/' });
    expect((await api.get(`${W}/${widget.id}`)).body).toEqual(widget);

    // Every agent is a widget too.
    const made = (await api.post(`${REST}/agents`, { name: 'Agent side' })).body;
    expect((await api.get(`${W}/${made.public_key}`)).body).toMatchObject({ agent_id: made.id, name: 'Agent side', status: 'active' });
  });

  it('requires name and site_url and validates them', async () => {
    const { api } = await newOrg(svc);
    const missing = await api.post(W, { name: 'x' });
    expect(missing.status).toBe(400);
    expect(missing.body.errors).toContainEqual(expect.objectContaining({ field: 'site_url', code: 'required' }));
    const bad = await api.post(W, { name: 'x', site_url: 'ftp://example.com' });
    expect(bad.body.errors).toContainEqual(expect.objectContaining({ field: 'site_url', code: 'invalid_url' }));
    expect((await api.post(W, { name: '', site_url: 'https://example.com' })).status).toBe(400);
    expect((await api.get(W)).body.data).toEqual([]);
  });

  it('a change through one view shows through the other', async () => {
    const { api } = await newOrg(svc);
    const widget = (await api.post(W, { name: 'Help', site_url: 'https://example.com/' })).body;
    const patched = await api.patch(`${W}/${widget.id}`, {
      name: 'Helper', theme: { primary: '#000000' }, position: 'bottom_left', suggested_prompts: ['Hours?'], domains: ['WWW.Example.com'],
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ name: 'Helper', theme: { mode: 'auto', primary: '#000000', radius: 12 }, position: 'bottom_left', domains: ['www.example.com'] });
    const agent = (await api.get(`${REST}/agents/${widget.agent_id}`)).body;
    expect(agent).toMatchObject({ name: 'Helper', theme: { primary: '#000000' }, position: 'bottom_left', suggested_prompts: ['Hours?'], domains: ['www.example.com'] });

    await api.patch(`${REST}/agents/${widget.agent_id}`, { intro_title: 'Welcome', show_label: false });
    expect((await api.get(`${W}/${widget.id}`)).body).toMatchObject({ intro_title: 'Welcome', show_label: false });
    // Agent-only fields are not widget fields.
    const refused = await api.patch(`${W}/${widget.id}`, { greeting: 'Hi' });
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toContainEqual(expect.objectContaining({ field: 'greeting', code: 'unknown_field' }));
  });

  it('pause and resume move the status and emit widget.paused / widget.activated with both views', async () => {
    const { api, orgId } = await newOrg(svc);
    const agent = (await api.post(`${REST}/agents`, { name: 'Desk' })).body;
    const id = agent.public_key;
    const paused = await api.post(`${W}/${id}/pause`);
    expect(paused.status, paused.text).toBe(200);
    expect(paused.body.status).toBe('paused');
    expect((await api.post(`${W}/${id}/pause`)).body.status).toBe('paused'); // no change, no event
    const resumed = await api.post(`${W}/${id}/resume`);
    expect(resumed.status).toBe(200);
    expect(resumed.body.status).toBe('active');
    const got = await events(orgId);
    expect(got.map((e) => e.type)).toEqual(['widget.paused', 'widget.activated']);
    expect(got[0]!.data.widget).toEqual(paused.body);
    expect(got[0]!.data.agent).toMatchObject({ id: agent.id, public_key: id, status: 'paused' });
    expect(got[1]!.data.widget).toEqual(resumed.body);

    // The agents flow emits the same events.
    await api.patch(`${REST}/agents/${agent.id}`, { status: 'paused' });
    expect((await events(orgId)).map((e) => e.type)).toEqual(['widget.paused', 'widget.activated', 'widget.paused']);
    // Resume answers active, whatever the status was (a draft widget too).
    const draft = (await api.post(W, { name: 'D', site_url: 'https://example.com' })).body;
    expect((await api.post(`${W}/${draft.id}/resume`)).body.status).toBe('active');
  });

  it('lists by cursor, newest first, every widget once', async () => {
    const { api } = await newOrg(svc);
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await api.post(`${REST}/agents`, { name: `A${i}` })).body.public_key);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: { status: number; body: any; text: string } = await api.get(`${W}?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status, res.text).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['data', 'next_cursor']);
      seen.push(...res.body.data.map((w: any) => w.id));
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].reverse());
    const all = await api.get(`${W}?limit=7`);
    expect(all.body.next_cursor).toBeNull();

    for (const q of ['limit=0', 'limit=101', 'limit=abc', 'cursor=', 'cursor=nonsense', `cursor=${Buffer.from('["x","y"]').toString('base64url')}`, 'offset=3']) {
      const res = await api.get(`${W}?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body.code, q).toBe('validation_error');
    }
  });

  it('DELETE hides the widget at once from both views and purges it', async () => {
    const { api } = await newOrg(svc);
    const widget = (await api.post(W, { name: 'Gone', site_url: 'https://example.com' })).body;
    expect((await api.delete(`${W}/${widget.id}`)).status).toBe(204);
    expect((await api.get(`${W}/${widget.id}`)).status).toBe(404);
    expect((await api.get(`${REST}/agents/${widget.agent_id}`)).status).toBe(404);
    expect((await api.delete(`${W}/${widget.id}`)).status).toBe(404);
    await eventually(async () => (await svc.sql`select 1 from agents where id = ${widget.agent_id}`).length === 0);
  });

  it('permissions, malformed ids and other organizations', async () => {
    const { api } = await newOrg(svc);
    const widget = (await api.post(W, { name: 'Mine', site_url: 'https://example.com' })).body;
    const reader = client(svc.url, (await api.post(`${REST}/api-keys`, { name: 'r', permissions: ['agents.read'] })).body.token);
    expect((await reader.get(`${W}/${widget.id}`)).status).toBe(200);
    for (const res of [await reader.post(W, { name: 'x', site_url: 'https://e.com' }), await reader.patch(`${W}/${widget.id}`, {}),
      await reader.post(`${W}/${widget.id}/pause`), await reader.post(`${W}/${widget.id}/resume`), await reader.delete(`${W}/${widget.id}`)]) {
      expect(res.status).toBe(403);
      expect(res.body.required_permission).toBe('agents.write');
    }
    const nobody = client(svc.url, (await api.post(`${REST}/api-keys`, { name: 'n', permissions: [] })).body.token);
    expect((await nobody.get(W)).body.required_permission).toBe('agents.read');

    const stranger = (await newOrg(svc)).api;
    for (const res of [await stranger.get(`${W}/${widget.id}`), await stranger.patch(`${W}/${widget.id}`, { name: 'x' }),
      await stranger.post(`${W}/${widget.id}/pause`), await stranger.delete(`${W}/${widget.id}`)]) {
      expect(res.status).toBe(404);
    }
    expect((await stranger.get(W)).body.data).toEqual([]);
    for (const id of ['wgt_short', widget.agent_id, 'wgt_' + 'a'.repeat(80), 'nope']) expect((await api.get(`${W}/${id}`)).status, id).toBe(404);
    expect((await api.get(`${W}/${widget.id}`)).body.name).toBe('Mine');
  });
});
