import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from './helpers.ts';
import { keyWith, newOrg, type Api } from './support/orgs.ts';
import { BASE_VOICES } from '../src/schemas/voices.ts';
import { ACCENTS, ENERGY_LEVELS, FORMALITIES, PACES } from '../src/schemas/voice-profiles.ts';
import { newId } from '../src/ids.ts';

// No worker: nothing here runs a workflow.
let svc: TestService;
beforeAll(async () => { svc = await startTestService({}, { worker: false }); });
afterAll(async () => { await svc?.stop(); });

const VP = '/api/v1/rest/voice-profiles';
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function createProfile(api: Api, body: Record<string, unknown> = {}) {
  const res = await api.post(VP, { name: 'Warm', base_voice: 'alloy', ...body });
  expect(res.status, res.text).toBe(201);
  return res.body as Record<string, unknown> & { id: string };
}

/** The first field error of a 400 validation_error. */
async function invalid(res: Promise<{ status: number; body: any; text: string }>) {
  const r = await res;
  expect(r.status, r.text).toBe(400);
  expect(r.body.code).toBe('validation_error');
  return r.body.errors[0] as { field: string; code: string };
}

describe('voice profiles', () => {
  it('creates with defaults, Location, id and timestamps; reads it back', async () => {
    const { api } = await newOrg(svc);
    const res = await api.post(VP, { name: 'Front desk voice', base_voice: 'nova' });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`${VP}/${res.body.id}`);
    expect(Object.keys(res.body).sort()).toEqual(
      ['accent', 'base_voice', 'created_at', 'custom_direction', 'energy', 'formality', 'id', 'name', 'pace', 'updated_at']);
    expect(res.body).toMatchObject({
      name: 'Front desk voice', base_voice: 'nova', accent: 'neutral', energy: 'medium', pace: 'normal', formality: 'neutral', custom_direction: null,
    });
    expect(res.body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(res.body.created_at).toMatch(ISO_MS);
    expect(res.body.updated_at).toMatch(ISO_MS);
    const one = await api.get(`${VP}/${res.body.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(res.body);
  });

  it('creates with every field given', async () => {
    const { api } = await newOrg(svc);
    const body = { name: 'Concierge', base_voice: 'sage', accent: 'british', energy: 'low', pace: 'slow', formality: 'formal', custom_direction: 'Calm, unhurried.' };
    const created = await createProfile(api, body);
    expect(created).toMatchObject(body);
  });

  it('accepts every value of every value set, on create and on PATCH', async () => {
    const { api } = await newOrg(svc);
    const sets = { base_voice: BASE_VOICES, accent: ACCENTS, energy: ENERGY_LEVELS, pace: PACES, formality: FORMALITIES };
    const { id } = await createProfile(api);
    for (const [field, values] of Object.entries(sets)) {
      for (const value of values) {
        const created = await api.post(VP, { name: 'v', base_voice: 'alloy', [field]: value });
        expect(created.status, `${field}=${value}`).toBe(201);
        expect(created.body[field]).toBe(value);
        const patched = await api.patch(`${VP}/${id}`, { [field]: value });
        expect(patched.status, `${field}=${value}`).toBe(200);
        expect(patched.body[field]).toBe(value);
      }
    }
  });

  it('refuses values outside every value set with 400 naming the field', async () => {
    const { api } = await newOrg(svc);
    const { id } = await createProfile(api);
    for (const field of ['base_voice', 'accent', 'energy', 'pace', 'formality']) {
      for (const value of ['loud', '', 'ALLOY', 'Neutral', ' medium']) {
        expect(await invalid(api.post(VP, { name: 'v', base_voice: 'alloy', [field]: value })), `${field}=${value}`)
          .toMatchObject({ field, code: 'invalid_value' });
        expect(await invalid(api.patch(`${VP}/${id}`, { [field]: value })), `${field}=${value}`).toMatchObject({ field, code: 'invalid_value' });
      }
      expect(await invalid(api.post(VP, { name: 'v', base_voice: 'alloy', [field]: 3 }))).toMatchObject({ field });
      expect(await invalid(api.patch(`${VP}/${id}`, { [field]: null }))).toMatchObject({ field });
    }
    // Nothing changed.
    expect((await api.get(`${VP}/${id}`)).body).toMatchObject({ base_voice: 'alloy', accent: 'neutral', energy: 'medium', pace: 'normal', formality: 'neutral' });
  });

  it('validates name, base_voice, custom_direction and unknown fields', async () => {
    const { api } = await newOrg(svc);
    expect(await invalid(api.post(VP, { base_voice: 'alloy' }))).toMatchObject({ field: 'name', code: 'required' });
    expect(await invalid(api.post(VP, { name: 'v' }))).toMatchObject({ field: 'base_voice', code: 'required' });
    expect(await invalid(api.post(VP, { name: '', base_voice: 'alloy' }))).toMatchObject({ field: 'name', code: 'too_short' });
    expect(await invalid(api.post(VP, { name: '   ', base_voice: 'alloy' }))).toMatchObject({ field: 'name' });
    expect(await invalid(api.post(VP, { name: 'x'.repeat(201), base_voice: 'alloy' }))).toMatchObject({ field: 'name', code: 'too_long' });
    expect((await api.post(VP, { name: 'x'.repeat(200), base_voice: 'alloy' })).status).toBe(201);
    expect(await invalid(api.post(VP, { name: 'v', base_voice: 'alloy', custom_direction: 'x'.repeat(2001) })))
      .toMatchObject({ field: 'custom_direction', code: 'too_long' });
    expect((await api.post(VP, { name: 'v', base_voice: 'alloy', custom_direction: 'x'.repeat(2000) })).status).toBe(201);
    expect((await api.post(VP, { name: 'v', base_voice: 'alloy', custom_direction: null })).body.custom_direction).toBeNull();
    expect(await invalid(api.post(VP, { name: 'v', base_voice: 'alloy', id: newId() }))).toMatchObject({ field: 'id', code: 'unknown_field' });
    expect(await invalid(api.post(VP, { name: 'v', base_voice: 'alloy', voice: 'alloy' }))).toMatchObject({ field: 'voice', code: 'unknown_field' });
  });

  it('patches any subset, leaves the rest, and {} changes nothing', async () => {
    const { api } = await newOrg(svc);
    const created = await createProfile(api, { accent: 'irish', custom_direction: 'Smile.' });
    const same = await api.patch(`${VP}/${created.id}`, {});
    expect(same.status).toBe(200);
    expect(same.body).toEqual(created);

    const a = await api.patch(`${VP}/${created.id}`, { energy: 'high' });
    expect(a.body).toMatchObject({ ...created, energy: 'high', updated_at: expect.any(String) });
    expect(Date.parse(a.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.updated_at as string));
    expect(a.body.created_at).toBe(created.created_at);

    const b = await api.patch(`${VP}/${created.id}`, { name: 'Renamed', base_voice: 'onyx', pace: 'fast', formality: 'casual', custom_direction: null });
    expect(b.body).toMatchObject({ name: 'Renamed', base_voice: 'onyx', accent: 'irish', energy: 'high', pace: 'fast', formality: 'casual', custom_direction: null });
    expect((await api.get(`${VP}/${created.id}`)).body).toEqual(b.body);

    expect(await invalid(api.patch(`${VP}/${created.id}`, { name: '' }))).toMatchObject({ field: 'name' });
    expect(await invalid(api.patch(`${VP}/${created.id}`, { created_at: '2020-01-01T00:00:00.000Z' }))).toMatchObject({ field: 'created_at', code: 'unknown_field' });
  });

  it('lists newest first with the envelope, and limit/offset bounds', async () => {
    const { api } = await newOrg(svc);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await createProfile(api, { name: `p${i}` })).id);
    const all = await api.get(VP);
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ total: 4, limit: 50, offset: 0 });
    expect(all.body.data.map((p: { id: string }) => p.id)).toEqual([...ids].reverse());
    const page = await api.get(`${VP}?limit=2&offset=1`);
    expect(page.body).toMatchObject({ total: 4, limit: 2, offset: 1 });
    expect(page.body.data.map((p: { id: string }) => p.id)).toEqual([ids[2], ids[1]]);
    for (const q of ['limit=0', 'limit=101', 'offset=-1', 'limit=abc']) {
      const field = q.split('=')[0];
      expect(await invalid(api.get(`${VP}?${q}`)), q).toMatchObject({ field });
    }
    expect(await invalid(api.get(`${VP}?widget_id=${newId()}`))).toMatchObject({ field: 'widget_id', code: 'unknown_field' });
    expect((await api.get(`${VP}?limit=100`)).status).toBe(200);
  });

  it('deletes (204), then answers 404; unknown, malformed and other organizations\' ids are 404', async () => {
    const a = await newOrg(svc);
    const b = await newOrg(svc);
    const { id } = await createProfile(a.api);
    for (const res of [
      await b.api.get(`${VP}/${id}`), await b.api.patch(`${VP}/${id}`, { name: 'x' }), await b.api.patch(`${VP}/${id}`, {}), await b.api.delete(`${VP}/${id}`),
    ]) expect(res.status).toBe(404);
    expect((await b.api.get(VP)).body.total).toBe(0);
    for (const bad of [newId(), 'not-a-uuid', '123', `urn:uuid:${id}`]) {
      for (const res of [await a.api.get(`${VP}/${bad}`), await a.api.patch(`${VP}/${bad}`, { name: 'x' }), await a.api.delete(`${VP}/${bad}`)]) {
        expect(res.status, bad).toBe(404);
        expect(res.body.code).toBe('not_found');
      }
    }
    expect((await a.api.get(`${VP}/${id}`)).body.name).toBe('Warm');
    expect((await a.api.delete(`${VP}/${id}`)).status).toBe(204);
    expect((await a.api.get(`${VP}/${id}`)).status).toBe(404);
    expect((await a.api.delete(`${VP}/${id}`)).status).toBe(404);
    expect((await a.api.get(VP)).body.total).toBe(0);
  });

  it('checks permissions: agents.read to read, voice_profiles.write to change; 403 before 400', async () => {
    const { api, token } = await newOrg(svc);
    const { id } = await createProfile(api);
    const reader = (await keyWith(svc, api, ['agents.read'])).api;
    const agentWriter = (await keyWith(svc, api, ['agents.read', 'agents.write'])).api;
    const writer = (await keyWith(svc, api, ['voice_profiles.write'])).api;
    expect((await reader.get(VP)).status).toBe(200);
    expect((await reader.get(`${VP}/${id}`)).status).toBe(200);
    for (const who of [reader, agentWriter]) {
      for (const res of [
        await who.post(VP, { name: 'x', base_voice: 'alloy' }), await who.patch(`${VP}/${id}`, { name: 'x' }), await who.delete(`${VP}/${id}`),
        await who.post(VP, { name: 1 }), await who.patch(`${VP}/${newId()}`, { accent: 'martian' }),
      ]) {
        expect(res.status).toBe(403);
        expect(res.body).toMatchObject({ code: 'missing_permission', required_permission: 'voice_profiles.write' });
      }
    }
    for (const res of [await writer.get(VP), await writer.get(`${VP}/${id}`)]) {
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'missing_permission', required_permission: 'agents.read' });
    }
    const created = await writer.post(VP, { name: 'By writer', base_voice: 'echo' });
    expect(created.status).toBe(201);
    expect((await writer.patch(`${VP}/${created.body.id}`, { pace: 'fast' })).body.pace).toBe('fast');
    expect((await writer.delete(`${VP}/${created.body.id}`)).status).toBe(204);
    // 400 before 404 for a writer.
    expect(await invalid(writer.patch(`${VP}/${newId()}`, { accent: 'martian' }))).toMatchObject({ field: 'accent' });
    for (const res of [await call(svc.url, 'GET', VP), await call(svc.url, 'POST', VP, { body: { name: 'x', base_voice: 'alloy' } })]) {
      expect(res.status).toBe(401);
    }
    expect(token).toMatch(/^sk_/);
  });

  it('DELETE detaches the profile from agents using it (live and in a draft), leaving other agents alone', async () => {
    const { api, orgId } = await newOrg(svc);
    const other = await newOrg(svc);
    const doomed = await createProfile(api, { name: 'Doomed' });
    const kept = await createProfile(api, { name: 'Kept' });
    const agent = (await api.post('/api/v1/rest/agents', { name: 'Uses it' })).body;
    const draftAgent = (await api.post('/api/v1/rest/agents', { name: 'Drafts it' })).body;
    const keeper = (await api.post('/api/v1/rest/agents', { name: 'Uses the other' })).body;
    const foreign = (await other.api.post('/api/v1/rest/agents', { name: 'Other org' })).body;
    const sql = svc.sql;
    const setProfile = (agentId: string, profileId: string) =>
      sql`update agents set config = config || jsonb_build_object('voice_profile_id', ${profileId}::text) where id = ${agentId}`;
    await setProfile(agent.id, doomed.id);
    await setProfile(keeper.id, kept.id);
    // Another organization's agent naming the id (it could not through the API) is not touched.
    await setProfile(foreign.id, doomed.id);
    await sql`update agents set draft = jsonb_build_object('changes', jsonb_build_object('voice_profile_id', ${doomed.id}::text, 'name', 'Draft name')),
      draft_updated_at = now() where id = ${draftAgent.id}`;

    expect((await api.delete(`${VP}/${doomed.id}`)).status).toBe(204);

    const rows = await sql<{ id: string; org_id: string; config: Record<string, unknown>; draft: { changes: Record<string, unknown> } | null }[]>`
      select id, org_id, config, draft from agents where id in ${sql([agent.id, draftAgent.id, keeper.id, foreign.id])}`;
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(agent.id)!.config).not.toHaveProperty('voice_profile_id');
    expect(byId.get(draftAgent.id)!.draft!.changes).toEqual({ name: 'Draft name' });
    expect(byId.get(keeper.id)!.config.voice_profile_id).toBe(kept.id);
    expect(byId.get(foreign.id)!.config.voice_profile_id).toBe(doomed.id);
    expect(byId.get(agent.id)!.org_id).toBe(orgId);
    expect((await api.get(`${VP}/${kept.id}`)).status).toBe(200);
  });

  it('DELETE detaches the profile from an agent that chose it through the agent PATCH', async () => {
    const { api } = await newOrg(svc);
    const profile = await createProfile(api);
    const agent = (await api.post('/api/v1/rest/agents', { name: 'Caller' })).body;
    const chosen = await api.patch(`/api/v1/rest/agents/${agent.id}`, { voice_profile_id: profile.id });
    expect(chosen.status, chosen.text).toBe(200);
    expect(chosen.body.voice_profile_id).toBe(profile.id);
    expect((await api.delete(`${VP}/${profile.id}`)).status).toBe(204);
    const after = await api.get(`/api/v1/rest/agents/${agent.id}`);
    expect(after.body.voice_profile_id).toBeNull();
    const [row] = await svc.sql<{ config: Record<string, unknown> }[]>`select config from agents where id = ${agent.id}`;
    expect(row!.config).not.toHaveProperty('voice_profile_id');
  });

  it('is described in the OpenAPI document with every field, type and value set', async () => {
    const doc = (await call(svc.url, 'GET', '/api/v1/openapi.json')).body;
    expect(Object.keys(doc.paths[VP]).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths[`${VP}/{id}`]).sort()).toEqual(['delete', 'get', 'patch']);
    expect(doc.paths[VP].post['x-permissions']).toEqual(['voice_profiles.write']);
    expect(doc.paths[VP].get['x-permissions']).toEqual(['agents.read']);
    const { VoiceProfile, VoiceProfileCreate, VoiceProfilePatch } = doc.components.schemas;
    expect(Object.keys(VoiceProfile.properties).sort()).toEqual(
      ['accent', 'base_voice', 'created_at', 'custom_direction', 'energy', 'formality', 'id', 'name', 'pace', 'updated_at']);
    expect(VoiceProfileCreate.required).toEqual(['name', 'base_voice']);
    expect(VoiceProfileCreate.additionalProperties).toBe(false);
    expect(VoiceProfilePatch.additionalProperties).toBe(false);
    for (const schema of [VoiceProfile, VoiceProfileCreate, VoiceProfilePatch]) {
      expect(schema.properties.base_voice.enum).toEqual([...BASE_VOICES]);
      expect(schema.properties.accent.enum).toEqual([...ACCENTS]);
      expect(schema.properties.energy.enum).toEqual([...ENERGY_LEVELS]);
      expect(schema.properties.pace.enum).toEqual([...PACES]);
      expect(schema.properties.formality.enum).toEqual([...FORMALITIES]);
    }
    expect(VoiceProfileCreate.properties).toMatchObject({
      name: { type: 'string', minLength: 1, maxLength: 200 },
      custom_direction: { type: ['string', 'null'], maxLength: 2000 },
    });
    // Request-body defaults are stated in the description, not as `default`, so generated clients keep them optional (issue 42, D9).
    for (const [field, value] of [['accent', 'neutral'], ['energy', 'medium'], ['pace', 'normal'], ['formality', 'neutral']] as const) {
      expect(VoiceProfileCreate.properties[field], field).not.toHaveProperty('default');
      expect(VoiceProfileCreate.properties[field].description, field).toContain(`(default \`${value}\`)`);
    }
    expect(VoiceProfile.properties.custom_direction.type).toEqual(['string', 'null']);
    expect(doc.components.schemas.VoiceProfileList.properties.data.items).toEqual({ $ref: '#/components/schemas/VoiceProfile' });
  });
});
