import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, startTestService, type TestService } from './helpers.ts';
import { orgWithAgent } from './support/orgs.ts';

let svc: TestService;
beforeAll(async () => { svc = await startTestService({}, { worker: false }); });
afterAll(async () => { await svc?.stop(); });

const REST = '/api/v1/rest';

const eventTypes = async (orgId: string) =>
  (await svc.sql<{ type: string }[]>`select type from events where org_id = ${orgId} order by created_at, id`).map((r) => r.type);

async function agentWithPath() {
  const org = await orgWithAgent(svc);
  return { ...org, path: `${REST}/agents/${org.agent.id}` };
}

describe('agent drafts', () => {
  it('PUT stages without touching the live configuration; GET reads; POST publishes; the draft is gone', async () => {
    const { api, agent, path } = await agentWithPath();
    expect((await api.get(`${path}/draft`)).status).toBe(404);

    const staged = await api.put(`${path}/draft`, { greeting: 'Hello!', theme: { mode: 'dark' } });
    expect(staged.status, staged.text).toBe(200);
    expect(staged.body).toEqual({ changes: { greeting: 'Hello!', theme: { mode: 'dark' } }, updated_at: expect.stringMatching(/Z$/) });
    const live = (await api.get(path)).body;
    expect(live).toMatchObject({ greeting: null, theme: { mode: 'auto' }, has_pending_draft: true });

    // Successive edits accumulate; later values win.
    await api.put(`${path}/draft`, { greeting: 'Hi there', goals: ['Book a demo'] });
    expect((await api.get(`${path}/draft`)).body.changes).toEqual({ greeting: 'Hi there', theme: { mode: 'dark' }, goals: ['Book a demo'] });

    const published = await api.post(`${path}/draft`);
    expect(published.status, published.text).toBe(200);
    expect(published.body).toMatchObject({ greeting: 'Hi there', goals: ['Book a demo'], theme: { mode: 'dark', primary: '#2563EB', radius: 12 }, has_pending_draft: false });
    expect((await api.get(path)).body).toEqual(published.body);
    expect((await api.get(`${path}/draft`)).status).toBe(404);
    expect((await api.post(`${path}/draft`)).status).toBe(404);
    expect(agent.has_pending_draft).toBe(false);
  });

  it('DELETE discards; a second DELETE is 404', async () => {
    const { api, path } = await agentWithPath();
    await api.put(`${path}/draft`, { greeting: 'Hello!' });
    expect((await api.delete(`${path}/draft`)).status).toBe(204);
    expect((await api.get(path)).body).toMatchObject({ greeting: null, has_pending_draft: false });
    const again = await api.delete(`${path}/draft`);
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('not_found');
  });

  it('has_pending_draft is true only when publishing would change something', async () => {
    const { api, path } = await agentWithPath();
    await api.patch(path, { greeting: 'Same', phone_settings: { a: 1 } });
    await api.put(`${path}/draft`, { greeting: 'Same', phone_settings: { a: 1 } });
    expect((await api.get(path)).body.has_pending_draft).toBe(false);
    await api.put(`${path}/draft`, { phone_settings: { a: 2 } });
    expect((await api.get(path)).body.has_pending_draft).toBe(true);
  });

  it('PATCH applies live and prunes the overlapping keys from the draft, per language and per key', async () => {
    const { api, path } = await agentWithPath();
    await api.put(`${path}/draft`, {
      greeting: 'Draft greeting', goals: ['Draft goal'],
      localized_copy: { en: { intro_title: 'Draft EN' }, fr: { intro_title: 'Brouillon' } },
      phone_settings: { a: 1, b: 2 },
    });
    const patched = await api.patch(path, { greeting: 'Live greeting', localized_copy: { en: { intro_title: 'Live EN' } }, phone_settings: { a: 9 } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.greeting).toBe('Live greeting');
    expect((await api.get(`${path}/draft`)).body.changes).toEqual({
      goals: ['Draft goal'], localized_copy: { fr: { intro_title: 'Brouillon' } }, phone_settings: { b: 2 },
    });
    // Pruning everything removes the draft.
    await api.patch(path, { goals: ['Live goal'], localized_copy: { fr: null }, phone_settings: { b: 3 } });
    expect((await api.get(`${path}/draft`)).status).toBe(404);
    expect((await api.get(path)).body.has_pending_draft).toBe(false);
  });

  it('PUT draft validates like PATCH and changes nothing when invalid', async () => {
    const { api, path } = await agentWithPath();
    await api.put(`${path}/draft`, { greeting: 'Kept' });
    const bad = await api.put(`${path}/draft`, { greeting: 'Lost', domains: ['not a host'] });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toContainEqual(expect.objectContaining({ field: 'domains[0]', code: 'invalid_domain' }));
    expect((await api.get(`${path}/draft`)).body.changes).toEqual({ greeting: 'Kept' });
    expect((await api.put(`${path}/draft`, { nope: 1 })).status).toBe(400);
  });

  it('publishing a status change emits its event; a deleted voice profile leaves the draft', async () => {
    const { api, path, orgId } = await agentWithPath();
    const profile = (await api.post(`${REST}/voice-profiles`, { name: 'Calm', base_voice: 'sage' })).body;
    await api.put(`${path}/draft`, { status: 'paused', voice_profile_id: profile.id });
    expect(await eventTypes(orgId)).toEqual([]);
    expect((await api.delete(`${REST}/voice-profiles/${profile.id}`)).status).toBe(204);
    expect((await api.get(`${path}/draft`)).body.changes).toEqual({ status: 'paused' });
    const published = await api.post(`${path}/draft`);
    expect(published.body).toMatchObject({ status: 'paused', voice_profile_id: null });
    expect(await eventTypes(orgId)).toEqual(['widget.paused']);
  });

  it('permissions, unknown agents and other organizations', async () => {
    const { api, path, agent } = await agentWithPath();
    const reader = (await api.post(`${REST}/api-keys`, { name: 'reader', permissions: ['agents.read'] })).body.token as string;
    const ro = client(svc.url, reader);
    const denied = await ro.put(`${path}/draft`, { greeting: 'x' });
    expect(denied.status).toBe(403);
    expect(denied.body.required_permission).toBe('agents.write');
    expect((await ro.post(`${path}/draft`)).status).toBe(403);
    expect((await ro.delete(`${path}/draft`)).status).toBe(403);
    await api.put(`${path}/draft`, { greeting: 'x' });
    expect((await ro.get(`${path}/draft`)).status).toBe(200);

    const stranger = (await agentWithPath()).api;
    for (const res of [await stranger.get(`${path}/draft`), await stranger.put(`${path}/draft`, {}), await stranger.post(`${path}/draft`), await stranger.delete(`${path}/draft`)]) {
      expect(res.status).toBe(404);
    }
    const missing = `${REST}/agents/0190a0b0-0000-7000-8000-000000000000/draft`;
    expect((await api.put(missing, {})).status).toBe(404);
    expect((await api.get(`${REST}/agents/${agent.id}`)).body.greeting).toBe(null);
  });

  it('a publish racing with PATCHes loses nothing: each PATCH either lands after the publish or is pruned from it', async () => {
    const { api, path } = await agentWithPath();
    for (let round = 0; round < 10; round++) {
      await api.put(`${path}/draft`, { greeting: `draft ${round}`, intro_title: `draft title ${round}` });
      const [patch, publish] = await Promise.all([
        api.patch(path, { greeting: `live ${round}` }),
        api.post(`${path}/draft`),
      ]);
      expect(patch.status, patch.text).toBe(200);
      // Whichever takes the row lock first, the draft still holds intro_title, so the publish succeeds...
      expect(publish.status, publish.text).toBe(200);
      const after = (await api.get(path)).body;
      // ...and the PATCH is the last write to greeting: after the publish, or before it, pruning it from the draft.
      expect(after.greeting).toBe(`live ${round}`);
      expect(after.intro_title).toBe(`draft title ${round}`);
      expect(after.has_pending_draft).toBe(false);
    }
  });
});
