import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from './helpers.ts';
import { keyWith, newAgent, orgWithAgent, type Api } from './support/orgs.ts';
import { deleteEmailInboxesOfAgent, findEmailInbox, insertEmailInbox, updateEmailInbox } from '../src/db/email-inboxes.ts';
import { newId } from '../src/ids.ts';

// No worker: an agent DELETE starts its purge workflow, which no one runs, so the agent row stays
// marked deleted (the state between the DELETE and the purge).
let svc: TestService;
beforeAll(async () => { svc = await startTestService({}, { worker: false }); });
afterAll(async () => { await svc?.stop(); });

const EI = '/api/v1/rest/email-inboxes';
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** An address no other test (or run against the same database) uses. */
const unique = (local = 'support') => `${local}-${randomBytes(5).toString('hex')}@example.com`;

async function createInbox(api: Api, widgetId: string, body: Record<string, unknown> = {}) {
  const res = await api.post(EI, { widget_id: widgetId, address: unique(), sender_name: 'Support', ...body });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; widget_id: string; address: string; sender_name: string; created_at: string; updated_at: string };
}

async function invalid(res: Promise<{ status: number; body: any; text: string }>) {
  const r = await res;
  expect(r.status, r.text).toBe(400);
  expect(r.body.code).toBe('validation_error');
  return r.body.errors[0] as { field: string; code: string };
}

async function taken(res: Promise<{ status: number; body: any; text: string }>) {
  const r = await res;
  expect(r.status, r.text).toBe(409);
  expect(r.body).toMatchObject({ code: 'email_address_taken', title: 'Email address already in use', type: 'https://docs.agents.dev/errors/email_address_taken' });
  return r;
}

