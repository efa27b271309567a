import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, startTestService, type TestService } from './helpers.ts';
import { newOrg, type Api } from './support/orgs.ts';

let svc: TestService;
beforeAll(async () => { svc = await startTestService({}, { worker: false }); });
afterAll(async () => { await svc?.stop(); });

const REST = '/api/v1/rest';

const CONFIG = {
  persona: 'You sell boats.', voice: 'coral', greeting: 'Ahoy!', goals: ['Book a test sail'], timezone: 'Europe/Paris',
  data_schema: [{ name: 'boat_size', type: 'number' }], theme: { mode: 'dark' }, domains: ['boats.example.com'],
  localized_copy: { fr: { intro_title: 'Bonjour' } }, phone_settings: { record_calls: true }, config_variables: { company: 'Boats Inc' },
  notification_phone: '+14155550123',
};

/** An agent with every kind of dependency: a voice profile, a SIP trunk and three transfer rules. */
async function richAgent(api: Api) {
  const agent = (await api.post(`${REST}/agents`, { name: 'Sales', site_url: 'https://boats.example.com/' })).body;
  const profile = (await api.post(`${REST}/voice-profiles`, { name: 'Sailor', base_voice: 'ash', accent: 'british', pace: 'slow' })).body;
  const trunk = await api.post(`${REST}/sip-trunks`, { label: 'PBX', sip_host: 'sip:pbx.boats.example.com:5061', sip_username: 'agent', password: 'hunter2-secret' });
  expect(trunk.status, trunk.text).toBe(201);
  const patched = await api.patch(`${REST}/agents/${agent.id}`, { ...CONFIG, voice_profile_id: profile.id });
  expect(patched.status, patched.text).toBe(200);
  const rules = [
    { name: 'Billing', condition: 'Asks about invoices', destination_phone: '+14155550100', priority: 5 },
    { name: 'Manager', condition: 'Angry caller', destination_phone: '+14155550101', transfer_type: 'warm', warm_brief: 'Upset customer', priority: 9 },
    { name: 'PBX', condition: 'Wants the office', transfer_type: 'sip_refer', sip_trunk_id: trunk.body.id, destination_sip_uri: 'sip:office@pbx.boats.example.com', priority: 1 },
  ];
  for (const rule of rules) {
    const res = await api.post(`${REST}/agents/${agent.id}/transfer-rules`, rule);
    expect(res.status, res.text).toBe(201);
  }
  return { agent: patched.body, profile, trunk: trunk.body };
}

const rulesOf = async (api: Api, agentId: string) => (await api.get(`${REST}/agents/${agentId}/transfer-rules`)).body.data as Record<string, any>[];
const withoutIdentity = (rule: Record<string, any>) => {
  const { id: _i, widget_id: _w, created_at: _c, updated_at: _u, ...rest } = rule;
  return rest;
};
/** The configuration of an agent: everything but identity, status, timestamps (and the profile id, which is per organization). */
const configOf = (agent: Record<string, any>) => {
  const { id: _i, public_key: _p, status: _s, created_at: _c, updated_at: _u, has_pending_draft: _h, voice_profile_id: _v, ...rest } = agent;
  return rest;
};

