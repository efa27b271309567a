import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, eventually, startTestService, type TestService } from './helpers.ts';
import { orgWithAgent, type Api } from './support/orgs.ts';

// Agent fields that act (issue 43, "Fields stored for nothing"), through the API with the offline runtime:
// config_variables on every surface, tracking_rules as labels, prompt_modules.

let svc: TestService;
beforeAll(async () => { svc = await startTestService(); });
afterAll(async () => { await svc?.stop(); });

const A = '/api/v1/rest/agents';

async function configure(api: Api, id: string, patch: Record<string, unknown>) {
  const res = await api.patch(`${A}/${id}`, patch);
  expect(res.status, res.text).toBe(200);
  return res.body as Record<string, any>;
}

/** A visitor's conversation on the public widget: its greeting, then one reply per message sent. */
async function visit(publicKey: string) {
  const base = `/api/v1/public/widgets/${publicKey}/conversations`;
  const started = await call(svc.url, 'POST', base, { body: { page_url: 'https://example.com/' } });
  expect(started.status, started.text).toBe(201);
  const id = started.body.conversation_id as string;
  const headers = { 'x-visitor-token': started.body.visitor_token as string };
  return {
    id,
    greeting: started.body.messages[0].text as string,
    async say(text: string): Promise<string[]> {
      const sent = await call(svc.url, 'POST', `${base}/${id}/messages`, { body: { text }, headers });
      expect(sent.status, sent.text).toBe(200);
      return sent.body.messages.map((m: any) => m.text);
    },
    async end() {
      const ended = await call(svc.url, 'POST', `${base}/${id}/end`, { headers });
      expect(ended.status, ended.text).toBe(200);
    },
  };
}

/** The conversation once evaluated (its outcome set). */
async function evaluated(api: Api, id: string): Promise<Record<string, any>> {
  return eventually(async () => {
    const res = await api.get(`/api/v1/rest/conversations/${id}`);
    expect(res.status, res.text).toBe(200);
    return res.body.outcome ? res.body as Record<string, any> : null;
  });
}

describe('config_variables: {{variables}} on every surface', () => {
  it('renders in the greeting, the widget copy (every language) and the guardrails the agent cites', async () => {
    const { api, agent } = await orgWithAgent(svc, 'Ava');
    await configure(api, agent.id, {
      config_variables: { company: 'Acme', competitor: 'Globex' },
      greeting: 'Welcome to {{company}}! I am {{agent_name}}.',
      intro_title: 'Chat with {{company}}', intro_subtitle: '{{agent_name}} answers', button_label: 'Ask {{company}}',
      suggested_prompts: ['What does {{company}} sell?'],
      localized_copy: { fr: { intro_title: 'Parlez à {{company}}', suggested_prompts: ['Que vend {{company}} ?'] } },
      guardrails: ['Never discuss {{competitor}}'],
    });
    // GET of the agent keeps the templates as written.
    expect((await api.get(`${A}/${agent.id}`)).body).toMatchObject({ greeting: 'Welcome to {{company}}! I am {{agent_name}}.', intro_title: 'Chat with {{company}}' });

    const config = await call(svc.url, 'GET', `/api/v1/public/widgets/${agent.public_key}/config`);
    expect(config.status, config.text).toBe(200);
    expect(config.body).toMatchObject({
      intro_title: 'Chat with Acme', intro_subtitle: 'Ava answers', button_label: 'Ask Acme', suggested_prompts: ['What does Acme sell?'],
      localized_copy: { fr: { intro_title: 'Parlez à Acme', suggested_prompts: ['Que vend Acme ?'] } },
    });

    const chat = await visit(agent.public_key);
    expect(chat.greeting).toBe('Welcome to Acme! I am Ava.');
    // The rule reads "Never discuss Globex" once rendered: a question on Globex runs into it, and the agent cites it so.
    const [declined] = await chat.say('What do you think of Globex?');
    expect(declined).toContain('"Never discuss Globex"');
  });
});

