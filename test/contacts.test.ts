import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, client, startTestService, type TestService } from './helpers.ts';
import { newOrg, type Api } from './support/orgs.ts';
import {
  contactFacts, matchContact, mergeContactFacts, normalizeEmail, normalizePhone, recordContactConversation,
} from '../src/db/contacts.ts';
import { newId } from '../src/ids.ts';

let svc: TestService;
beforeAll(async () => { svc = await startTestService({}, { worker: false }); });
afterAll(async () => { await svc?.stop(); });

const K = '/api/v1/rest/contacts';
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const KEYS = ['conversation_count', 'created_at', 'do_not_call', 'email_lower', 'facts', 'first_name', 'first_seen_at', 'id', 'last_name',
  'last_seen_at', 'phone_e164', 'updated_at', 'visitor_ids'];

/** A phone number no other test uses: +1 and 10 random digits. */
const phone = () => `+1${(BigInt(`0x${randomBytes(6).toString('hex')}`) % 9_000_000_000n + 1_000_000_000n).toString()}`;
const email = (local = 'ada') => `${local}-${randomBytes(4).toString('hex')}@example.com`;

async function create(api: Api, body: Record<string, unknown>) {
  const res = await api.post(K, body);
  expect(res.status, res.text).toBe(201);
  return res.body as Record<string, any> & { id: string };
}