describe('clone', () => {
  it('copies configuration and transfer rules under a new id and public_key', async () => {
    const { api } = await newOrg(svc);
    const { agent } = await richAgent(api);
    await api.put(`${REST}/agents/${agent.id}/draft`, { greeting: 'draft only' });
    const res = await api.post(`${REST}/agents/${agent.id}/clone`);
    expect(res.status, res.text).toBe(201);
    const clone = res.body;
    expect(res.headers.get('location')).toBe(`${REST}/agents/${clone.id}`);
    expect(clone.id).not.toBe(agent.id);
    expect(clone.public_key).not.toBe(agent.public_key);
    expect(clone.name).toBe('Sales (copy)');
    expect(clone.status).toBe('active');
    expect(clone.has_pending_draft).toBe(false);
    expect({ ...configOf(clone), name: 'Sales' }).toEqual(configOf(agent));
    expect(clone.voice_profile_id).toBe(agent.voice_profile_id);
    expect((await rulesOf(api, clone.id)).map(withoutIdentity)).toEqual((await rulesOf(api, agent.id)).map(withoutIdentity));
    // Independent afterwards.
    await api.patch(`${REST}/agents/${clone.id}`, { greeting: 'Changed' });
    expect((await api.get(`${REST}/agents/${agent.id}`)).body.greeting).toBe('Ahoy!');

    const named = await api.post(`${REST}/agents/${agent.id}/clone`, { name: 'Sales EU' });
    expect(named.body.name).toBe('Sales EU');
    expect((await api.post(`${REST}/agents/${agent.id}/clone`, { name: '' })).status).toBe(400);
    expect((await api.post(`${REST}/agents/${agent.id}/clone`, { nope: 1 })).status).toBe(400);
  });

  it('a paused agent clones paused; unknown and foreign agents are 404', async () => {
    const { api } = await newOrg(svc);
    const agent = (await api.post(`${REST}/agents`, { name: 'P' })).body;
    await api.patch(`${REST}/agents/${agent.id}`, { status: 'paused' });
    expect((await api.post(`${REST}/agents/${agent.id}/clone`)).body.status).toBe('paused');
    const stranger = (await newOrg(svc)).api;
    expect((await stranger.post(`${REST}/agents/${agent.id}/clone`)).status).toBe(404);
    expect((await api.post(`${REST}/agents/0190a0b0-0000-7000-8000-000000000000/clone`)).status).toBe(404);
  });
});

describe('promote', () => {
  it('copies configuration and rules onto a sibling; its identity, public_key, status and domains stay', async () => {
    const { api } = await newOrg(svc);
    const { agent: staging } = await richAgent(api);
    const prod = (await api.post(`${REST}/agents`, { name: 'Sales (live)' })).body;
    await api.patch(`${REST}/agents/${prod.id}`, { domains: ['www.boats.example.com'], greeting: 'old', status: 'paused' });
    await api.post(`${REST}/agents/${prod.id}/transfer-rules`, { name: 'Old rule', condition: 'x', destination_phone: '+14155550199' });

    const res = await api.post(`${REST}/agents/${staging.id}/promote`, { target_agent_id: prod.id });
    expect(res.status, res.text).toBe(200);
    const promoted = res.body;
    expect(promoted).toMatchObject({ id: prod.id, public_key: prod.public_key, name: 'Sales (live)', status: 'paused', domains: ['www.boats.example.com'] });
    const { name: _a, domains: _b, site_url: _c, ...expected } = configOf(staging);
    expect(promoted).toMatchObject(expected);
    expect(promoted.voice_profile_id).toBe(staging.voice_profile_id);
    expect((await rulesOf(api, prod.id)).map(withoutIdentity)).toEqual((await rulesOf(api, staging.id)).map(withoutIdentity));
    expect((await api.get(`${REST}/agents/${prod.id}`)).body).toEqual(promoted);
  });

  it('refuses a missing, foreign or identical target with 400 on target_agent_id', async () => {
    const { api } = await newOrg(svc);
    const source = (await api.post(`${REST}/agents`, { name: 'S' })).body;
    const foreign = (await (await newOrg(svc)).api.post(`${REST}/agents`, { name: 'F' })).body;
    for (const [target, code] of [[foreign.id, 'unknown_agent'], [source.id, 'same_agent'], ['0190a0b0-0000-7000-8000-000000000000', 'unknown_agent']]) {
      const res = await api.post(`${REST}/agents/${source.id}/promote`, { target_agent_id: target });
      expect(res.status, res.text).toBe(400);
      expect(res.body.errors).toContainEqual(expect.objectContaining({ field: 'target_agent_id', code }));
    }
    expect((await api.post(`${REST}/agents/${source.id}/promote`, {})).body.errors).toContainEqual(expect.objectContaining({ field: 'target_agent_id', code: 'required' }));
    expect((await api.post(`${REST}/agents/0190a0b0-0000-7000-8000-000000000000/promote`, { target_agent_id: source.id })).status).toBe(404);
  });
});

