import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, eventually, startTestService, type TestService } from './helpers.ts';
import { keyWith as issueKey, type Api } from './support/orgs.ts';
import { expectFieldError } from './support/problems.ts';
import {
  deleteTransferRulesOfAgent, listTransferRules,
} from '../src/db/transfer-rules.ts';
import { insertTransferRule } from '../src/transfer-rules/index.ts';
import { transferRuleInput } from '../src/domain/transfer-rules.ts';

let svc: TestService;
beforeAll(async () => { svc = await startTestService({ PURGE_BATCH_SIZE: 50 }); });
afterAll(async () => { await svc?.stop(); });

const A = '/api/v1/rest/agents';
const R = (agentId: string) => `${A}/${agentId}/transfer-rules`;
const MISSING = '0190a5c4-0000-7000-8000-000000000000';
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** An organization with one agent, one SIP trunk and an admin client. */
async function setup() {
  const { token, orgId } = await svc.newOrg();
  const api = client(svc.url, token);
  const agent = (await api.post(A, { name: 'Switchboard' })).body as { id: string };
  const trunk = (await api.post('/api/v1/rest/sip-trunks', { label: 'PBX', sip_host: 'pbx.example.com', sip_username: 'u', password: 'pw-123456' })).body as { id: string };
  return { api, token, orgId, agent, trunk };
}

const COLD = { name: 'Billing', condition: 'The caller asks about an invoice', destination_phone: '+14155550123' };

async function createRule(api: Api, agentId: string, body: Record<string, unknown> = {}) {
  const res = await api.post(R(agentId), { ...COLD, ...body });
  expect(res.status, res.text).toBe(201);
  return res.body as Record<string, any> & { id: string };
}

