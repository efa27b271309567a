import { randomBytes } from 'node:crypto';
import { simpleParser, type ParsedMail } from 'mailparser';
import twilio from 'twilio';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatCompletionsServer, type ChatCompletionsServer } from './fixtures/chat-completions-server.ts';
import { call, client, eventually, startTestService, type TestService } from './helpers.ts';
import { orgWithAgent, type Api } from './support/orgs.ts';
import { recordFixture, replayAll } from './support/replay.ts';

// Agent fields that act (issue 43, "Fields stored for nothing"), through the API with the offline runtime:
// config_variables on every surface, tracking_rules as labels, prompt_modules.

/** A local SMTP server: the notifications the service mails land here. */
async function startSink() {
  const received: ParsedMail[] = [];
  const server = new SMTPServer({
    authOptional: true, disabledCommands: ['AUTH', 'STARTTLS'], logger: false,
    onData(stream, _session, callback) {
      simpleParser(stream).then((mail) => { received.push(mail); callback(); }, callback);
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as { port: number };
  return { received, port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const AUTH_TOKEN = `tok_${randomBytes(12).toString('hex')}`;
let svc: TestService;
let sink: Awaited<ReturnType<typeof startSink>>;
beforeAll(async () => {
  sink = await startSink();
  svc = await startTestService({ SMTP_URL: `smtp://127.0.0.1:${sink.port}` }, { env: { TWILIO_AUTH_TOKEN: AUTH_TOKEN } });
});
afterAll(async () => {
  await svc?.stop();
  await sink?.close();
});

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

describe('notification_email and notification_phone: the business is told', () => {
  const mailsTo = (address: string) => sink.received.filter((m) => !Array.isArray(m.to) && m.to?.value.some((v) => v.address === address));
  const textsTo = (phone: string) => svc.sql<{ from: string; body: string }[]>`select phone_number as from, details->>'body' as body
    from carrier_operations where operation = 'sms' and target = ${phone} order by created_at`;

  it('a visitor asking for a person and a lead captured: one mail and one text each, from the agent\'s number; nothing without the fields', async () => {
    const { api, agent } = await orgWithAgent(svc, 'Front desk');
    const bought = await api.post('/api/v1/rest/phone-numbers', { widget_id: agent.id, force: true });
    expect(bought.status, bought.text).toBe(201);
    const email = `owner-${agent.id.slice(-8)}@example.org`;
    const phone = `+1415555${String(Math.floor(Math.random() * 9000) + 1000)}`;
    await configure(api, agent.id, {
      notification_email: email, notification_phone: phone,
      data_schema: [{ name: 'email', type: 'email', required: true }],
    });
    const chat = await visit(agent.public_key);
    await chat.say('Can I talk to a human please?');
    await chat.say('Again: I want to speak to a person.');
    const handoff = await eventually(async () => (mailsTo(email).length >= 1 ? mailsTo(email) : null));
    expect(handoff[0]!.subject).toBe('A visitor asked to talk to a person: Front desk');
    expect(handoff[0]!.text).toContain(chat.id);
    const texts = await eventually(async () => { const t = await textsTo(phone); return t.length >= 1 ? t : null; });
    expect(texts[0]).toMatchObject({ from: bought.body.phone_number, body: expect.stringContaining('A visitor asked to talk to a person') });

    await chat.say('My email is lead@example.com');
    const both = await eventually(async () => (mailsTo(email).length >= 2 ? mailsTo(email) : null));
    expect(both[1]!.subject).toBe('A lead\'s details were captured: Front desk');
    expect(both[1]!.text).toContain('email: lead@example.com');
    await eventually(async () => ((await textsTo(phone)).length >= 2 ? true : null));
    // Once per conversation and reason: the second request for a person sent nothing more.
    const workflows = await svc.temporal.workflow.list({ query: `WorkflowType = 'notifyBusiness' and WorkflowId STARTS_WITH 'notify:${chat.id}'` });
    const ids: string[] = [];
    for await (const w of workflows) ids.push(w.workflowId);
    expect(ids.sort()).toEqual([`notify:${chat.id}:handoff_requested`, `notify:${chat.id}:lead_captured`]);
    expect(mailsTo(email)).toHaveLength(2);
    expect(await textsTo(phone)).toHaveLength(2);
    // The run replays on today's workflow code; RECORD_HISTORIES=1 keeps it as the notifyBusiness fixture of test/replay.test.ts.
    const handoffRun = svc.temporal.workflow.getHandle(`notify:${chat.id}:handoff_requested`);
    expect(await handoffRun.result()).toEqual({ mailed: true, texted: true });
    await replayAll([{ workflowId: handoffRun.workflowId, history: await handoffRun.fetchHistory() }]);
    await recordFixture(handoffRun.workflowId, 'notify-business.json');

    // Without notification fields, a request for a person notifies no one.
    const { api: quietApi, agent: quiet } = await orgWithAgent(svc, 'Quiet desk');
    await configure(quietApi, quiet.id, { notification_email: null });
    const other = await visit(quiet.public_key);
    await other.say('Can I talk to a human please?');
    const none = svc.temporal.workflow.list({ query: `WorkflowId STARTS_WITH 'notify:${other.id}'` });
    for await (const w of none) expect.unreachable(`unexpected ${w.workflowId}`);
  });

  it('a warm transfer whose destination cannot be dialled: the caller\'s conversation notifies the business (transfer_failed)', async () => {
    const { api, agent } = await orgWithAgent(svc, 'Call desk');
    const bought = await api.post('/api/v1/rest/phone-numbers', { widget_id: agent.id, force: true });
    expect(bought.status, bought.text).toBe(201);
    const email = `calls-${agent.id.slice(-8)}@example.org`;
    await configure(api, agent.id, { notification_email: email });
    // The sandbox refuses to dial +15005550010, as a carrier's API refuses a number.
    const rule = await api.post(`${A}/${agent.id}/transfer-rules`, {
      name: 'Escalation', condition: 'Caller mentions a complaint', destination_phone: '+15005550010', transfer_type: 'warm', priority: 5,
    });
    expect(rule.status, rule.text).toBe(201);
    const voice = async (params: Record<string, string>) => {
      const url = `${svc.url}/api/v1/carrier/twilio/voice`;
      const res = await fetch(url, {
        method: 'POST', body: new URLSearchParams(params).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': twilio.getExpectedTwilioSignature(AUTH_TOKEN, url, params) },
      });
      expect(res.status).toBe(200);
      return res.text();
    };
    const base = { CallSid: `CA${randomBytes(16).toString('hex')}`, From: '+14155550146', To: bought.body.phone_number as string };
    expect(await voice(base)).toContain('<Gather');
    const since = new Date();
    // The caller still hears the hand-over (the announcement and the conference); the failed dial is the business's to hear of.
    expect(await voice({ ...base, SpeechResult: 'I have a complaint about my order' })).toContain('<Conference');
    const refused = await svc.sql<{ n: number }[]>`select count(*)::int as n from carrier_operations
      where operation = 'call_refused' and target = '+15005550010' and phone_number = ${bought.body.phone_number} and created_at >= ${since}`;
    expect(refused[0]!.n).toBe(1);
    const [conversation] = (await api.get(`/api/v1/rest/conversations?widget_id=${agent.id}`)).body.data;
    const mails = await eventually(async () => (mailsTo(email).length ? mailsTo(email) : null));
    expect(mails).toHaveLength(1);
    expect(mails[0]!.subject).toBe('A call transfer failed: Call desk');
    expect(mails[0]!.text).toContain(`phone conversation ${conversation.id}`);
    const handle = svc.temporal.workflow.getHandle(`notify:${conversation.id}:transfer_failed`);
    expect((await handle.describe()).type).toBe('notifyBusiness');
    // No notification_phone: the mail only.
    expect(await handle.result()).toEqual({ mailed: true, texted: false });
    await replayAll([{ workflowId: handle.workflowId, history: await handle.fetchHistory() }]);
  });
});

describe('the same fields with the LLM runtime (LLM_BASE_URL)', () => {
  let llm: ChatCompletionsServer;
  let llmSvc: TestService;
  beforeAll(async () => {
    llm = await startChatCompletionsServer({
      // Evaluation asks for JSON: the model names a tracking rule whose words the transcript does not hold.
      fallback: (request) => (request.body.response_format?.type === 'json_object'
        ? { content: JSON.stringify({ intent: 'billing', outcome: 'resolved', labels: ['Refund request', 'Made up'] }) }
        : { content: 'From the model. See https://acme.test/x for more.' }),
    });
    llmSvc = await startTestService({ LLM_BASE_URL: llm.baseUrl, LLM_API_KEY: 'sk-test-fields' });
  });
  afterAll(async () => {
    await llmSvc?.stop();
    await llm?.close();
  });

  it('the system prompt carries the rendered persona, guardrails and modules; built-in modules shape the reply; the model labels', async () => {
    const { token } = await llmSvc.newOrg();
    const api = client(llmSvc.url, token);
    const created = await api.post(A, { name: 'Ava' });
    expect(created.status, created.text).toBe(201);
    const agent = created.body;
    await configure(api, agent.id, {
      config_variables: { company: 'Acme', competitor: 'Globex' },
      persona: 'You work for {{company}}.', guardrails: ['Never discuss {{competitor}}'],
      prompt_modules: [
        { name: 'Tone', content: 'Address the visitor formally on behalf of {{company}}.' },
        { name: 'no_links', content: '' },
        { name: 'disclaimer', content: 'Prices may change.' },
        { name: 'Unused', content: 'Speak like a pirate.', enabled: false },
      ],
      tracking_rules: [{ name: 'Refund request', condition: 'Visitor wants a refund' }, { name: 'Pricing', condition: 'price or cost' }],
    });
    const base = `/api/v1/public/widgets/${agent.public_key}/conversations`;
    const started = await call(llmSvc.url, 'POST', base, { body: { page_url: 'https://example.com/' } });
    expect(started.status, started.text).toBe(201);
    const headers = { 'x-visitor-token': started.body.visitor_token as string };
    const from = llm.requests.length;
    const sent = await call(llmSvc.url, 'POST', `${base}/${started.body.conversation_id}/messages`, { body: { text: 'I was charged twice' }, headers });
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body.messages.map((m: any) => m.text)).toEqual(['From the model. See our website for more. Prices may change.']);
    const system = llm.requests[from]!.body.messages[0].content as string;
    expect(system).toContain('You work for Acme.');
    expect(system).toContain('- Never discuss Globex');
    expect(system).toContain('- Tone: Address the visitor formally on behalf of Acme.');
    expect(system).toContain('Never write a URL');
    expect(system).toContain('End every reply with this sentence, word for word: Prices may change.');
    expect(system).not.toContain('pirate');

    const ended = await call(llmSvc.url, 'POST', `${base}/${started.body.conversation_id}/end`, { headers });
    expect(ended.status, ended.text).toBe(200);
    const done = await eventually(async () => {
      const res = await api.get(`/api/v1/rest/conversations/${started.body.conversation_id}`);
      return res.body.outcome ? res.body : null;
    });
    // Only the rules' names count, case-folded; the evaluation prompt listed them.
    expect(done.labels).toEqual(['refund request']);
    const evaluation = llm.requests.find((r) => r.body.response_format?.type === 'json_object')!;
    expect(JSON.stringify(evaluation.body.messages)).toContain('- Refund request: Visitor wants a refund');
  });
});