async function invalid(res: Promise<{ status: number; body: any; text: string }>, field?: string) {
  const r = await res;
  expect(r.status, r.text).toBe(400);
  expect(r.body.code).toBe('validation_error');
  if (field) expect(r.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  return r.body.errors[0] as { field: string; code: string };
}

async function conflict(res: Promise<{ status: number; body: any; text: string }>, contactId: string) {
  const r = await res;
  expect(r.status, r.text).toBe(409);
  expect(r.body).toMatchObject({ code: 'contact_exists', title: 'Contact already exists', contact_id: contactId });
}

async function conversation(orgId: string, agentId: string): Promise<string> {
  const id = newId();
  await svc.sql`insert into conversations (id, org_id, agent_id, surface) values (${id}, ${orgId}, ${agentId}, 'web')`;
  return id;
}

async function agentOf(api: Api): Promise<string> {
  const res = await api.post('/api/v1/rest/agents', { name: 'Desk' });
  expect(res.status).toBe(201);
  return res.body.id;
}

describe('contacts API', () => {
  it('creates with Location, stores the email lower-case, reads, updates and deletes', async () => {
    const { api } = await newOrg(svc);
    const p = phone();
    const e = email('Ada.Lovelace');
    const res = await api.post(K, { phone_e164: p, email_lower: e.toUpperCase(), first_name: 'Ada', last_name: 'Lovelace', facts: { plan: 'pro' } });
    expect(res.status, res.text).toBe(201);
    expect(res.headers.get('location')).toBe(`${K}/${res.body.id}`);
    expect(Object.keys(res.body).sort()).toEqual(KEYS);
    expect(res.body).toMatchObject({
      phone_e164: p, email_lower: e.toLowerCase(), first_name: 'Ada', last_name: 'Lovelace', facts: { plan: 'pro' },
      do_not_call: false, conversation_count: 0, first_seen_at: null, last_seen_at: null, visitor_ids: [],
    });
    expect(res.body.created_at).toMatch(ISO_MS);
    const id = res.body.id as string;
    expect((await api.get(`${K}/${id}`)).body).toEqual(res.body);

    const patched = await api.patch(`${K}/${id}`, { do_not_call: true, first_name: null, facts: { plan: 'team', seats: 5 } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ do_not_call: true, first_name: null, last_name: 'Lovelace', facts: { plan: 'team', seats: 5 } });
    expect(Date.parse(patched.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(res.body.updated_at));
    // Facts merge key by key; null removes one.
    const merged = await api.patch(`${K}/${id}`, { facts: { seats: null, region: 'eu' } });
    expect(merged.body.facts).toEqual({ plan: 'team', region: 'eu' });
    const unchanged = await api.patch(`${K}/${id}`, {});
    expect(unchanged.status).toBe(200);
    expect(unchanged.body).toEqual(merged.body);
    const moved = await api.patch(`${K}/${id}`, { phone_e164: null, email_lower: 'NEW-' + e });
    expect(moved.body).toMatchObject({ phone_e164: null, email_lower: `new-${e.toLowerCase()}` });

    expect((await api.delete(`${K}/${id}`)).status).toBe(204);
    expect((await api.get(`${K}/${id}`)).status).toBe(404);
    expect((await api.delete(`${K}/${id}`)).status).toBe(404);
    expect((await api.patch(`${K}/${id}`, { first_name: 'x' })).status).toBe(404);
  });

  it('needs a phone or an email, valid ones, and keeps one of them', async () => {
    const { api } = await orgWithContact();
    expect((await invalid(api.post(K, { first_name: 'Nobody' }), 'phone_e164')).code).toBe('contact_identity_required');
    await invalid(api.post(K, {}));
    expect((await invalid(api.post(K, { phone_e164: '4155550123' }), 'phone_e164')).code).toBe('invalid_e164');
    expect((await invalid(api.post(K, { email_lower: 'not-an-email' }), 'email_lower')).code).toBe('invalid_email');
    await invalid(api.post(K, { phone_e164: phone(), extra: 1 }));
    await invalid(api.post(K, { phone_e164: phone(), do_not_call: 'yes' }), 'do_not_call');
    await invalid(api.post(K, { phone_e164: phone(), first_name: 'x'.repeat(201) }), 'first_name');
    await invalid(api.post(K, { phone_e164: phone(), facts: 'x' }), 'facts');

    const onlyPhone = await create(api, { phone_e164: phone() });
    expect((await invalid(api.patch(`${K}/${onlyPhone.id}`, { phone_e164: null }), 'phone_e164')).code).toBe('contact_identity_required');
    await invalid(api.patch(`${K}/${onlyPhone.id}`, { phone_e164: null, email_lower: null }));
    // Invalid whatever the contact: 400 even for one that does not exist (400 before 404).
    await invalid(api.patch(`${K}/${newId()}`, { phone_e164: null, email_lower: null }));
    const swapped = await api.patch(`${K}/${onlyPhone.id}`, { phone_e164: null, email_lower: email() });
    expect(swapped.status, swapped.text).toBe(200);
  });

  it('keeps phone and email unique in an organization: 409 contact_exists with the existing id', async () => {
    const { api, contact } = await orgWithContact();
    await conflict(api.post(K, { phone_e164: contact.phone_e164 }), contact.id);
    await conflict(api.post(K, { email_lower: contact.email_lower.toUpperCase(), phone_e164: phone() }), contact.id);
    const other = await create(api, { phone_e164: phone() });
    await conflict(api.patch(`${K}/${other.id}`, { email_lower: contact.email_lower }), contact.id);
    await conflict(api.patch(`${K}/${other.id}`, { phone_e164: contact.phone_e164 }), contact.id);
    // Setting a contact's own values again is no conflict.
    expect((await api.patch(`${K}/${contact.id}`, { phone_e164: contact.phone_e164, email_lower: contact.email_lower })).status).toBe(200);
    // Another organization may know the same person.
    const elsewhere = await newOrg(svc);
    await create(elsewhere.api, { phone_e164: contact.phone_e164, email_lower: contact.email_lower });
    // Two concurrent creates of one person: one contact.
    const p = phone();
    const results = await Promise.all([1, 2, 3].map(() => api.post(K, { phone_e164: p })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409]);
  });

  it('stores a lone surrogate in facts (a value or a key) as U+FFFD, never a 500', async () => {
    const { api } = await newOrg(svc);
    const c = await create(api, { email_lower: email() });
    // JSON.stringify writes a lone surrogate as the escape \ud800, which jsonb refuses as is.
    const res = await api.patch(`${K}/${c.id}`, { facts: { a: 'x\ud800y', ['k\udc00']: '\udbff' } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.facts).toEqual({ a: 'x\ufffdy', 'k\ufffd': '\ufffd' });
    expect((await api.get(`${K}/${c.id}`)).body.facts).toEqual(res.body.facts);
  });

  it('searches names, phone and email, partially and in any case', async () => {
    const { api } = await newOrg(svc);
    const ada = await create(api, { phone_e164: '+14155550123', email_lower: 'ada@analytical.example', first_name: 'Ada', last_name: 'Lovelace' });
    const grace = await create(api, { phone_e164: '+442071838750', email_lower: 'grace@navy.example', first_name: 'Grace', last_name: 'Hopper' });
    const pct = await create(api, { email_lower: 'percent_50@example.com', first_name: '100%' });
    const search = async (q: string) => {
      const res = await api.get(`${K}?search=${encodeURIComponent(q)}`);
      expect(res.status, res.text).toBe(200);
      expect(res.body.total).toBe(res.body.data.length);
      return res.body.data.map((c: { id: string }) => c.id);
    };
    expect(await search('lovel')).toEqual([ada.id]);
    expect(await search('GRACE')).toEqual([grace.id]);
    expect(await search('ada lovelace')).toEqual([ada.id]);
    expect(await search('NAVY.exa')).toEqual([grace.id]);
    expect(await search('555012')).toEqual([ada.id]);
    expect(await search('+44 20 7183')).toEqual([grace.id]);
    expect(await search('(415) 555-0123')).toEqual([ada.id]);
    expect(await search('%')).toEqual([pct.id]);
    expect(await search('t_5')).toEqual([pct.id]);
    expect(await search('zzz')).toEqual([]);
    expect(await search('')).toEqual([pct.id, grace.id, ada.id]);
    const page = await api.get(`${K}?limit=1&offset=1`);
    expect(page.body).toMatchObject({ total: 3, limit: 1, offset: 1 });
    expect(page.body.data.map((c: { id: string }) => c.id)).toEqual([grace.id]);
  });

  it('uses the trigram index for search when pg_trgm is available', async () => {
    const [ext] = await svc.sql`select 1 from pg_extension where extname = 'pg_trgm'`;
    const [index] = await svc.sql`select 1 from pg_indexes where indexname = 'contacts_search'`;
    expect(Boolean(index)).toBe(Boolean(ext));
  });

  it('refuses bad list parameters with 400', async () => {
    const { api } = await newOrg(svc);
    for (const q of ['limit=0', 'limit=101', 'offset=-1', `search=${'a'.repeat(201)}`, 'search=a&search=b', 'sort=name']) {
      expect((await api.get(`${K}?${q}`)).status, q).toBe(400);
    }
  });

  it('seals organizations: another one\'s contact is 404 and never listed', async () => {
    const mine = await orgWithContact();
    const { api } = await newOrg(svc);
    for (const res of [await api.get(`${K}/${mine.contact.id}`), await api.patch(`${K}/${mine.contact.id}`, { first_name: 'x' }), await api.delete(`${K}/${mine.contact.id}`)]) {
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
    expect((await api.get(K)).body).toMatchObject({ data: [], total: 0 });
    expect((await api.get(`${K}/not-a-uuid`)).status).toBe(404);
    expect((await mine.api.get(`${K}/${mine.contact.id}`)).status).toBe(200);
  });

  it('reads with campaigns.read, writes with campaigns.write', async () => {
    const { api, contact } = await orgWithContact();
    const key = async (permissions: string[]) => client(svc.url, (await api.post('/api/v1/rest/api-keys', { name: 'k', permissions })).body.token);
    const reader = await key(['campaigns.read']);
    const writer = await key(['campaigns.write']);
    const none = await key(['conversations.read']);
    expect((await reader.get(K)).status).toBe(200);
    expect((await reader.get(`${K}/${contact.id}`)).status).toBe(200);
    for (const res of [await reader.post(K, { phone_e164: phone() }), await reader.patch(`${K}/${contact.id}`, { do_not_call: true }),
      await reader.delete(`${K}/${contact.id}`)]) {
      expect(res.body).toMatchObject({ code: 'missing_permission', required_permission: 'campaigns.write' });
    }
    for (const res of [await none.get(K), await writer.get(`${K}/${contact.id}`)]) {
      expect(res.status).toBe(403);
      expect(res.body.required_permission).toBe('campaigns.read');
    }
    // 403 before 400.
    expect((await reader.post(K, {})).status).toBe(403);
    expect((await client(svc.url).get(K)).status).toBe(401);
    expect((await writer.patch(`${K}/${contact.id}`, { do_not_call: true })).status).toBe(200);
  });

  it('is documented in the OpenAPI document', async () => {
    const doc = (await call(svc.url, 'GET', '/api/v1/openapi.json')).body;
    expect(Object.keys(doc.paths[K]).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths[`${K}/{id}`]).sort()).toEqual(['delete', 'get', 'patch']);
    expect(doc.paths[K].get['x-permissions']).toEqual(['campaigns.read']);
    expect(doc.paths[K].post['x-permissions']).toEqual(['campaigns.write']);
    expect(doc.paths[K].get.parameters.map((p: { name: string }) => p.name)).toEqual(['search', 'limit', 'offset']);
    expect(Object.keys(doc.components.schemas.Contact.properties).sort()).toEqual(KEYS);
    expect(Object.keys(doc.components.schemas.ContactCreate.properties).sort())
      .toEqual(['do_not_call', 'email_lower', 'facts', 'first_name', 'last_name', 'phone_e164']);
  });

  it('unlinks its conversations when a contact is deleted', async () => {
    const { api, orgId, contact } = await orgWithContact();
    const conv = await conversation(orgId, await agentOf(api));
    await recordContactConversation(svc.sql, orgId, { conversationId: conv, phone: contact.phone_e164, at: new Date() });
    expect((await svc.sql`select contact_id from conversations where id = ${conv}`)[0]!.contact_id).toBe(contact.id);
    expect((await api.delete(`${K}/${contact.id}`)).status).toBe(204);
    expect((await svc.sql`select contact_id from conversations where id = ${conv}`)[0]!.contact_id).toBeNull();
    expect((await api.get(`/api/v1/rest/conversations/${conv}`)).body.contact_id).toBeNull();
  });
});

async function orgWithContact() {
  const { api, orgId } = await newOrg(svc);
  const contact = await create(api, { phone_e164: phone(), email_lower: email(), first_name: 'Ada' });
  return { api, orgId, contact };
}

describe('matching conversations to contacts', () => {
  it('normalizes phone numbers and email addresses', () => {
    expect(normalizePhone(' +1 (415) 555-0123 ')).toBe('+14155550123');
    expect(normalizePhone('0044 20 7183 8750')).toBe('+442071838750');
    expect(normalizePhone('415 555 0123')).toBeNull();
    expect(normalizePhone('')).toBeNull();
    expect(normalizeEmail(' Ada@Example.COM ')).toBe('ada@example.com');
    expect(normalizeEmail('ada at example')).toBeNull();
  });

  it('matches on phone, email or a known visitor id, phone first', async () => {
    const { api, orgId } = await newOrg(svc);
    const byPhone = await create(api, { phone_e164: phone() });
    const byEmail = await create(api, { email_lower: email() });
    expect((await matchContact(svc.sql, orgId, { phone: byPhone.phone_e164 }))?.id).toBe(byPhone.id);
    expect((await matchContact(svc.sql, orgId, { email: byEmail.email_lower.toUpperCase() }))?.id).toBe(byEmail.id);
    expect((await matchContact(svc.sql, orgId, { phone: byPhone.phone_e164, email: byEmail.email_lower }))?.id).toBe(byPhone.id);
    expect((await matchContact(svc.sql, orgId, { phone: phone(), email: byEmail.email_lower }))?.id).toBe(byEmail.id);
    expect(await matchContact(svc.sql, orgId, { phone: phone() })).toBeNull();
    expect(await matchContact(svc.sql, orgId, {})).toBeNull();
    expect(await matchContact(svc.sql, (await newOrg(svc)).orgId, { phone: byPhone.phone_e164 })).toBeNull();
    const conv = await conversation(orgId, await agentOf(api));
    await recordContactConversation(svc.sql, orgId, { conversationId: conv, email: byEmail.email_lower, visitorId: 'v_known', at: new Date() });
    expect((await matchContact(svc.sql, orgId, { visitorId: 'v_known' }))?.id).toBe(byEmail.id);
    // The same browser giving another email is another person: no match, and none of their facts.
    expect(await matchContact(svc.sql, orgId, { visitorId: 'v_known', email: email() })).toBeNull();
    expect((await matchContact(svc.sql, orgId, { visitorId: 'v_known', phone: phone() }))?.id).toBe(byEmail.id);
  });

  it('records conversations: creates a contact from a phone or email, links, counts once, widens first/last seen', async () => {
    const { api, orgId } = await newOrg(svc);
    const agentId = await agentOf(api);
    const [c1, c2, c3] = [await conversation(orgId, agentId), await conversation(orgId, agentId), await conversation(orgId, agentId)];
    const p = phone();
    const t1 = new Date('2026-03-10T10:00:00.000Z');
    const first = await recordContactConversation(svc.sql, orgId, { conversationId: c1, phone: p.replace(/(\d{3})(\d{3})$/, ' $1-$2'), visitorId: 'v_1', at: t1 });
    expect(first).toMatchObject({ phone_e164: p, email_lower: null, conversation_count: 1, visitor_ids: ['v_1'],
      first_seen_at: t1.toISOString(), last_seen_at: t1.toISOString() });
    // Again for the same conversation: nothing more is counted.
    const again = await recordContactConversation(svc.sql, orgId, { conversationId: c1, phone: p, at: t1 });
    expect(again).toMatchObject({ id: first!.id, conversation_count: 1 });
    // The same person on the web, known by the visitor id only, then by email too (filled in).
    const t0 = new Date('2026-03-01T10:00:00.000Z');
    const e = email();
    const second = await recordContactConversation(svc.sql, orgId, { conversationId: c2, visitorId: 'v_1', email: e, at: t0 });
    expect(second).toMatchObject({ id: first!.id, email_lower: e, conversation_count: 2, first_seen_at: t0.toISOString(), last_seen_at: t1.toISOString() });
    const t2 = new Date('2026-03-20T10:00:00.000Z');
    const third = await recordContactConversation(svc.sql, orgId, { conversationId: c3, email: e.toUpperCase(), visitorId: 'v_2', at: t2 });
    expect(third).toMatchObject({ id: first!.id, conversation_count: 3, last_seen_at: t2.toISOString(), visitor_ids: ['v_1', 'v_2'] });
    const linked = await svc.sql<{ contact_id: string }[]>`select contact_id from conversations where id in (${c1}, ${c2}, ${c3})`;
    expect(linked.map((r) => r.contact_id)).toEqual([first!.id, first!.id, first!.id]);
    expect((await api.get(`${K}/${first!.id}`)).body.conversation_count).toBe(3);
  });

  it('makes no contact from a visitor id alone, and moves a visitor id to the contact it last matched', async () => {
    const { api, orgId } = await newOrg(svc);
    const agentId = await agentOf(api);
    expect(await recordContactConversation(svc.sql, orgId, { conversationId: await conversation(orgId, agentId), visitorId: 'v_anon', at: new Date() })).toBeNull();
    expect(await recordContactConversation(svc.sql, orgId, { conversationId: await conversation(orgId, agentId), phone: 'not a phone', at: new Date() })).toBeNull();
    expect((await api.get(K)).body.total).toBe(0);
    const a = await recordContactConversation(svc.sql, orgId, { conversationId: await conversation(orgId, agentId), phone: phone(), visitorId: 'v_shared', at: new Date() });
    const b = await recordContactConversation(svc.sql, orgId, { conversationId: await conversation(orgId, agentId), phone: phone(), visitorId: 'v_shared', at: new Date() });
    expect(b!.visitor_ids).toEqual(['v_shared']);
    expect((await api.get(`${K}/${a!.id}`)).body.visitor_ids).toEqual([]);
    // A conversation of another organization is never linked.
    const other = await newOrg(svc);
    const foreign = await conversation(other.orgId, await agentOf(other.api));
    const c = await recordContactConversation(svc.sql, orgId, { conversationId: foreign, phone: phone(), at: new Date() });
    expect(c!.conversation_count).toBe(0);
    expect((await svc.sql`select contact_id from conversations where id = ${foreign}`)[0]!.contact_id).toBeNull();
  });

  it('one phone or one email alone: creates or finds its contact, relinks a conversation linked to another, uncounting that one', async () => {
    const { api, orgId } = await newOrg(svc);
    const conv = await conversation(orgId, await agentOf(api));
    const at = new Date('2026-04-01T10:00:00.000Z');
    const byPhone = await recordContactConversation(svc.sql, orgId, { conversationId: conv, phone: phone(), at });
    expect(byPhone).toMatchObject({ email_lower: null, conversation_count: 1, first_seen_at: at.toISOString(), last_seen_at: at.toISOString() });
    const held = await create(api, { email_lower: email() });
    const later = new Date('2026-04-02T10:00:00.000Z');
    const byEmail = await recordContactConversation(svc.sql, orgId, { conversationId: conv, email: held.email_lower.toUpperCase(), at: later });
    expect(byEmail).toMatchObject({ id: held.id, phone_e164: null, conversation_count: 1, first_seen_at: later.toISOString() });
    expect((await api.get(`${K}/${byPhone!.id}`)).body.conversation_count).toBe(0);
    // Again: linked already, nothing changes (not even its updated_at).
    const again = await recordContactConversation(svc.sql, orgId, { conversationId: conv, email: held.email_lower, at: new Date() });
    expect(again).toEqual(byEmail);
    expect((await svc.sql`select contact_id from conversations where id = ${conv}`)[0]!.contact_id).toBe(held.id);
  });

  it('does not take a phone or email another contact has when filling one in', async () => {
    const { api, orgId } = await newOrg(svc);
    const holder = await create(api, { email_lower: email() });
    const caller = await create(api, { phone_e164: phone() });
    const conv = await conversation(orgId, await agentOf(api));
    const matched = await recordContactConversation(svc.sql, orgId, { conversationId: conv, phone: caller.phone_e164, email: holder.email_lower, at: new Date() });
    expect(matched).toMatchObject({ id: caller.id, email_lower: null, conversation_count: 1 });
  });

  it('records concurrently, inside callers\' transactions too, without making the same person twice', async () => {
    const { api, orgId } = await newOrg(svc);
    const agentId = await agentOf(api);
    const p = phone();
    const convs = await Promise.all(Array.from({ length: 8 }, () => conversation(orgId, agentId)));
    const results = await Promise.all(convs.map((conversationId, i) => (i % 2
      ? svc.sql.begin((tx) => recordContactConversation(tx, orgId, { conversationId, phone: p, visitorId: `v_${i}`, at: new Date() }))
      : recordContactConversation(svc.sql, orgId, { conversationId, phone: p, at: new Date() }))));
    expect(new Set(results.map((r) => r!.id)).size).toBe(1);
    const contact = (await api.get(`${K}/${results[0]!.id}`)).body;
    expect(contact.conversation_count).toBe(8);
    expect([...contact.visitor_ids].sort()).toEqual(['v_1', 'v_3', 'v_5', 'v_7']);
    expect((await api.get(K)).body.total).toBe(1);
  });

  it('merges extracted data into facts and answers them for cross-channel memory', async () => {
    const { api, orgId } = await newOrg(svc);
    const contact = await create(api, { phone_e164: phone(), email_lower: email(), first_name: 'Ada', facts: { plan: 'pro', seats: 3 } });
    const merged = await mergeContactFacts(svc.sql, contact.id, { seats: 5, company: 'Analytical', budget: null, notes: undefined });
    expect(merged!.facts).toEqual({ plan: 'pro', seats: 5, company: 'Analytical' });
    expect((await mergeContactFacts(svc.sql, contact.id, {}))!.facts).toEqual(merged!.facts);
    expect(await mergeContactFacts(svc.sql, newId(), { a: 1 })).toBeNull();
    expect(await contactFacts(svc.sql, orgId, { email: contact.email_lower })).toEqual({ plan: 'pro', seats: 5, company: 'Analytical', first_name: 'Ada' });
    expect(await contactFacts(svc.sql, orgId, { phone: phone() })).toEqual({});
  });
});