describe('export and import', () => {
  it('round-trips into another organization equal except identity; never a secret', async () => {
    const { api, orgId } = await newOrg(svc);
    const { agent, trunk } = await richAgent(api);
    const exported = await api.get(`${REST}/agents/${agent.id}/export`);
    expect(exported.status, exported.text).toBe(200);
    const manifest = exported.body;
    expect(manifest).toMatchObject({
      manifest_version: 1, source: { agent_id: agent.id, organization_id: orgId },
      voice_profile: { name: 'Sailor', base_voice: 'ash', accent: 'british', pace: 'slow' },
      sites: [{ url: 'https://boats.example.com/' }],
    });
    expect(manifest.transfer_rules).toHaveLength(3);
    expect(manifest.transfer_rules.find((r: any) => r.transfer_type === 'sip_refer').sip_trunk)
      .toEqual({ label: 'PBX', sip_host: 'pbx.boats.example.com:5061', sip_username: 'agent' });
    expect(exported.text).not.toContain('hunter2');
    expect(exported.text).not.toContain(trunk.id);
    expect(exported.text).not.toContain(agent.voice_profile_id);
    expect(exported.text).not.toContain(agent.public_key);

    // Another organization: the trunk must exist there first.
    const other = await newOrg(svc);
    const refused = await other.api.post(`${REST}/agents/import`, manifest);
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body.errors).toEqual([expect.objectContaining({ field: 'transfer_rules[2].sip_trunk', code: 'unresolved_sip_trunk' })]);
    expect(refused.body.detail).toMatch(/pbx\.boats\.example\.com/);
    expect((await other.api.get(`${REST}/agents`)).body.total).toBe(0);
    expect((await other.api.get(`${REST}/voice-profiles`)).body.total).toBe(0);

    await other.api.post(`${REST}/sip-trunks`, { label: 'Their PBX', sip_host: 'pbx.boats.example.com:5061', sip_username: 'agent', password: 'x' });
    const imported = await other.api.post(`${REST}/agents/import`, manifest);
    expect(imported.status, imported.text).toBe(201);
    const copy = imported.body;
    expect(imported.headers.get('location')).toBe(`${REST}/agents/${copy.id}`);
    expect(configOf(copy)).toEqual(configOf(agent));
    expect(copy.id).not.toBe(agent.id);
    const profile = (await other.api.get(`${REST}/voice-profiles/${copy.voice_profile_id}`)).body;
    expect(profile).toMatchObject({ name: 'Sailor', base_voice: 'ash', accent: 'british', pace: 'slow' });
    const theirTrunk = (await other.api.get(`${REST}/sip-trunks`)).body.data[0];
    const rules = await rulesOf(other.api, copy.id);
    const original = await rulesOf(api, agent.id);
    expect(rules.map((r) => ({ ...withoutIdentity(r), sip_trunk_id: null }))).toEqual(original.map((r) => ({ ...withoutIdentity(r), sip_trunk_id: null })));
    expect(rules.find((r) => r.transfer_type === 'sip_refer')!.sip_trunk_id).toBe(theirTrunk.id);

    // Export of the import is the same manifest but for identity.
    const again = (await other.api.get(`${REST}/agents/${copy.id}/export`)).body;
    // (The trunk is theirs: same host and username, their own label.)
    const strip = (m: any) => ({
      ...m, exported_at: null, source: null,
      transfer_rules: m.transfer_rules.map((r: any) => ({ ...r, sip_trunk: r.sip_trunk && { ...r.sip_trunk, label: null } })),
    });
    expect(strip(again)).toEqual(strip(manifest));
  });

  it('imports into the same organization too', async () => {
    const { api } = await newOrg(svc);
    const { agent } = await richAgent(api);
    const manifest = (await api.get(`${REST}/agents/${agent.id}/export`)).body;
    const res = await api.post(`${REST}/agents/import`, manifest);
    expect(res.status, res.text).toBe(201);
    expect(configOf(res.body)).toEqual(configOf(agent));
    expect((await api.get(`${REST}/agents`)).body.total).toBe(2);
  });

  it('validates the manifest: version, shape and configuration, naming each field', async () => {
    const { api } = await newOrg(svc);
    const agent = (await api.post(`${REST}/agents`, { name: 'Plain' })).body;
    const manifest = (await api.get(`${REST}/agents/${agent.id}/export`)).body;
    expect(manifest.voice_profile).toBeNull();
    expect(manifest.transfer_rules).toEqual([]);

    const cases: [unknown, string, string][] = [
      [{ ...manifest, manifest_version: 2 }, 'manifest_version', 'unsupported_manifest_version'],
      [{ ...manifest, manifest_version: undefined }, 'manifest_version', 'required'],
      [{ ...manifest, agent: { ...manifest.agent, configuration: { ...manifest.agent.configuration, domains: ['not a host'] } } }, 'agent.configuration.domains[0]', 'invalid_domain'],
      [{ ...manifest, agent: { ...manifest.agent, configuration: { ...manifest.agent.configuration, theme: { mode: 'neon' } } } }, 'agent.configuration.theme.mode', 'invalid_value'],
      [{ ...manifest, transfer_rules: [{ name: 'x', condition: 'y', transfer_type: 'cold' }] }, 'transfer_rules[0].destination_phone', 'required'],
      [{ ...manifest, transfer_rules: [{ name: 'x', condition: 'y', transfer_type: 'sip_refer', destination_phone: '+14155550100' }] }, 'transfer_rules[0].sip_trunk_id', 'required'],
      [{ ...manifest, extra: true }, 'extra', 'unknown_field'],
    ];
    for (const [body, field, code] of cases) {
      const res = await api.post(`${REST}/agents/import`, body);
      expect(res.status, `${field}: ${res.text}`).toBe(400);
      expect(res.body.errors, res.text).toContainEqual(expect.objectContaining({ field, code }));
    }
    expect((await api.get(`${REST}/agents`)).body.total).toBe(1);
    expect((await api.post(`${REST}/agents/import`, manifest)).status).toBe(201);
  });

  it('checks every site URL of a manifest for private-network targets at the door, as create does (issue 12, defect 6)', async () => {
    const { api } = await newOrg(svc);
    const agent = (await api.post(`${REST}/agents`, { name: 'Plain' })).body;
    const manifest = (await api.get(`${REST}/agents/${agent.id}/export`)).body;
    for (const body of [
      { ...manifest, agent: { ...manifest.agent, site_url: 'http://127.0.0.1:9/' } },
      { ...manifest, sites: [{ url: 'http://127.0.0.1:9/' }] },
      { ...manifest, agent: { ...manifest.agent, site_url: 'https://boats.example.com/' }, sites: [{ url: 'http://[::1]:9/' }] },
    ]) {
      const res = await api.post(`${REST}/agents/import`, body);
      expect(res.status, res.text).toBe(400);
      expect(res.body.code).toBe('private_network_target');
    }
    expect((await api.get(`${REST}/agents`)).body.total).toBe(1);
    expect((await api.get(`${REST}/sites`)).body.total).toBe(0);
  });

  it('permissions: export needs agents.read; import needs agents.write, and voice_profiles.write for a profile', async () => {
    const { api } = await newOrg(svc);
    const { agent } = await richAgent(api);
    const manifest = (await api.get(`${REST}/agents/${agent.id}/export`)).body;
    const token = async (permissions: string[]) => client(svc.url, (await api.post(`${REST}/api-keys`, { name: 'k', permissions })).body.token);
    const none = await token([]);
    expect((await none.get(`${REST}/agents/${agent.id}/export`)).body.required_permission).toBe('agents.read');
    const writer = await token(['agents.read', 'agents.write', 'org.read']);
    const res = await writer.post(`${REST}/agents/import`, manifest);
    expect(res.status).toBe(403);
    expect(res.body.required_permission).toBe('voice_profiles.write');
    expect((await writer.post(`${REST}/agents/import`, { ...manifest, voice_profile: null })).status).toBe(201);
    expect((await writer.post(`${REST}/agents/${agent.id}/clone`)).status).toBe(201);
    const reader = await token(['agents.read']);
    expect((await reader.post(`${REST}/agents/${agent.id}/clone`)).status).toBe(403);
    expect((await reader.post(`${REST}/agents/${agent.id}/promote`, { target_agent_id: agent.id })).status).toBe(403);
    expect((await (await newOrg(svc)).api.get(`${REST}/agents/${agent.id}/export`)).status).toBe(404);
  });
});
