import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, eventually, startTestService, type TestService } from './helpers.ts';
import { keyWith, newOrg, orgWithAgent, type Api } from './support/orgs.ts';
import { expectFieldError, expectProblem } from './support/problems.ts';
import { recordFixture, replayAll } from './support/replay.ts';
import { newId } from '../src/ids.ts';

let svc: TestService;
beforeAll(async () => { svc = await startTestService({}); });
afterAll(async () => { await svc?.stop(); });

const REST = '/api/v1/rest';

async function seedConversation(orgId: string, agentId: string, startedAt: string, messages: { role: string; text: string }[], contactId: string | null = null) {
  const id = newId();
  await svc.sql`insert into conversations (id, org_id, agent_id, surface, started_at, last_activity_at, status, contact_id)
    values (${id}, ${orgId}, ${agentId}, 'web', ${startedAt}, ${startedAt}, 'ended', ${contactId})`;
  for (const m of messages) await svc.sql`insert into conversation_messages (id, conversation_id, role, text) values (${newId()}, ${id}, ${m.role}, ${m.text})`;
  return id;
}

const csvPost = (token: string, path: string, csv: string) => call(svc.url, 'POST', path, { token, body: csv, headers: { 'content-type': 'text/csv' } });
const email = (local: string) => `${local}-${newId().slice(-8)}@example.com`;

async function contact(api: Api, body: Record<string, unknown>) {
  const res = await api.post(`${REST}/contacts`, body);
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string };
}