describe('tracking_rules: labels on conversations, in filters and in reports', () => {
  it('labels a conversation that meets an enabled rule at evaluation; ?label= finds it; a report counts it', async () => {
    const { api, agent } = await orgWithAgent(svc, 'Pricing desk');
    await configure(api, agent.id, {
      tracking_rules: [
        { name: 'Pricing', condition: 'The visitor asks about the price or the cost' },
        { name: 'Refund request', condition: 'Visitor wants a refund' },
        { name: 'Cost watch', condition: 'cost', enabled: false },
      ],
    });
    const priced = await visit(agent.public_key);
    await priced.say('How much does the premium plan cost?');
    const other = await visit(agent.public_key);
    await other.say('Where is your office?');
    // Labels come with evaluation: none while the conversation runs.
    expect((await api.get(`/api/v1/rest/conversations/${priced.id}`)).body.labels).toEqual([]);
    await priced.end();
    await other.end();

    expect((await evaluated(api, priced.id)).labels).toEqual(['pricing']);
    expect((await evaluated(api, other.id)).labels).toEqual([]);
    const filtered = await api.get('/api/v1/rest/conversations?label=PRICING');
    expect(filtered.status, filtered.text).toBe(200);
    expect(filtered.body.data.map((c: any) => c.id)).toEqual([priced.id]);
    expect(filtered.body.data[0].labels).toEqual(['pricing']);
    expect(filtered.body.total).toBe(1);
    expect((await api.get('/api/v1/rest/conversations?label=refund%20request')).body.data).toEqual([]);

    // A report counts conversations per label.
    const report = await api.post('/api/v1/rest/reports', { name: 'Labels', data_categories: ['volume'], format: 'raw', frequency: 'manual' });
    expect(report.status, report.text).toBe(201);
    const start = new Date(Date.now() - 3_600_000).toISOString();
    const end = new Date(Date.now() + 3_600_000).toISOString();
    const run = await api.post(`/api/v1/rest/reports/${report.body.id}/run`, { period_start: start, period_end: end });
    expect(run.status, run.text).toBe(201);
    const data = await eventually(async () => {
      const res = await api.get(`/api/v1/rest/reports/${report.body.id}/runs/${run.body.id}/data`);
      return res.status === 200 ? res.body : null;
    }, 60_000, 250);
    expect(data.annotations.labels).toEqual([{ label: 'pricing', count: 1 }]);
  });
});

describe('prompt_modules: the built-in modules act on the offline runtime', () => {
  it('concise keeps two sentences, no_links drops URLs, disclaimer ends every reply; disabled modules do nothing', async () => {
    const { api, agent } = await orgWithAgent(svc, 'Plans');
    const note = await api.post(`${A}/${agent.id}/training-notes`, {
      question: 'What is your refund policy?',
      answer: 'Refunds are accepted within 30 days of purchase. Details are at https://acme.test/refunds. Call us any time. We love questions.',
    });
    expect(note.status, note.text).toBe(201);
    const modules = [
      { name: 'concise', content: '' },
      { name: 'No links', content: '' },
      { name: 'Disclaimer', content: 'Prices at {{company}} may change.' },
      { name: 'Tone', content: 'Be formal.' },
    ];
    await configure(api, agent.id, { config_variables: { company: 'Acme' }, prompt_modules: modules });
    const on = await visit(agent.public_key);
    expect(await on.say('What is your refund policy?')).toEqual(['Refunds are accepted within 30 days of purchase. Details are at our website. Prices at Acme may change.']);

    await configure(api, agent.id, { prompt_modules: modules.map((m) => ({ ...m, enabled: false })) });
    const off = await visit(agent.public_key);
    expect(await off.say('What is your refund policy?')).toEqual([
      'Refunds are accepted within 30 days of purchase. Details are at https://acme.test/refunds. Call us any time. We love questions.',
    ]);
  });
});
