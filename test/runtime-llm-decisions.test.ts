import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import twilio from 'twilio';
import { createLlmRuntime } from '../src/runtime/llm.ts';
import { createOfflineRuntime } from '../src/runtime/offline.ts';
import type { AgentRuntime, RuntimeAgent, TranscriptMessage, TransferCandidate } from '../src/runtime/types.ts';
import { startChatCompletionsServer, type ChatCompletionsServer, type RecordedRequest, type ScriptedReply } from './fixtures/chat-completions-server.ts';
import { call, startTestService, type TestService } from './helpers.ts';
import { newAgent, newOrg } from './support/orgs.ts';

// What the LLM runtime decides and is told, read off the requests a local server speaking the
// chat-completions wire protocol receives: transfer rules weighed by the model (not by keywords),
// and training notes given as authoritative context, in the runtime alone and through the service.

const NOW = new Date('2026-03-02T10:00:00.000Z');
const agent: RuntimeAgent = {
  id: '00000000-0000-7000-8000-000000000009', name: 'Ava', persona: null, greeting: null, guardrails: null, goals: null,
  acceptance_criteria: null, data_schema: null, default_language: 'en', config_variables: null, can_transfer: true,
};
const rules: TransferCandidate[] = [
  { id: 'r-sales', name: 'Sales', condition: 'Caller wants to buy something or asks about pricing', priority: 1, enabled: true },
  { id: 'r-billing', name: 'Billing', condition: 'Caller asks about a refund or an invoice', priority: 10, enabled: true },
  { id: 'r-off', name: 'Old desk', condition: 'Caller mentions the old office', priority: 50, enabled: false },
];
const said = (text: string): TranscriptMessage[] => [
  { id: '1', role: 'agent', text: 'Hello, how can I help?', ts: NOW.toISOString() },
  { id: '2', role: 'caller', text, ts: NOW.toISOString() },
];

describe('transfer decisions', () => {
  let llm: ChatCompletionsServer;
  let runtime: AgentRuntime;
  beforeEach(async () => {
    llm = await startChatCompletionsServer();
    runtime = createLlmRuntime({ baseUrl: llm.baseUrl, apiKey: 'sk-test-transfer', model: 'test-model', now: () => NOW });
  });
  afterEach(async () => { await llm.close(); });

  it('the model decides: a rule it names by id, though the words share nothing with its condition', async () => {
    llm.enqueue({ toolCalls: [{ name: 'transfer_to_human', args: { rule_id: 'r-billing' } }] });
    const words = 'I was charged twice this month';
    // The keywords alone see nothing here: the offline runtime would not transfer.
    expect(await createOfflineRuntime().chooseTransferRule({ agent, messages: said(words), rules })).toBeNull();
    const chosen = await runtime.chooseTransferRule({ agent, messages: said(words), rules });
    expect(chosen?.id).toBe('r-billing');

    const request = llm.requests[0]!.body;
    expect(request.tool_choice).toBe('auto');
    expect(request.tools).toHaveLength(1);
    expect(request.tools[0].function.name).toBe('transfer_to_human');
    // Only enabled rules, highest priority first.
    expect(request.tools[0].function.parameters.properties.rule_id.enum).toEqual(['r-billing', 'r-sales']);
    const prompt = request.messages[0].content as string;
    expect(prompt.indexOf('Caller asks about a refund or an invoice')).toBeLessThan(prompt.indexOf('Caller wants to buy something'));
    expect(prompt).not.toContain('old office');
    expect(request.messages.slice(1)).toEqual([{ role: 'assistant', content: 'Hello, how can I help?' }, { role: 'user', content: words }]);
  });

  it('the model may decline a rule whose words are there, and only listed rules count; the highest priority wins', async () => {
    llm.enqueue({ content: 'none' });
    expect(await runtime.chooseTransferRule({ agent, messages: said('No refund needed, I just want your opening hours'), rules })).toBeNull();
    llm.enqueue({ toolCalls: [{ name: 'transfer_to_human', args: { rule_id: 'r-off' } }, { name: 'transfer_to_human', args: { rule_id: 'made-up' } }] });
    expect(await runtime.chooseTransferRule({ agent, messages: said('Take me to the old office desk'), rules })).toBeNull();
    llm.enqueue({ toolCalls: [{ name: 'transfer_to_human', args: { rule_id: 'r-sales' } }, { name: 'transfer_to_human', args: { rule_id: 'r-billing' } }] });
    expect((await runtime.chooseTransferRule({ agent, messages: said('Pricing, and a refund too'), rules }))?.id).toBe('r-billing');
    llm.enqueue({ toolCalls: [{ name: 'transfer_to_human', args: '{not json' }] });
    expect(await runtime.chooseTransferRule({ agent, messages: said('refund'), rules })).toBeNull();
  });

  it('asks nothing without an enabled rule, and falls back to the conditions\' words when the endpoint fails', async () => {
    expect(await runtime.chooseTransferRule({ agent, messages: said('I want a refund'), rules: [] })).toBeNull();
    expect(await runtime.chooseTransferRule({ agent, messages: said('I want a refund'), rules: rules.filter((r) => !r.enabled) })).toBeNull();
    expect(llm.requests).toHaveLength(0);
    llm.enqueue({ status: 500 }, { status: 500 }, { status: 500 });
    expect((await runtime.chooseTransferRule({ agent, messages: said('I want a refund'), rules }))?.id).toBe('r-billing');
    expect(llm.requests).toHaveLength(3);
  });
});