describe('email inboxes', () => {
  it('creates with Location, trims and lower-cases the address, reads it back', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const address = unique('Sales');
    const res = await api.post(EI, { widget_id: agent.id, address: `  ${address.toUpperCase()}\t`, sender_name: 'Acme Sales' });
    expect(res.status, res.text).toBe(201);
    expect(res.headers.get('location')).toBe(`${EI}/${res.body.id}`);
    expect(Object.keys(res.body).sort()).toEqual(['address', 'created_at', 'id', 'sender_name', 'updated_at', 'widget_id']);
    expect(res.body).toMatchObject({ widget_id: agent.id, address: address.toLowerCase(), sender_name: 'Acme Sales' });
    expect(res.body.created_at).toMatch(ISO_MS);
    expect(res.body.updated_at).toMatch(ISO_MS);
    const one = await api.get(`${EI}/${res.body.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(res.body);
    const [row] = await svc.sql`select address from email_inboxes where id = ${res.body.id}`;
    expect(row!.address).toBe(address.toLowerCase());
  });

  it('validates the body: required fields, formats, lengths, unknown fields', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const ok = { widget_id: agent.id, address: unique(), sender_name: 'S' };
    for (const field of ['widget_id', 'address', 'sender_name'] as const) {
      const { [field]: _omit, ...rest } = ok;
      expect(await invalid(api.post(EI, rest))).toMatchObject({ field, code: 'required' });
    }
    for (const address of ['not-an-email', 'a@', '@example.com', 'a b@example.com', 'a@example..com', '', 'a@b@example.com', `${'x'.repeat(250)}@example.com`, 5, null]) {
      expect(await invalid(api.post(EI, { ...ok, address })), String(address)).toMatchObject({ field: 'address' });
    }
    expect(await invalid(api.post(EI, { ...ok, address: 'nope' }))).toMatchObject({ field: 'address', code: 'invalid_email' });
    for (const widget_id of ['not-a-uuid', `urn:uuid:${agent.id}`, 'wgt_abcdefghijklmnopqrstuvwx', 7, null]) {
      expect(await invalid(api.post(EI, { ...ok, widget_id })), String(widget_id)).toMatchObject({ field: 'widget_id' });
    }
    expect(await invalid(api.post(EI, { ...ok, sender_name: '' }))).toMatchObject({ field: 'sender_name', code: 'too_short' });
    expect(await invalid(api.post(EI, { ...ok, sender_name: '  ' }))).toMatchObject({ field: 'sender_name' });
    expect(await invalid(api.post(EI, { ...ok, sender_name: 'x'.repeat(201) }))).toMatchObject({ field: 'sender_name', code: 'too_long' });
    expect(await invalid(api.post(EI, { ...ok, org_id: newId() }))).toMatchObject({ field: 'org_id', code: 'unknown_field' });
    expect((await api.post(EI, { ...ok, sender_name: 'x'.repeat(200) })).status).toBe(201);
  });

  it('refuses a widget_id that is not a live agent of the organization: 400 on widget_id', async () => {
    const a = await orgWithAgent(svc);
    const b = await orgWithAgent(svc);
    for (const widget_id of [b.agent.id, newId()]) {
      expect(await invalid(a.api.post(EI, { widget_id, address: unique(), sender_name: 'S' }))).toMatchObject({ field: 'widget_id', code: 'unknown_agent' });
    }
    const deleted = await newAgent(a.api, 'Going away');
    expect((await a.api.delete(`/api/v1/rest/agents/${deleted.id}`)).status).toBe(204);
    expect(await invalid(a.api.post(EI, { widget_id: deleted.id, address: unique(), sender_name: 'S' }))).toMatchObject({ field: 'widget_id', code: 'unknown_agent' });
    // The refused address was not kept.
    const address = unique();
    expect((await a.api.post(EI, { widget_id: b.agent.id, address, sender_name: 'S' })).status).toBe(400);
    expect((await b.api.post(EI, { widget_id: b.agent.id, address, sender_name: 'S' })).status).toBe(201);
    expect((await a.api.get(EI)).body.total).toBe(0);
  });

  it('holds an address once across the whole service, case-insensitively (409 email_address_taken)', async () => {
    const a = await orgWithAgent(svc);
    const b = await orgWithAgent(svc);
    const address = unique('Help');
    const first = await createInbox(a.api, a.agent.id, { address });
    for (const again of [address, address.toUpperCase(), ` ${address.toLowerCase()} `]) {
      const res = await taken(b.api.post(EI, { widget_id: b.agent.id, address: again, sender_name: 'B' }));
      // Never says who holds it.
      expect(res.text).not.toContain(a.orgId);
      expect(res.text).not.toContain(first.id);
      expect(res.text).not.toContain(a.agent.id);
      await taken(a.api.post(EI, { widget_id: a.agent.id, address: again, sender_name: 'A again' }));
    }
    // PATCH onto a used address is refused too, and changes nothing.
    const other = await createInbox(b.api, b.agent.id);
    await taken(b.api.patch(`${EI}/${other.id}`, { address: address.toUpperCase(), sender_name: 'Changed' }));
    expect((await b.api.get(`${EI}/${other.id}`)).body).toEqual(other);
    // Its own address (any case) is no conflict.
    const self = await b.api.patch(`${EI}/${other.id}`, { address: other.address.toUpperCase() });
    expect(self.status).toBe(200);
    expect(self.body.address).toBe(other.address);
    // Deleting frees the address at once.
    expect((await a.api.delete(`${EI}/${first.id}`)).status).toBe(204);
    const reused = await b.api.post(EI, { widget_id: b.agent.id, address, sender_name: 'B' });
    expect(reused.status).toBe(201);
    expect(reused.body.address).toBe(address.toLowerCase());
  });

  it('refuses concurrent creates of one address but one (the unique index decides)', async () => {
    const orgs = await Promise.all([orgWithAgent(svc), orgWithAgent(svc), orgWithAgent(svc), orgWithAgent(svc)]);
    const address = unique('race');
    const results = await Promise.all(orgs.map((o) => o.api.post(EI, { widget_id: o.agent.id, address, sender_name: 'R' })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
    const [count] = await svc.sql`select count(*)::int as n from email_inboxes where lower(address) = ${address}`;
    expect(count!.n).toBe(1);
  });

  it('patches any subset; {} changes nothing; widget_id moves the inbox within the organization only', async () => {
    const a = await orgWithAgent(svc);
    const b = await orgWithAgent(svc);
    const second = await newAgent(a.api, 'Second');
    const inbox = await createInbox(a.api, a.agent.id, { sender_name: 'Old name' });
    const same = await a.api.patch(`${EI}/${inbox.id}`, {});
    expect(same.status).toBe(200);
    expect(same.body).toEqual(inbox);

    const renamed = await a.api.patch(`${EI}/${inbox.id}`, { sender_name: 'New name' });
    expect(renamed.body).toMatchObject({ ...inbox, sender_name: 'New name', updated_at: expect.stringMatching(ISO_MS) });
    const newAddress = unique('Moved');
    const readdressed = await a.api.patch(`${EI}/${inbox.id}`, { address: ` ${newAddress} ` });
    expect(readdressed.body).toMatchObject({ address: newAddress.toLowerCase(), sender_name: 'New name', widget_id: a.agent.id });
    const moved = await a.api.patch(`${EI}/${inbox.id}`, { widget_id: second.id });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ widget_id: second.id, address: newAddress.toLowerCase(), sender_name: 'New name', created_at: inbox.created_at });
    expect((await a.api.get(`${EI}?widget_id=${second.id}`)).body.data.map((i: { id: string }) => i.id)).toEqual([inbox.id]);
    expect((await a.api.get(`${EI}?widget_id=${a.agent.id}`)).body.total).toBe(0);

    // Another organization's agent, an unknown one and a deleted one are refused on widget_id; nothing changes.
    const deleted = await newAgent(a.api, 'Deleted');
    await a.api.delete(`/api/v1/rest/agents/${deleted.id}`);
    for (const widget_id of [b.agent.id, newId(), deleted.id]) {
      expect(await invalid(a.api.patch(`${EI}/${inbox.id}`, { widget_id, sender_name: 'Nope' }))).toMatchObject({ field: 'widget_id', code: 'unknown_agent' });
    }
    // 400 before 404: an unknown widget_id on an unknown inbox is still 400.
    expect(await invalid(a.api.patch(`${EI}/${newId()}`, { widget_id: b.agent.id }))).toMatchObject({ field: 'widget_id' });
    expect((await a.api.get(`${EI}/${inbox.id}`)).body).toEqual(moved.body);

    for (const body of [{ address: 'bad' }, { sender_name: '' }, { widget_id: 'x' }, { id: newId() }, { address: null }]) {
      expect(await invalid(a.api.patch(`${EI}/${inbox.id}`, body)), JSON.stringify(body)).toMatchObject({ field: Object.keys(body)[0] });
    }
  });

  it('lists newest first, filters by widget_id, and bounds limit/offset', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const other = await newAgent(api, 'Other');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await createInbox(api, agent.id)).id);
    const otherInbox = await createInbox(api, other.id);
    const all = await api.get(EI);
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ total: 4, limit: 50, offset: 0 });
    expect(all.body.data.map((i: { id: string }) => i.id)).toEqual([otherInbox.id, ...[...ids].reverse()]);
    const mine = await api.get(`${EI}?widget_id=${agent.id}&limit=2&offset=1`);
    expect(mine.body).toMatchObject({ total: 3, limit: 2, offset: 1 });
    expect(mine.body.data.map((i: { id: string }) => i.id)).toEqual([ids[1], ids[0]]);
    expect((await api.get(`${EI}?widget_id=${other.id}`)).body).toMatchObject({ total: 1, data: [otherInbox] });
    expect((await api.get(`${EI}?widget_id=${newId()}`)).body).toMatchObject({ total: 0, data: [] });
    for (const q of ['limit=0', 'limit=101', 'offset=-1', 'limit=1.5', 'widget_id=nope', `widget_id=${agent.id}&widget_id=${other.id}`, 'status=active']) {
      const field = q.split('=')[0];
      expect(await invalid(api.get(`${EI}?${q}`)), q).toMatchObject({ field });
    }
    expect((await api.get(`${EI}?limit=100`)).body.limit).toBe(100);
    expect((await api.get(`${EI}?limit=1`)).body.data).toHaveLength(1);
  });

  it('answers 404 for unknown, malformed and other organizations\' ids; deletes with 204', async () => {
    const a = await orgWithAgent(svc);
    const b = await orgWithAgent(svc);
    const inbox = await createInbox(a.api, a.agent.id);
    for (const res of [
      await b.api.get(`${EI}/${inbox.id}`), await b.api.patch(`${EI}/${inbox.id}`, { sender_name: 'x' }), await b.api.patch(`${EI}/${inbox.id}`, {}),
      await b.api.patch(`${EI}/${inbox.id}`, { widget_id: b.agent.id }), await b.api.delete(`${EI}/${inbox.id}`),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
    expect((await b.api.get(EI)).body.total).toBe(0);
    expect((await b.api.get(`${EI}?widget_id=${a.agent.id}`)).body.total).toBe(0);
    for (const bad of [newId(), 'nope', `urn:uuid:${inbox.id}`, inbox.id.toUpperCase().replace(/-/g, '')]) {
      for (const res of [await a.api.get(`${EI}/${bad}`), await a.api.patch(`${EI}/${bad}`, { sender_name: 'x' }), await a.api.delete(`${EI}/${bad}`)]) {
        expect(res.status, bad).toBe(404);
      }
    }
    expect((await a.api.get(`${EI}/${inbox.id}`)).body).toEqual(inbox);
    expect((await a.api.delete(`${EI}/${inbox.id}`)).status).toBe(204);
    expect((await a.api.get(`${EI}/${inbox.id}`)).status).toBe(404);
    expect((await a.api.delete(`${EI}/${inbox.id}`)).status).toBe(404);
  });

  it('hides the inboxes of a deleted agent (lists, GET, PATCH, DELETE) and the purge removes them', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const keeper = await newAgent(api, 'Keeper');
    const inbox = await createInbox(api, agent.id);
    const kept = await createInbox(api, keeper.id);
    expect((await api.delete(`/api/v1/rest/agents/${agent.id}`)).status).toBe(204);
    for (const res of [
      await api.get(`${EI}/${inbox.id}`), await api.patch(`${EI}/${inbox.id}`, { sender_name: 'x' }), await api.patch(`${EI}/${inbox.id}`, { widget_id: keeper.id }),
      await api.delete(`${EI}/${inbox.id}`),
    ]) expect(res.status).toBe(404);
    expect((await api.get(EI)).body).toMatchObject({ total: 1, data: [kept] });
    expect((await api.get(`${EI}?widget_id=${agent.id}`)).body.total).toBe(0);
    // The purge deletes the agent row; its inboxes go with it.
    await svc.sql`delete from agents where id = ${agent.id}`;
    expect(await svc.sql`select 1 from email_inboxes where id = ${inbox.id}`).toHaveLength(0);
    expect((await api.get(`${EI}/${kept.id}`)).status).toBe(200);
  });

  it('deleteEmailInboxesOfAgent frees a deleted agent\'s addresses at once', async () => {
    const a = await orgWithAgent(svc);
    const b = await orgWithAgent(svc);
    const first = await createInbox(a.api, a.agent.id);
    const second = await createInbox(a.api, a.agent.id);
    const other = await createInbox(a.api, (await newAgent(a.api, 'Other')).id);
    const removed = await svc.sql.begin(async (tx) => {
      await tx`update agents set deleted_at = now() where id = ${a.agent.id}`;
      return deleteEmailInboxesOfAgent(tx, a.agent.id);
    });
    expect(removed).toBe(2);
    for (const { address } of [first, second]) expect((await b.api.post(EI, { widget_id: b.agent.id, address, sender_name: 'B' })).status).toBe(201);
    expect((await a.api.get(`${EI}/${other.id}`)).status).toBe(200);
  });

  it('repository: refusals are values, and a refused address leaves the caller\'s transaction usable', async () => {
    const a = await orgWithAgent(svc);
    const b = await orgWithAgent(svc);
    const held = await createInbox(b.api, b.agent.id);
    const mine = await createInbox(a.api, a.agent.id);
    expect(await insertEmailInbox(svc.sql, a.orgId, { widget_id: b.agent.id, address: unique(), sender_name: 'x' })).toBe('unknown_agent');
    expect(await insertEmailInbox(svc.sql, a.orgId, { widget_id: a.agent.id, address: held.address.toUpperCase(), sender_name: 'x' })).toBe('address_taken');
    const inTx = await svc.sql.begin(async (tx) => {
      const refused = await updateEmailInbox(tx, a.orgId, mine.id, { address: held.address });
      const renamed = await updateEmailInbox(tx, a.orgId, mine.id, { sender_name: 'Still works' });
      return { refused, renamed };
    });
    expect(inTx.refused).toBe('address_taken');
    expect(inTx.renamed).toMatchObject({ sender_name: 'Still works', address: mine.address });
    expect(await findEmailInbox(svc.sql, a.orgId, mine.id)).toMatchObject({ sender_name: 'Still works' });
    expect(await updateEmailInbox(svc.sql, a.orgId, newId(), { sender_name: 'x' })).toBeNull();
  });

  it('checks permissions: agents.read to read, agents.write to change; 403 before 400', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const inbox = await createInbox(api, agent.id);
    const reader = (await keyWith(svc, api, ['agents.read', 'voice_profiles.write'])).api;
    const writer = (await keyWith(svc, api, ['agents.write'])).api;
    expect((await reader.get(EI)).status).toBe(200);
    expect((await reader.get(`${EI}/${inbox.id}`)).status).toBe(200);
    for (const res of [
      await reader.post(EI, { widget_id: agent.id, address: unique(), sender_name: 'x' }), await reader.patch(`${EI}/${inbox.id}`, { sender_name: 'x' }),
      await reader.delete(`${EI}/${inbox.id}`), await reader.post(EI, { address: 5 }),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'missing_permission', required_permission: 'agents.write' });
    }
    for (const res of [await writer.get(EI), await writer.get(`${EI}/${inbox.id}`), await writer.get(`${EI}?limit=0`)]) {
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'missing_permission', required_permission: 'agents.read' });
    }
    const created = await writer.post(EI, { widget_id: agent.id, address: unique(), sender_name: 'W' });
    expect(created.status).toBe(201);
    expect((await writer.patch(`${EI}/${created.body.id}`, { sender_name: 'W2' })).body.sender_name).toBe('W2');
    expect((await writer.delete(`${EI}/${created.body.id}`)).status).toBe(204);
    expect((await call(svc.url, 'GET', EI)).status).toBe(401);
  });

  it('is described in the OpenAPI document with every field and type', async () => {
    const doc = (await call(svc.url, 'GET', '/api/v1/openapi.json')).body;
    expect(Object.keys(doc.paths[EI]).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths[`${EI}/{id}`]).sort()).toEqual(['delete', 'get', 'patch']);
    expect(doc.paths[EI].post['x-permissions']).toEqual(['agents.write']);
    expect(doc.paths[EI].get['x-permissions']).toEqual(['agents.read']);
    expect(doc.paths[EI].get.parameters.map((p: { name: string }) => p.name)).toEqual(['widget_id', 'limit', 'offset']);
    const { EmailInbox, EmailInboxCreate, EmailInboxPatch } = doc.components.schemas;
    expect(Object.keys(EmailInbox.properties).sort()).toEqual(['address', 'created_at', 'id', 'sender_name', 'updated_at', 'widget_id']);
    expect(EmailInboxCreate.required).toEqual(['widget_id', 'address', 'sender_name']);
    expect(EmailInboxCreate.additionalProperties).toBe(false);
    expect(EmailInboxPatch.additionalProperties).toBe(false);
    expect(EmailInboxPatch.required).toBeUndefined();
    expect(EmailInboxCreate.properties).toMatchObject({
      widget_id: { type: 'string', pattern: expect.any(String) },
      address: { type: 'string', maxLength: 254, pattern: expect.any(String) },
      sender_name: { type: 'string', minLength: 1, maxLength: 200 },
    });
    expect(doc.paths[`${EI}/{id}`].patch.responses['409']).toBeDefined();
  });
});
