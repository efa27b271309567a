import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, eventually, startTestService, type TestService } from './helpers.ts';
import { startAnswersSite, type AnswersSite } from '../bench/answers/site.ts';
import { searchKnowledge } from '../src/knowledge/retrieval.ts';

// A handful of the answers evaluation's cases (npm run eval:answers), through the real crawl and
// the public widget API: what a visitor reads.

let svc: TestService;
let site: AnswersSite;
let agent: { id: string; public_key: string };

beforeAll(async () => {
  site = await startAnswersSite();
  svc = await startTestService({ ALLOW_PRIVATE_NETWORK_TARGETS: true, CRAWL_DELAY_MS: 0 });
  const { token } = await svc.newOrg();
  const api = client(svc.url, token);
  const created = await api.post('/api/v1/rest/agents', { name: 'Cedar & Pine', site_url: `${site.url}/` });
  expect(created.status, created.text).toBe(201);
  agent = created.body;
  await eventually(async () => (await api.get(`/api/v1/rest/agents/${agent.id}`)).body.status === 'active', 120_000, 250);
});
afterAll(async () => {
  await svc?.stop();
  await site?.close();
});

async function ask(question: string): Promise<string> {
  const pub = client(svc.url);
  const base = `/api/v1/public/widgets/${agent.public_key}/conversations`;
  const started = await pub.post(base, { page_url: `${site.url}/` });
  expect(started.status, started.text).toBe(201);
  const sent = await pub.post(`${base}/${started.body.conversation_id}/messages`, { text: question }, { 'x-visitor-token': started.body.visitor_token });
  expect(sent.status, sent.text).toBe(200);
  return (sent.body.messages as { role: string; text: string }[]).filter((m) => m.role === 'agent').map((m) => m.text).join('\n');
}

describe('answers a visitor reads', () => {
  it('a price from a table row, as one sentence with its source', async () => {
    const reply = await ask('How much is a day pass?');
    expect(reply).toMatch(/^Day pass — Price: \$22; What you get: One visit, all day\.\nSource: http:\/\/127\.0\.0\.1:\d+\/pricing$/);
  });

  it('a day inside a range ("Tuesday to Friday" holds Wednesday), and a street address for "where"', async () => {
    expect(await ask('How late is Riverside open on a Wednesday?')).toMatch(/^Tuesday to Friday — Riverside: 6 am – 11 pm/);
    expect(await ask('Where is the Riverside gym?')).toMatch(/^120 Mill Street, Portland, OR 97214\./);
  });

  it('words WordNet derives from each other ("rent" and "rental"), and "money back" read as a refund', async () => {
    expect(await ask('How much does it cost to rent climbing shoes?')).toContain('$6');
    expect(await ask('Can I get my money back on an annual membership?')).toMatch(/^Yes, annual memberships can be refunded within 14 days/);
  });

  it('a person for "who", named in full from the heading', async () => {
    expect(await ask('Who teaches the lead climbing course?')).toContain('Maya Chen');
  });

  it('"Yes, …" to a yes/no question the text answers', async () => {
    expect(await ask('Are there showers?')).toMatch(/^Yes, both gyms have locker rooms with showers\./);
  });

  it('what the site does say when the question names a place it does not', async () => {
    const reply = await ask('Do you have a gym in Seattle?');
    expect(reply).toMatch(/^Our site doesn't mention Seattle\./);
    expect(reply).toContain('Portland');
  });

  it('admits what the site does not say, with no look-alike sentence; retrieval (the LLM\'s tool too) finds nothing', async () => {
    const reply = await ask('Do you sell gift cards?');
    expect(reply).toMatch(/^I'm sorry, I don't know the answer to that\./);
    expect(reply).not.toMatch(/source/i);
    expect(await searchKnowledge(svc.sql, agent.id, 'Do you sell gift cards?')).toEqual([]);
    expect((await searchKnowledge(svc.sql, agent.id, 'How much is a day pass?'))[0]).toMatchObject({ answer: expect.stringContaining('$22') });
  });
});