describe('through the service with LLM_BASE_URL', () => {
  let llm: ChatCompletionsServer;
  let svc: TestService;
  /** Every request: a transfer decision (transfer_to_human offered) or a reply; `decide` scripts the former. */
  let decide: (request: RecordedRequest) => ScriptedReply = () => ({ content: 'none' });
  beforeAll(async () => {
    llm = await startChatCompletionsServer({
      fallback: (request) => (request.body.tools?.some((t: any) => t.function?.name === 'transfer_to_human') ? decide(request) : { content: 'From the model.' }),
    });
    svc = await startTestService({ LLM_BASE_URL: llm.baseUrl, LLM_API_KEY: 'sk-test-service' });
  });
  afterAll(async () => {
    await svc?.stop();
    await llm?.close();
  });

  async function converse(publicKey: string, text: string) {
    const base = `/api/v1/public/widgets/${publicKey}/conversations`;
    const started = await call(svc.url, 'POST', base, { body: { page_url: 'https://example.com/' } });
    expect(started.status, started.text).toBe(201);
    const from = llm.requests.length;
    const sent = await call(svc.url, 'POST', `${base}/${started.body.conversation_id}/messages`, { body: { text }, headers: { 'x-visitor-token': started.body.visitor_token } });
    expect(sent.status, sent.text).toBe(200);
    return { id: started.body.conversation_id as string, replies: sent.body.messages as { role: string; text: string }[], requests: llm.requests.slice(from) };
  }

  it('a matching training note reaches the model as authoritative context, ahead of the transcript; a question it does not ask gets none', async () => {
    const { api } = await newOrg(svc);
    const agent = await newAgent(api, { name: 'Cedar & Pine' });
    const note = await api.post(`/api/v1/rest/agents/${agent.id}/training-notes`, {
      question: 'What discount do members get in the pro shop?', answer: 'Since March, members get 15% off everything in the pro shop.',
    });
    expect(note.status, note.text).toBe(201);

    const asked = await converse(agent.public_key, 'Do members get money off at the shop?');
    expect(asked.replies.map((m) => m.text)).toEqual(['From the model.']);
    expect(asked.requests).toHaveLength(1);
    const messages = asked.requests[0]!.body.messages as { role: string; content: string }[];
    const context = messages.filter((m) => m.role === 'system' && m.content.includes('Training notes from the business: authoritative'));
    expect(context).toHaveLength(1);
    expect(context[0]!.content).toContain('Q: What discount do members get in the pro shop?');
    expect(context[0]!.content).toContain('A: Since March, members get 15% off everything in the pro shop.');
    expect(context[0]!.content).toMatch(/ahead of and instead of anything search_knowledge returns/);
    // After the agent's instructions, before the conversation itself.
    expect(messages.indexOf(context[0]!)).toBe(1);
    expect(messages.at(-1)).toEqual({ role: 'user', content: 'Do members get money off at the shop?' });
    const detail = await api.get(`/api/v1/rest/conversations/${asked.id}`);
    expect(detail.body.tool_calls.map((c: any) => c.name)).toContain('search_training_notes');

    const other = await converse(agent.public_key, 'Where do I park my car?');
    expect(other.requests[0]!.body.messages.some((m: any) => m.role === 'system' && m.content.includes('Training notes'))).toBe(false);
  });

  it('on the web, the model decides a transfer rule: the visitor is told a person will join and the inbox flags it', async () => {
    const org = await newOrg(svc);
    const agent = await newAgent(org.api, { name: 'Ledger' });
    const rule = await org.api.post(`/api/v1/rest/agents/${agent.id}/transfer-rules`, {
      name: 'Billing', condition: 'Visitor asks about a refund or an invoice', destination_phone: '+14155550199', transfer_type: 'cold',
    });
    expect(rule.status, rule.text).toBe(201);
    decide = (request) => {
      const last = request.body.messages.at(-1).content as string;
      return /charged twice/.test(last) ? { toolCalls: [{ name: 'transfer_to_human', args: { rule_id: rule.body.id } }] } : { content: 'none' };
    };
    // Words the rule's condition does not hold: only the model can see a billing matter here.
    const billed = await converse(agent.public_key, 'I was charged twice this month');
    expect(billed.requests).toHaveLength(1);
    expect(billed.replies.map((m) => m.text)).toEqual([expect.stringMatching(/connecting you with a member of our team/)]);
    const live = (await org.api.get('/api/v1/rest/conversations/live')).body.data.find((c: any) => c.id === billed.id);
    expect(live.needs_human).toBe(true);

    // The word "refund" is there, but the model says no rule is met: the model answers.
    const hours = await converse(agent.public_key, 'No refund needed, what are your hours?');
    expect(hours.requests).toHaveLength(2);
    expect(hours.replies.map((m) => m.text)).toEqual(['From the model.']);
  });

  it('on a call, the model decides the transfer: <Dial> to the rule the model named, else the model\'s answer in <Say>', async () => {
    const org = await newOrg(svc);
    const agent = await newAgent(org.api, { name: 'Phone ledger' });
    const rule = await org.api.post(`/api/v1/rest/agents/${agent.id}/transfer-rules`, {
      name: 'Billing', condition: 'Caller asks about a refund or an invoice', destination_phone: '+14155550188', transfer_type: 'cold', ring_timeout_seconds: 20,
    });
    expect(rule.status, rule.text).toBe(201);
    const bought = await org.api.post('/api/v1/rest/phone-numbers', { widget_id: agent.id, force: true });
    expect(bought.status, bought.text).toBe(201);
    decide = (request) => (/charged twice/.test(request.body.messages.at(-1).content as string)
      ? { toolCalls: [{ name: 'transfer_to_human', args: { rule_id: rule.body.id } }] } : { content: 'none' });
    // Signed with the sandbox carrier's token: this service has no TWILIO_AUTH_TOKEN.
    const voice = async (params: Record<string, string>) => {
      const url = `${svc.url}/api/v1/carrier/twilio/voice`;
      const res = await fetch(url, {
        method: 'POST', body: new URLSearchParams(params).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': twilio.getExpectedTwilioSignature(svc.carrierSigningToken!, url, params) },
      });
      expect(res.status).toBe(200);
      return res.text();
    };
    const call1 = { CallSid: `CA${randomBytes(16).toString('hex')}`, From: '+14155550143', To: bought.body.phone_number as string };
    expect(await voice(call1)).toContain('<Gather input="speech"');
    const from = llm.requests.length;
    const transferred = await voice({ ...call1, SpeechResult: 'I was charged twice this month' });
    expect(transferred).toMatch(/<Dial[^>]*timeout="20"[^>]*>\s*(<Number[^>]*>)?\+14155550188/);
    expect(llm.requests.slice(from).map((r) => r.body.tools?.[0]?.function?.name)).toEqual(['transfer_to_human']);

    const call2 = { CallSid: `CA${randomBytes(16).toString('hex')}`, From: '+14155550144', To: bought.body.phone_number as string };
    await voice(call2);
    const answered = await voice({ ...call2, SpeechResult: 'No refund needed, when do you open?' });
    expect(answered).not.toContain('<Dial');
    expect(answered).toContain('From the model.');
  });
});