describe('exports', () => {
  it('streams conversations as formula-safe CSV and as NDJSON, with transcripts and the list filters', async () => {
    const { api, orgId, agent } = await orgWithAgent(svc);
    const first = await seedConversation(orgId, agent.id, '2026-02-01T10:00:00.000Z', [{ role: 'visitor', text: '=HYPERLINK("http://evil")' }, { role: 'agent', text: 'Hello, "friend"' }]);
    const second = await seedConversation(orgId, agent.id, '2026-02-02T10:00:00.000Z', [{ role: 'visitor', text: 'refund please' }]);

    const csv = await api.get(`${REST}/exports/conversations?transcripts=true`);
    expect(csv.status, csv.text).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.headers.get('content-disposition')).toMatch(/^attachment; filename="conversations-\d{4}-\d{2}-\d{2}\.csv"$/);
    const lines = csv.text.split('\r\n');
    expect(lines[0]).toBe('id,widget_id,surface,is_simulated,status,started_at,ended_at,duration_seconds,page_url,intent,outcome,contact_id,labels,extracted_data,transcript');
    expect(lines[1]!.startsWith(second)).toBe(true);
    // The visitor's formula is text in the transcript cell; a cell starting with one is prefixed with '.
    expect(csv.text).toContain(`visitor: =HYPERLINK(""http://evil"")`);
    expect(csv.text).toContain('agent: Hello, ""friend""');

    const nd = await api.get(`${REST}/exports/conversations?format=ndjson&transcripts=true&q=refund`);
    expect(nd.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const records = nd.text.trim().split('\n').map((l) => JSON.parse(l));
    expect(records.map((r) => r.id)).toEqual([second]);
    expect(records[0].messages.map((m: { text: string }) => m.text)).toEqual(['refund please']);
    const plain = (await api.get(`${REST}/exports/conversations?format=ndjson`)).text.trim().split('\n').map((l) => JSON.parse(l));
    expect(plain.map((r) => r.id)).toEqual([second, first]);
    expect(plain[0].messages).toBeUndefined();
    expectFieldError(await api.get(`${REST}/exports/conversations?format=xlsx`), 'format');
  });

  it('streams contacts and data-table rows, prefixing formula text, and needs the resource\'s read permission', async () => {
    const { api, agent } = await orgWithAgent(svc);
    await contact(api, { email_lower: email('ada'), first_name: '@SUM(A1:A9)', last_name: '-2+3' });
    const rows = (await api.get(`${REST}/exports/contacts`)).text.split('\r\n');
    expect(rows[0]).toBe('id,phone_e164,email_lower,first_name,last_name,do_not_call,conversation_count,first_seen_at,last_seen_at,created_at,updated_at,visitor_ids,facts');
    expect(rows[1]).toContain(",'@SUM(A1:A9),'-2+3,false,0,");
    const table = await api.post(`${REST}/agents/${agent.id}/data-tables`, { name: 'Prices', columns: [{ name: 'item', type: 'string' }, { name: 'price', type: 'number' }] });
    expect(table.status, table.text).toBe(201);
    await api.post(`${REST}/agents/${agent.id}/data-tables/${table.body.id}/rows`, { rows: [{ item: '=cmd', price: -5 }] });
    expect((await api.get(`${REST}/agents/${agent.id}/data-tables/${table.body.id}/rows/export`)).text).toBe("item,price\r\n'=cmd,-5\r\n");
    expect((await api.get(`${REST}/agents/${agent.id}/data-tables/${table.body.id}/rows/export?format=ndjson`)).text).toBe('{"item":"=cmd","price":-5}\n');
    expectProblem(await api.get(`${REST}/agents/${agent.id}/data-tables/${newId()}/rows/export`), 404, 'not_found');
    const agentsOnly = await keyWith(svc, api, ['agents.read']);
    expectProblem(await agentsOnly.api.get(`${REST}/exports/contacts`), 403, 'missing_permission');
    expectProblem(await agentsOnly.api.post(`${REST}/exports`, { resource: 'contacts' }), 403, 'missing_permission');
  });

  it('runs a large export as a workflow that leaves a download, and replays it', async () => {
    const { api, orgId, agent } = await orgWithAgent(svc);
    for (let i = 0; i < 3; i++) await seedConversation(orgId, agent.id, `2026-03-0${i + 1}T10:00:00.000Z`, [{ role: 'visitor', text: `question ${i}` }]);
    const queued = await api.post(`${REST}/exports`, { resource: 'conversations', format: 'ndjson', transcripts: true });
    expect(queued.status, queued.text).toBe(202);
    expect(queued.body).toMatchObject({ resource: 'conversations', format: 'ndjson', status: 'queued', download_path: null });
    expect(queued.headers.get('location')).toBe(`${REST}/exports/${queued.body.id}`);
    const done = await eventually(async () => {
      const job = (await api.get(`${REST}/exports/${queued.body.id}`)).body;
      return job.status === 'succeeded' ? job : null;
    });
    expect(done).toMatchObject({ row_count: 3, download_path: `${REST}/exports/${queued.body.id}/download` });
    const file = await api.get(done.download_path);
    expect(file.status).toBe(200);
    const records = file.text.trim().split('\n').map((l) => JSON.parse(l));
    expect(records.map((r) => r.messages[0].text)).toEqual(['question 2', 'question 1', 'question 0']);
    expect(done.byte_count).toBe(Buffer.byteLength(file.text));
    expect((await api.get(`${REST}/exports`)).body.data.map((j: { id: string }) => j.id)).toEqual([queued.body.id]);
    // Another organization sees nothing of it.
    const other = await newOrg(svc);
    expectProblem(await other.api.get(`${REST}/exports/${queued.body.id}/download`), 404, 'not_found');
    expectFieldError(await api.post(`${REST}/exports`, { resource: 'data_table_rows', widget_id: agent.id, table_id: newId() }), 'table_id');

    const run = svc.temporal.workflow.getHandle(`data-export:${queued.body.id}`);
    expect(await run.result()).toBe('succeeded');
    await replayAll([{ workflowId: run.workflowId, history: await run.fetchHistory() }]);
    await recordFixture(run.workflowId, 'data-export.json');
  });
});