describe('transfer rules: create and read', () => {
  it('creates a cold rule with the defaults (201, Location) and reads it back', async () => {
    const { api, agent } = await setup();
    const res = await api.post(R(agent.id), COLD);
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`${R(agent.id)}/${res.body.id}`);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/), widget_id: agent.id, name: 'Billing', condition: COLD.condition,
      destination_phone: '+14155550123', destination_label: null, enabled: true, priority: 0, transfer_type: 'cold',
      ring_timeout_seconds: 30, on_no_answer: 'return_to_agent', warm_brief: null, sip_trunk_id: null, destination_sip_uri: null,
      created_at: expect.stringMatching(ISO_MS), updated_at: expect.stringMatching(ISO_MS),
    });
    expect(Object.keys(res.body)).toEqual([
      'id', 'widget_id', 'name', 'condition', 'destination_phone', 'destination_label', 'enabled', 'priority', 'transfer_type',
      'ring_timeout_seconds', 'on_no_answer', 'warm_brief', 'sip_trunk_id', 'destination_sip_uri', 'created_at', 'updated_at',
    ]);
    const one = await api.get(`${R(agent.id)}/${res.body.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(res.body);
  });

  it('creates warm and sip_refer rules with every field', async () => {
    const { api, agent, trunk } = await setup();
    const warm = await createRule(api, agent.id, {
      transfer_type: 'warm', warm_brief: 'Caller {name} needs a refund', destination_label: 'Refunds desk',
      enabled: false, priority: 1000, ring_timeout_seconds: 10,
    });
    expect(warm).toMatchObject({ transfer_type: 'warm', warm_brief: 'Caller {name} needs a refund', destination_label: 'Refunds desk', enabled: false, priority: 1000, ring_timeout_seconds: 10 });
    const sip = await createRule(api, agent.id, {
      transfer_type: 'sip_refer', sip_trunk_id: trunk.id, destination_sip_uri: 'sips:support@pbx.example.com:5061;transport=tls', ring_timeout_seconds: 60,
    });
    expect(sip).toMatchObject({ transfer_type: 'sip_refer', sip_trunk_id: trunk.id, destination_sip_uri: 'sips:support@pbx.example.com:5061;transport=tls', destination_phone: '+14155550123', warm_brief: null });
    // sip_refer with a SIP URI needs no phone number.
    const uriOnly = await createRule(api, agent.id, { transfer_type: 'sip_refer', sip_trunk_id: trunk.id, destination_phone: null, destination_sip_uri: 'sip:desk@pbx.example.com' });
    expect(uriOnly.destination_phone).toBeNull();
    const noPhoneField = await api.post(R(agent.id), { name: 'n', condition: 'c', transfer_type: 'sip_refer', sip_trunk_id: trunk.id, destination_sip_uri: 'sip:10.0.0.5' });
    expect(noPhoneField.status).toBe(201);
    // Nulls of the other types' fields are accepted (they are the unset value).
    expect((await api.post(R(agent.id), { ...COLD, warm_brief: null, sip_trunk_id: null, destination_sip_uri: null, destination_label: null })).status).toBe(201);
  });

  it('lists by priority, highest first (ties oldest first), with the offset envelope', async () => {
    const { api, agent } = await setup();
    const ids: Record<string, string> = {};
    for (const [name, priority] of [['p5a', 5], ['p10', 10], ['p5b', 5], ['p0', 0], ['p100', 100], ['pdefault', undefined]] as const) {
      ids[name] = (await createRule(api, agent.id, { name, ...(priority === undefined ? {} : { priority }) })).id;
    }
    const list = await api.get(R(agent.id));
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ total: 6, limit: 50, offset: 0 });
    expect(list.body.data.map((r: { name: string }) => r.name)).toEqual(['p100', 'p10', 'p5a', 'p5b', 'p0', 'pdefault']);
    const page = await api.get(`${R(agent.id)}?limit=2&offset=1`);
    expect(page.body).toMatchObject({ total: 6, limit: 2, offset: 1 });
    expect(page.body.data.map((r: { id: string }) => r.id)).toEqual([ids.p10, ids.p5a]);
    for (const q of ['limit=0', 'limit=101', 'offset=-1', 'limit=abc', 'sort=name']) expect((await api.get(`${R(agent.id)}?${q}`)).status, q).toBe(400);
    // Raising a priority moves the rule.
    await api.patch(`${R(agent.id)}/${ids.p0}`, { priority: 1000 });
    expect((await api.get(R(agent.id))).body.data[0].id).toBe(ids.p0);
    // Another agent's list is its own.
    const other = (await api.post(A, { name: 'Other' })).body;
    expect((await api.get(R(other.id))).body).toEqual({ data: [], total: 0, limit: 50, offset: 0 });
  });
});

describe('transfer rules: validation', () => {
  it('refuses what the schema refuses', async () => {
    const { api, agent } = await setup();
    const post = (body: Record<string, unknown>) => api.post(R(agent.id), { ...COLD, ...body });
    for (const ring_timeout_seconds of [9, 61, 0, -30, 600]) expectFieldError(await post({ ring_timeout_seconds }), 'ring_timeout_seconds', 'out_of_range');
    expectFieldError(await post({ ring_timeout_seconds: 30.5 }), 'ring_timeout_seconds', 'invalid_type');
    expectFieldError(await post({ ring_timeout_seconds: '30' }), 'ring_timeout_seconds', 'invalid_type');
    for (const ring_timeout_seconds of [10, 60]) expect((await post({ ring_timeout_seconds })).status).toBe(201);
    for (const destination_phone of ['4155550123', '+04155550123', '+1 415 555 0123', '+1415555012345678', 'tel:+14155550123', '+']) {
      expectFieldError(await post({ destination_phone }), 'destination_phone', destination_phone.length > 16 ? 'too_long' : 'invalid_e164');
    }
    expectFieldError(await post({ transfer_type: 'blind' }), 'transfer_type', 'invalid_value');
    expectFieldError(await post({ on_no_answer: 'hang_up' }), 'on_no_answer', 'invalid_value');
    expectFieldError(await post({ priority: -1 }), 'priority', 'out_of_range');
    expectFieldError(await post({ priority: 1001 }), 'priority', 'out_of_range');
    expectFieldError(await post({ priority: 1.5 }), 'priority', 'invalid_type');
    expectFieldError(await post({ enabled: 'true' }), 'enabled', 'invalid_type');
    expectFieldError(await post({ name: '' }), 'name', 'too_short');
    expectFieldError(await post({ name: 'x'.repeat(201) }), 'name', 'too_long');
    expectFieldError(await post({ name: null }), 'name', 'invalid_type');
    expectFieldError(await post({ condition: 'x'.repeat(2001) }), 'condition', 'too_long');
    expectFieldError(await post({ destination_label: 'x'.repeat(201) }), 'destination_label', 'too_long');
    expectFieldError(await post({ transfer_type: 'warm', warm_brief: 'x'.repeat(2001) }), 'warm_brief', 'too_long');
    expectFieldError(await post({ widget_id: agent.id }), 'widget_id', 'unknown_field');
    expectFieldError(await post({ id: MISSING }), 'id', 'unknown_field');
    expectFieldError(await post({ transfer_type: 'sip_refer', sip_trunk_id: 'not-a-uuid' }), 'sip_trunk_id', 'invalid_format');
    const { name: _n, ...noName } = COLD;
    expectFieldError(await api.post(R(agent.id), noName), 'name', 'required');
    const { condition: _c, ...noCondition } = COLD;
    expectFieldError(await api.post(R(agent.id), noCondition), 'condition', 'required');
    expect((await api.post(R(agent.id), '{"name":')).body.code).toBe('invalid_json');
    expect((await api.get(R(agent.id))).body.total).toBe(2);
  });

  it('applies the transfer-type rules', async () => {
    const { api, agent, trunk } = await setup();
    const post = (body: Record<string, unknown>) => api.post(R(agent.id), { name: 'r', condition: 'c', ...body });
    // destination_phone: required for cold and warm, and for sip_refer without a SIP URI.
    expectFieldError(await post({}), 'destination_phone', 'required');
    expectFieldError(await post({ transfer_type: 'cold', destination_phone: null }), 'destination_phone', 'required');
    expectFieldError(await post({ transfer_type: 'warm', warm_brief: 'hi' }), 'destination_phone', 'required');
    expectFieldError(await post({ transfer_type: 'sip_refer', sip_trunk_id: trunk.id }), 'destination_phone', 'required');
    // sip_refer needs a trunk.
    expectFieldError(await post({ transfer_type: 'sip_refer', destination_phone: '+14155550123' }), 'sip_trunk_id', 'required');
    expectFieldError(await post({ transfer_type: 'sip_refer', destination_sip_uri: 'sip:a@pbx.example.com', sip_trunk_id: null }), 'sip_trunk_id', 'required');
    // Fields of another type.
    expectFieldError(await post({ destination_phone: '+14155550123', warm_brief: 'hi' }), 'warm_brief', 'not_allowed_for_transfer_type');
    expectFieldError(await post({ transfer_type: 'sip_refer', sip_trunk_id: trunk.id, destination_phone: '+14155550123', warm_brief: 'hi' }), 'warm_brief', 'not_allowed_for_transfer_type');
    expectFieldError(await post({ destination_phone: '+14155550123', sip_trunk_id: trunk.id }), 'sip_trunk_id', 'not_allowed_for_transfer_type');
    expectFieldError(await post({ transfer_type: 'warm', destination_phone: '+14155550123', destination_sip_uri: 'sip:a@pbx.example.com' }), 'destination_sip_uri', 'not_allowed_for_transfer_type');
    const message = (await post({ destination_phone: '+14155550123', warm_brief: 'hi' })).body.errors[0].message;
    expect(message).toBe('warm_brief applies only to warm rules, and this rule is cold');
    // SIP URIs: sip: or sips: with a valid host.
    for (const destination_sip_uri of ['http://pbx.example.com', 'pbx.example.com', 'sip:', 'sip:user@', 'sip:a b@pbx.example.com', 'sip:a@bad_host.example.com', 'tel:+14155550123', 'sip:a@pbx.example.com:99999']) {
      expectFieldError(await post({ transfer_type: 'sip_refer', sip_trunk_id: trunk.id, destination_sip_uri }), 'destination_sip_uri', 'invalid_sip_uri');
    }
    expectFieldError(await post({ transfer_type: 'sip_refer', sip_trunk_id: trunk.id, destination_sip_uri: `sip:${'a'.repeat(510)}` }), 'destination_sip_uri', 'too_long');
    for (const destination_sip_uri of ['SIP:desk@PBX.example.com', 'sips:[2001:db8::1]:5061', 'sip:+14155550123@gw.example.com;user=phone']) {
      expect((await post({ transfer_type: 'sip_refer', sip_trunk_id: trunk.id, destination_sip_uri })).status, destination_sip_uri).toBe(201);
    }
    // Several problems are reported together.
    const many = await post({ transfer_type: 'cold', warm_brief: 'x', destination_sip_uri: 'sip:a@pbx.example.com' });
    expect(many.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['destination_phone', 'destination_sip_uri', 'warm_brief']);
    expect((await api.get(R(agent.id))).body.total).toBe(3);
  });

  it('refuses a sip_trunk_id that does not resolve in the organization (400 on the field)', async () => {
    const a = await setup();
    const b = await setup();
    for (const sip_trunk_id of [b.trunk.id, MISSING]) {
      const res = await a.api.post(R(a.agent.id), { ...COLD, transfer_type: 'sip_refer', sip_trunk_id });
      expectFieldError(res, 'sip_trunk_id', 'unknown_sip_trunk');
      expect(res.body.errors).toHaveLength(1);
    }
    const rule = await createRule(a.api, a.agent.id, { transfer_type: 'sip_refer', sip_trunk_id: a.trunk.id });
    expectFieldError(await a.api.patch(`${R(a.agent.id)}/${rule.id}`, { sip_trunk_id: b.trunk.id }), 'sip_trunk_id', 'unknown_sip_trunk');
    expect((await a.api.get(`${R(a.agent.id)}/${rule.id}`)).body.sip_trunk_id).toBe(a.trunk.id);
    // The database refuses it too, whoever writes.
    await expect(svc.sql`update transfer_rules set sip_trunk_id = ${b.trunk.id} where id = ${rule.id}`).rejects.toThrow(/transfer_rules_sip_trunk_fk/);
    await expect(insertTransferRule(svc.sql, a.orgId, a.agent.id, { ...COLD, transfer_type: 'sip_refer', sip_trunk_id: b.trunk.id }))
      .rejects.toMatchObject({ status: 400, code: 'validation_error', errors: [{ field: 'sip_trunk_id', code: 'unknown_sip_trunk' }] });
  });
});

describe('transfer rules: PATCH', () => {
  it('changes only the sent fields; {} changes nothing', async () => {
    const { api, agent } = await setup();
    const rule = await createRule(api, agent.id, { transfer_type: 'warm', warm_brief: 'brief', destination_label: 'Desk', priority: 7 });
    const renamed = await api.patch(`${R(agent.id)}/${rule.id}`, { name: 'Renamed', enabled: false });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({ ...rule, name: 'Renamed', enabled: false, updated_at: expect.stringMatching(ISO_MS) });
    expect(Date.parse(renamed.body.updated_at)).toBeGreaterThan(Date.parse(rule.updated_at));
    const same = await api.patch(`${R(agent.id)}/${rule.id}`, {});
    expect(same.status).toBe(200);
    expect(same.body).toEqual(renamed.body);
    const cleared = await api.patch(`${R(agent.id)}/${rule.id}`, { warm_brief: null, destination_label: null });
    expect(cleared.body).toMatchObject({ warm_brief: null, destination_label: null, transfer_type: 'warm', priority: 7 });
    expectFieldError(await api.patch(`${R(agent.id)}/${rule.id}`, { destination_phone: null }), 'destination_phone', 'required');
    expectFieldError(await api.patch(`${R(agent.id)}/${rule.id}`, { name: null }), 'name', 'invalid_type');
    expectFieldError(await api.patch(`${R(agent.id)}/${rule.id}`, { ring_timeout_seconds: 61 }), 'ring_timeout_seconds', 'out_of_range');
    expectFieldError(await api.patch(`${R(agent.id)}/${rule.id}`, { widget_id: agent.id }), 'widget_id', 'unknown_field');
    expect((await api.get(`${R(agent.id)}/${rule.id}`)).body).toEqual(cleared.body);
  });

  it('keeps unsent type-specific fields: a new destination_sip_uri needs no sip_trunk_id', async () => {
    const { api, agent, trunk } = await setup();
    const rule = await createRule(api, agent.id, { transfer_type: 'sip_refer', sip_trunk_id: trunk.id, destination_sip_uri: 'sip:a@pbx.example.com' });
    const res = await api.patch(`${R(agent.id)}/${rule.id}`, { destination_sip_uri: 'sip:b@pbx.example.com' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ transfer_type: 'sip_refer', sip_trunk_id: trunk.id, destination_sip_uri: 'sip:b@pbx.example.com', destination_phone: '+14155550123' });
    // Sending the same type again clears nothing.
    expect((await api.patch(`${R(agent.id)}/${rule.id}`, { transfer_type: 'sip_refer' })).body).toMatchObject({ sip_trunk_id: trunk.id, destination_sip_uri: 'sip:b@pbx.example.com' });
    // Without a phone number the URI is what makes the rule valid: it cannot go.
    expect((await api.patch(`${R(agent.id)}/${rule.id}`, { destination_phone: null })).status).toBe(200);
    expectFieldError(await api.patch(`${R(agent.id)}/${rule.id}`, { destination_sip_uri: null }), 'destination_phone', 'required');
    expectFieldError(await api.patch(`${R(agent.id)}/${rule.id}`, { sip_trunk_id: null }), 'sip_trunk_id', 'required');
    expectFieldError(await api.patch(`${R(agent.id)}/${rule.id}`, { destination_sip_uri: 'https://pbx.example.com' }), 'destination_sip_uri', 'invalid_sip_uri');
    expectFieldError(await api.patch(`${R(agent.id)}/${rule.id}`, { warm_brief: 'x' }), 'warm_brief', 'not_allowed_for_transfer_type');
    const other = (await api.post('/api/v1/rest/sip-trunks', { label: 'B', sip_host: 'b.example.com', sip_username: 'u', password: 'pw' })).body;
    expect((await api.patch(`${R(agent.id)}/${rule.id}`, { sip_trunk_id: other.id })).body).toMatchObject({ sip_trunk_id: other.id, destination_sip_uri: 'sip:b@pbx.example.com' });
  });

  it('changing transfer_type clears the old type\'s fields, then checks the rule for the new type', async () => {
    const { api, agent, trunk } = await setup();
    const url = (id: string) => `${R(agent.id)}/${id}`;
    // sip_refer → cold: trunk and URI cleared; the phone number stays.
    const sip = await createRule(api, agent.id, { transfer_type: 'sip_refer', sip_trunk_id: trunk.id, destination_sip_uri: 'sip:a@pbx.example.com' });
    const cold = await api.patch(url(sip.id), { transfer_type: 'cold' });
    expect(cold.status).toBe(200);
    expect(cold.body).toMatchObject({ transfer_type: 'cold', sip_trunk_id: null, destination_sip_uri: null, destination_phone: '+14155550123', warm_brief: null });
    // cold → sip_refer without a trunk: 400, and nothing changed.
    expectFieldError(await api.patch(url(sip.id), { transfer_type: 'sip_refer' }), 'sip_trunk_id', 'required');
    expect((await api.get(url(sip.id))).body).toEqual(cold.body);
    expect((await api.patch(url(sip.id), { transfer_type: 'sip_refer', sip_trunk_id: trunk.id })).body).toMatchObject({ transfer_type: 'sip_refer', sip_trunk_id: trunk.id });
    // sip_refer → warm with a brief: SIP fields cleared, brief set.
    const warm = await api.patch(url(sip.id), { transfer_type: 'warm', warm_brief: 'Say hello' });
    expect(warm.body).toMatchObject({ transfer_type: 'warm', warm_brief: 'Say hello', sip_trunk_id: null, destination_sip_uri: null });
    // warm → cold clears the brief; sending one with it is refused.
    expectFieldError(await api.patch(url(sip.id), { transfer_type: 'cold', warm_brief: 'still here' }), 'warm_brief', 'not_allowed_for_transfer_type');
    expect((await api.patch(url(sip.id), { transfer_type: 'cold' })).body).toMatchObject({ transfer_type: 'cold', warm_brief: null });
    // Fields of a type the rule is not becoming are refused.
    expectFieldError(await api.patch(url(sip.id), { transfer_type: 'warm', sip_trunk_id: trunk.id }), 'sip_trunk_id', 'not_allowed_for_transfer_type');
    // A sip_refer rule reached only by URI cannot become cold without a number.
    const uriOnly = await createRule(api, agent.id, { transfer_type: 'sip_refer', sip_trunk_id: trunk.id, destination_phone: null, destination_sip_uri: 'sip:a@pbx.example.com' });
    expectFieldError(await api.patch(url(uriOnly.id), { transfer_type: 'cold' }), 'destination_phone', 'required');
    expect((await api.patch(url(uriOnly.id), { transfer_type: 'warm', destination_phone: '+33142685300' })).body)
      .toMatchObject({ transfer_type: 'warm', destination_phone: '+33142685300', sip_trunk_id: null, destination_sip_uri: null });
  });
});

describe('transfer rules: 404, 403 and organizations', () => {
  it('answers 404 for a missing, malformed, deleted or foreign agent, and for another agent\'s rule', async () => {
    const { api, agent, trunk } = await setup();
    const rule = await createRule(api, agent.id);
    const sibling = (await api.post(A, { name: 'Sibling' })).body;
    const all = (agentId: string, ruleId: string) => [
      () => api.get(R(agentId)), () => api.post(R(agentId), COLD), () => api.get(`${R(agentId)}/${ruleId}`),
      () => api.patch(`${R(agentId)}/${ruleId}`, { name: 'x' }), () => api.delete(`${R(agentId)}/${ruleId}`),
    ];
    for (const agentId of [MISSING, 'not-a-uuid', `${agent.id}x`]) {
      for (const call of all(agentId, rule.id)) {
        const res = await call();
        expect(res.status, `${agentId} ${res.text}`).toBe(404);
        expect(res.body.code).toBe('not_found');
      }
    }
    // The rule exists, but not under that agent; nor does a made-up rule id.
    for (const [agentId, ruleId] of [[sibling.id, rule.id], [agent.id, MISSING], [agent.id, 'nope']]) {
      for (const call of all(agentId!, ruleId!).slice(2)) expect((await call()).status, `${agentId}/${ruleId}`).toBe(404);
    }
    // 400 before 404: a bad body on a missing agent is a bad body.
    expectFieldError(await api.post(R(MISSING), { ...COLD, ring_timeout_seconds: 5 }), 'ring_timeout_seconds', 'out_of_range');
    expectFieldError(await api.patch(`${R(agent.id)}/${MISSING}`, { ring_timeout_seconds: 5 }), 'ring_timeout_seconds', 'out_of_range');
    expectFieldError(await api.patch(`${R(MISSING)}/${rule.id}`, { transfer_type: 'sip_refer', sip_trunk_id: MISSING }), 'sip_trunk_id', 'unknown_sip_trunk');
    expect((await api.get(`${R(agent.id)}/${rule.id}`)).body.name).toBe('Billing');

    // A deleted agent answers 404 everywhere at once, before its purge.
    const doomed = (await api.post(A, { name: 'Doomed' })).body;
    const doomedRule = await createRule(api, doomed.id, { transfer_type: 'sip_refer', sip_trunk_id: trunk.id });
    expect((await api.delete(`${A}/${doomed.id}`)).status).toBe(204);
    for (const call of all(doomed.id, doomedRule.id)) expect((await call()).status).toBe(404);
  });

  it('seals organizations: another organization\'s agent and rules answer 404', async () => {
    const a = await setup();
    const b = await setup();
    const rule = await createRule(a.api, a.agent.id);
    for (const res of [
      await b.api.get(R(a.agent.id)), await b.api.get(`${R(a.agent.id)}/${rule.id}`), await b.api.post(R(a.agent.id), COLD),
      await b.api.patch(`${R(a.agent.id)}/${rule.id}`, { name: 'mine' }), await b.api.delete(`${R(a.agent.id)}/${rule.id}`),
      // Org B's own agent with org A's rule id.
      await b.api.get(`${R(b.agent.id)}/${rule.id}`), await b.api.patch(`${R(b.agent.id)}/${rule.id}`, { name: 'mine' }),
      await b.api.delete(`${R(b.agent.id)}/${rule.id}`),
    ]) expect(res.status, res.text).toBe(404);
    expect((await a.api.get(`${R(a.agent.id)}/${rule.id}`)).body).toEqual(rule);
  });

  it('checks permissions: agents.read to read, agents.write to change (403 before 400 and 404)', async () => {
    const { api, token, agent } = await setup();
    const rule = await createRule(api, agent.id);
    const keyWith = async (permissions: string[]) => {
      const key = await issueKey(svc, api, permissions);
      expect(token).not.toBe(key.token);
      return key.api;
    };
    const reader = await keyWith(['agents.read']);
    const writerOnly = await keyWith(['agents.write']);
    const orgAdmin = await keyWith(['org.read', 'org.write']);
    expect((await reader.get(R(agent.id))).body.total).toBe(1);
    expect((await reader.get(`${R(agent.id)}/${rule.id}`)).status).toBe(200);
    for (const res of [
      await reader.post(R(agent.id), COLD), await reader.patch(`${R(agent.id)}/${rule.id}`, { name: 'x' }),
      await reader.delete(`${R(agent.id)}/${rule.id}`),
      await reader.post(R(MISSING), { ring_timeout_seconds: 1 }), await reader.patch(`${R(agent.id)}/${MISSING}`, { name: '' }),
      await orgAdmin.post(R(agent.id), COLD),
    ]) {
      expect(res.status, res.text).toBe(403);
      expect(res.body).toMatchObject({ code: 'missing_permission', required_permission: 'agents.write' });
    }
    for (const res of [await writerOnly.get(R(agent.id)), await writerOnly.get(`${R(agent.id)}/${rule.id}`), await orgAdmin.get(R(MISSING))]) {
      expect(res.status).toBe(403);
      expect(res.body.required_permission).toBe('agents.read');
    }
    // agents.write alone may change rules.
    expect((await writerOnly.patch(`${R(agent.id)}/${rule.id}`, { priority: 3 })).status).toBe(200);
    expect((await client(svc.url).get(R(agent.id))).status).toBe(401);
    expect((await client(svc.url, 'sk_not_a_real_token_000000000000').post(R(agent.id), COLD)).status).toBe(401);
  });
});

describe('transfer rules: delete, trunk protection and the agent purge', () => {
  it('deletes a rule (204), then 404', async () => {
    const { api, agent } = await setup();
    const rule = await createRule(api, agent.id);
    expect((await api.delete(`${R(agent.id)}/${rule.id}`)).status).toBe(204);
    expect((await api.get(`${R(agent.id)}/${rule.id}`)).status).toBe(404);
    expect((await api.delete(`${R(agent.id)}/${rule.id}`)).status).toBe(404);
    expect((await api.get(R(agent.id))).body.total).toBe(0);
  });

  it('keeps a trunk in use (409) until the referencing rule is deleted', async () => {
    const { api, agent, trunk } = await setup();
    const rule = await createRule(api, agent.id, { transfer_type: 'sip_refer', sip_trunk_id: trunk.id });
    const conflict = await api.delete(`/api/v1/rest/sip-trunks/${trunk.id}`);
    expect(conflict.status).toBe(409);
    expect(conflict.body).toMatchObject({ code: 'sip_trunk_in_use', transfer_rule_count: 1 });
    expect((await api.get(`${R(agent.id)}/${rule.id}`)).body.sip_trunk_id).toBe(trunk.id);
    expect((await api.delete(`${R(agent.id)}/${rule.id}`)).status).toBe(204);
    expect((await api.delete(`/api/v1/rest/sip-trunks/${trunk.id}`)).status).toBe(204);
    // Now the trunk is gone, a rule cannot name it.
    expectFieldError(await api.post(R(agent.id), { ...COLD, transfer_type: 'sip_refer', sip_trunk_id: trunk.id }), 'sip_trunk_id', 'unknown_sip_trunk');
  });

  it('removes the rules with the agent when its purge deletes the row', async () => {
    const { api, agent, trunk } = await setup();
    await createRule(api, agent.id);
    await createRule(api, agent.id, { transfer_type: 'sip_refer', sip_trunk_id: trunk.id });
    const count = async () => (await svc.sql<{ n: number }[]>`select count(*)::int as n from transfer_rules where agent_id = ${agent.id}`)[0]!.n;
    expect(await count()).toBe(2);
    expect((await api.delete(`${A}/${agent.id}`)).status).toBe(204);
    await eventually(async () => (await svc.sql`select 1 from agents where id = ${agent.id}`).length === 0, 30_000);
    expect(await count()).toBe(0);
    // The trunk is free again.
    expect((await api.delete(`/api/v1/rest/sip-trunks/${trunk.id}`)).status).toBe(204);
  });
});

describe('transfer rules: repository functions for clone, promote, export and import', () => {
  it('lists, inserts (with defaults) and deletes an agent\'s rules', async () => {
    const { api, orgId, agent, trunk } = await setup();
    await createRule(api, agent.id, { name: 'low', priority: 1 });
    await createRule(api, agent.id, { name: 'high', priority: 9, transfer_type: 'sip_refer', sip_trunk_id: trunk.id, destination_sip_uri: 'sip:x@pbx.example.com' });
    await createRule(api, agent.id, { name: 'warm', priority: 5, transfer_type: 'warm', warm_brief: 'b', ring_timeout_seconds: 45 });
    const rules = await listTransferRules(svc.sql, orgId, agent.id);
    expect(rules.map((r) => r.name)).toEqual(['high', 'warm', 'low']);
    expect(rules).toEqual((await api.get(R(agent.id))).body.data);
    expect(await listTransferRules(svc.sql, (await svc.newOrg()).orgId, agent.id)).toEqual([]);

    // Clone: the same rules on another agent, in one transaction.
    const copy = (await api.post(A, { name: 'Copy' })).body;
    const copied = await svc.sql.begin(async (tx) => {
      const out = [];
      for (const rule of await listTransferRules(tx, orgId, agent.id)) out.push(await insertTransferRule(tx, orgId, copy.id, transferRuleInput(rule)));
      return out;
    });
    const strip = ({ id: _i, widget_id: _w, created_at: _c, updated_at: _u, ...rest }: Record<string, unknown>) => rest;
    expect(copied.map(strip)).toEqual(rules.map(strip));
    expect(copied.every((r) => r.widget_id === copy.id)).toBe(true);
    expect((await api.get(R(copy.id))).body.data.map((r: { name: string }) => r.name)).toEqual(['high', 'warm', 'low']);

    const minimal = await insertTransferRule(svc.sql, orgId, copy.id, { name: 'min', condition: 'c', destination_phone: '+14155550123' });
    expect(minimal).toMatchObject({ enabled: true, priority: 0, transfer_type: 'cold', ring_timeout_seconds: 30, warm_brief: null, destination_label: null });
    await expect(insertTransferRule(svc.sql, orgId, copy.id, { name: 'bad', condition: 'c', transfer_type: 'sip_refer' }))
      .rejects.toMatchObject({ status: 400, code: 'validation_error' });

    expect(await deleteTransferRulesOfAgent(svc.sql, copy.id)).toBe(4);
    expect(await deleteTransferRulesOfAgent(svc.sql, copy.id)).toBe(0);
    expect((await api.get(R(agent.id))).body.total).toBe(3);
  });
});

describe('transfer rules: OpenAPI', () => {
  it('lists the paths with every field and type', async () => {
    const doc = (await client(svc.url).get('/api/v1/openapi.json')).body;
    const list = '/api/v1/rest/agents/{id}/transfer-rules';
    const one = `${list}/{ruleId}`;
    expect(Object.keys(doc.paths[list])).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths[one])).toEqual(['get', 'patch', 'delete']);
    expect(doc.paths[list].post['x-permissions']).toEqual(['agents.write']);
    expect(doc.paths[one].get['x-permissions']).toEqual(['agents.read']);
    expect(doc.paths[list].post.operationId).toBe('create_transfer_rule');
    expect(doc.paths[one].patch.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/TransferRulePatch' });
    const { TransferRule, TransferRuleCreate, TransferRulePatch } = doc.components.schemas;
    expect(TransferRule.properties).toMatchObject({
      id: { type: 'string' }, widget_id: { type: 'string' }, name: { type: 'string' }, condition: { type: 'string' },
      destination_phone: { type: ['string', 'null'] }, destination_label: { type: ['string', 'null'] }, enabled: { type: 'boolean' },
      priority: { type: 'integer' }, transfer_type: { type: 'string', enum: ['cold', 'warm', 'sip_refer'] },
      ring_timeout_seconds: { type: 'integer', minimum: 10, maximum: 60 }, warm_brief: { type: ['string', 'null'] },
      sip_trunk_id: { type: ['string', 'null'] }, destination_sip_uri: { type: ['string', 'null'] },
      created_at: { type: 'string', format: 'date-time' }, updated_at: { type: 'string', format: 'date-time' },
    });
    expect(TransferRuleCreate.required).toEqual(['name', 'condition']);
    expect(TransferRuleCreate.properties.ring_timeout_seconds).toMatchObject({ minimum: 10, maximum: 60 });
    expect(TransferRuleCreate.properties.priority).toMatchObject({ minimum: 0, maximum: 1000 });
    expect(TransferRuleCreate.properties.destination_phone).toMatchObject({ 'x-code': 'invalid_e164' });
    expect(TransferRuleCreate.properties.destination_sip_uri).toMatchObject({ 'x-code': 'invalid_sip_uri', maxLength: 512 });
    expect(TransferRuleCreate.properties.warm_brief.description).toMatch(/not_allowed_for_transfer_type/);
    expect(TransferRulePatch.required ?? []).toEqual([]);
    expect(TransferRulePatch.additionalProperties).toBe(false);
  });
});

describe('transfer rules: random bodies', () => {
  it('POST and PATCH never answer 5xx; a 2xx is what the next GET shows and satisfies the type rules', async () => {
    const fc = (await import('fast-check')).default;
    const { api, agent, trunk } = await setup();
    const other = await setup();
    const rule = await createRule(api, agent.id);
    // Bodies coherent for their type (some fields left out), then sometimes one field replaced
    // by an odd value: a bad one, or one that belongs to another type.
    const coherent = fc.constantFrom('cold', 'warm', 'sip_refer').chain((type) => fc.record({
      name: fc.constantFrom('n', 'Rule'),
      transfer_type: fc.constant(type),
      destination_phone: type === 'sip_refer' ? fc.constantFrom('+14155550123', null) : fc.constantFrom('+14155550123', '+33142685300'),
      destination_label: fc.constantFrom(null, 'Desk'),
      enabled: fc.boolean(),
      priority: fc.integer({ min: 0, max: 1000 }),
      ring_timeout_seconds: fc.integer({ min: 10, max: 60 }),
      warm_brief: type === 'warm' ? fc.constantFrom('brief', null) : fc.constant(null),
      sip_trunk_id: fc.constant(type === 'sip_refer' ? trunk.id : null),
      destination_sip_uri: type === 'sip_refer' ? fc.constantFrom('sip:a@pbx.example.com', 'sips:[::1]:5061') : fc.constant(null),
    }, { requiredKeys: ['transfer_type'] }));
    const odd = fc.constantFrom<[string, unknown]>(
      ['name', ''], ['name', null], ['condition', ''], ['destination_phone', '123'], ['destination_phone', null],
      ['destination_label', 'x'.repeat(201)], ['enabled', 'yes'], ['priority', -1], ['priority', 1001], ['priority', 1.5],
      ['transfer_type', 'other'], ['transfer_type', 'cold'], ['transfer_type', 'warm'], ['transfer_type', 'sip_refer'],
      ['ring_timeout_seconds', 9], ['ring_timeout_seconds', 61], ['warm_brief', 'brief'], ['warm_brief', 7],
      ['sip_trunk_id', trunk.id], ['sip_trunk_id', other.trunk.id], ['sip_trunk_id', MISSING], ['sip_trunk_id', 'x'], ['sip_trunk_id', null],
      ['destination_sip_uri', 'sip:b@pbx.example.com'], ['destination_sip_uri', 'sip:'], ['destination_sip_uri', 'http://x'],
      ['destination_sip_uri', 'sip:a@-bad'], ['destination_sip_uri', null], ['widget_id', agent.id],
    );
    const body = fc.tuple(coherent, fc.option(odd, { freq: 3 })).map(([b, change]) => (change ? { ...b, [change[0]]: change[1] } : b));
    const succeeded = { post: 0, patch: 0 };
    await fc.assert(fc.asyncProperty(body, fc.boolean(), async (sent, patch) => {
      const b: Record<string, unknown> = patch ? sent : { name: 'n', condition: 'c', ...sent };
      const res = patch ? await api.patch(`${R(agent.id)}/${rule.id}`, b) : await api.post(R(agent.id), b);
      expect(res.status, res.text).toBeLessThan(500);
      if (res.status >= 300) {
        expect(res.status, res.text).toBe(400);
        expect(res.body.errors.length).toBeGreaterThan(0);
        return;
      }
      succeeded[patch ? 'patch' : 'post'] += 1;
      const r = res.body;
      expect((await api.get(`${R(agent.id)}/${r.id}`)).body).toEqual(r);
      expect(r.destination_phone !== null || (r.transfer_type === 'sip_refer' && r.destination_sip_uri !== null)).toBe(true);
      expect(r.transfer_type === 'sip_refer' ? r.sip_trunk_id === trunk.id : r.sip_trunk_id === null && r.destination_sip_uri === null).toBe(true);
      if (r.transfer_type !== 'warm') expect(r.warm_brief).toBeNull();
      for (const [key, sent] of Object.entries(b)) expect(r[key], key).toEqual(sent);
    }), { numRuns: 200 });
    expect(succeeded.post).toBeGreaterThan(5);
    expect(succeeded.patch).toBeGreaterThan(5);
  });
});