describe('contacts import and merge', () => {
  it('dry-runs with per-row errors and changes nothing, then imports as a workflow', async () => {
    const { api, token } = await newOrg(svc);
    const known = email('known');
    const existing = await contact(api, { email_lower: known, first_name: 'Old' });
    const fresh = email('fresh');
    const csv = ['email,phone,first_name,plan,do_not_call', `${known},,Kim,gold,`, `${fresh},+1 415 555 0199,Lea,silver,yes`,
      'not-an-email,,X,,', ',,Nobody,,', `${fresh},,Twice,,`].join('\n');
    const dry = await csvPost(token, `${REST}/contacts/import?dry_run=true`, csv);
    expect(dry.status, dry.text).toBe(200);
    expect(dry.body).toMatchObject({ dry_run: true, rows: 5, valid: 2, creates: 1, updates: 1 });
    expect(dry.body.errors.map((e: { row: number; field: string; code: string }) => [e.row, e.field, e.code]))
      .toEqual([[3, 'email', 'invalid_email'], [4, '', 'no_identity'], [5, '', 'duplicate_row']]);
    expect((await api.get(`${REST}/contacts`)).body.total).toBe(1);

    const queued = await csvPost(token, `${REST}/contacts/import`, csv);
    expect(queued.status, queued.text).toBe(202);
    expect(queued.body).toMatchObject({ status: 'queued', rows: 5 });
    const done = await eventually(async () => {
      const job = (await api.get(`${REST}/contacts/imports/${queued.body.id}`)).body;
      return job.status === 'succeeded' ? job : null;
    });
    expect(done).toMatchObject({ created: 1, updated: 1, skipped: 3 });
    expect(done.errors).toHaveLength(3);
    expect((await api.get(`${REST}/contacts/${existing.id}`)).body).toMatchObject({ first_name: 'Kim', facts: { plan: 'gold' } });
    const created = (await api.get(`${REST}/contacts?search=${encodeURIComponent(fresh)}`)).body.data[0];
    expect(created).toMatchObject({ phone_e164: '+14155550199', first_name: 'Lea', do_not_call: true, facts: { plan: 'silver' } });

    const run = svc.temporal.workflow.getHandle(`contact-import:${queued.body.id}`);
    expect(await run.result()).toBe('succeeded');
    await replayAll([{ workflowId: run.workflowId, history: await run.fetchHistory() }]);
    await recordFixture(run.workflowId, 'contact-import.json');
  });

  it('refuses a header it cannot use, and a body that is not CSV', async () => {
    const { token } = await newOrg(svc);
    const bad = await csvPost(token, `${REST}/contacts/import?dry_run=true`, 'first_name,plan\nAda,gold');
    expectProblem(bad, 400, 'validation_error');
    expect(bad.body.errors[0].code).toBe('missing_column');
    expectProblem(await call(svc.url, 'POST', `${REST}/contacts/import`, { token, body: { rows: [] } }), 400, 'validation_error');
  });

  it('merges one contact into another: conversations, identities and facts move, the other is gone', async () => {
    const { api, orgId, agent } = await orgWithAgent(svc);
    const target = await contact(api, { email_lower: email('t'), first_name: 'Tess', facts: { plan: 'gold' } });
    const source = await contact(api, { phone_e164: '+14155550177', first_name: 'T.', last_name: 'Lane', facts: { plan: 'free', city: 'Oslo' } });
    await api.patch(`${REST}/contacts/${source.id}`, { do_not_call: true });
    const conversation = await seedConversation(orgId, agent.id, '2026-04-01T10:00:00.000Z', [], source.id);

    const merged = await api.post(`${REST}/contacts/${target.id}/merge`, { source_contact_id: source.id });
    expect(merged.status, merged.text).toBe(200);
    expect(merged.body).toMatchObject({
      id: target.id, first_name: 'Tess', last_name: 'Lane', phone_e164: '+14155550177', do_not_call: true,
      facts: { plan: 'gold', city: 'Oslo' }, conversation_count: 1,
    });
    expectProblem(await api.get(`${REST}/contacts/${source.id}`), 404, 'not_found');
    expect((await api.get(`${REST}/conversations/${conversation}`)).body.contact_id).toBe(target.id);
    expectFieldError(await api.post(`${REST}/contacts/${target.id}/merge`, { source_contact_id: source.id }), 'source_contact_id');
    expectFieldError(await api.post(`${REST}/contacts/${target.id}/merge`, { source_contact_id: target.id }), 'source_contact_id');
    expectProblem(await api.post(`${REST}/contacts/${newId()}/merge`, { source_contact_id: target.id }), 404, 'not_found');
  });
});
