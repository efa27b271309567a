import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../src/config.ts';
import type { Passage } from '../src/answers/retrieval.ts';
import { createLogger } from '../src/logger.ts';
import { createRuntime } from '../src/runtime/index.ts';
import { createLlmRuntime, LlmError } from '../src/runtime/llm.ts';
import { evaluateOffline } from '../src/runtime/evaluation.ts';
import type { AgentRuntime, RuntimeAgent, RuntimeTools, TranscriptMessage } from '../src/runtime/types.ts';
import { startChatCompletionsServer, type ChatCompletionsServer } from './fixtures/chat-completions-server.ts';

// The LLM runtime against a local server speaking the chat-completions wire protocol.

const NOW = new Date('2026-03-02T10:00:00.000Z');
const API_KEY = 'sk-test-7c1f0e9a2b4d4c8e9f3a1b2c3d4e5f60';
const HOURS: Passage = { text: 'Acme is open Monday to Friday from 9am to 6pm.', url: 'https://acme.test/hours', title: 'Opening hours', score: 0.6 };

const agent: RuntimeAgent = {
  id: '00000000-0000-7000-8000-000000000002', name: 'Ava', persona: 'You are the friendly assistant of {{company}}.', greeting: null,
  guardrails: ['Never quote prices.'], goals: ['Book a demo'], acceptance_criteria: ['Greets the visitor', 'Never quotes prices'],
  data_schema: [
    { name: 'email', type: 'email', description: 'Work email', required: true },
    { name: 'phone', type: 'phone', description: null, required: false },
  ],
  default_language: 'en', config_variables: { company: 'Acme' }, can_transfer: true,
};

const visitorSays = (text: string): TranscriptMessage[] => [
  { id: '1', role: 'agent', text: "Hi! I'm Ava. How can I help you today?", ts: NOW.toISOString() },
  { id: '2', role: 'visitor', text, ts: NOW.toISOString() },
];

function toolsWith(passages: Passage[]) {
  return { searchKnowledge: vi.fn(async (_query: string, _limit?: number) => passages) } satisfies RuntimeTools;
}

/** The error a promise rejects with (the test fails if it resolves). */
async function failureOf(promise: Promise<unknown>): Promise<Error> {
  const outcome = await promise.then(() => null, (err: unknown) => err);
  if (!(outcome instanceof Error)) throw new Error(`expected a rejection, got ${String(outcome)}`);
  return outcome;
}

let llm: ChatCompletionsServer;
let runtime: AgentRuntime;

beforeEach(async () => {
  llm = await startChatCompletionsServer();
  runtime = createLlmRuntime({ baseUrl: llm.baseUrl, apiKey: API_KEY, model: 'test-model', now: () => NOW });
});

afterEach(async () => {
  await llm.close();
});

describe('the voice profile in the system prompt (issue 43)', () => {
  it('formality and custom_direction shape the wording the model is asked for', async () => {
    llm.enqueue({ content: 'Good day. How may I assist you?' });
    const styled = { ...agent, style: { formality: 'formal' as const, custom_direction: 'Speak like a concierge at a grand hotel.' } };
    await runtime.reply({ agent: styled, messages: visitorSays('Hello'), captured: {}, contactFacts: {}, language: 'en' }, toolsWith([]));
    const system = llm.requests[0]!.body.messages[0].content as string;
    expect(system).toContain('Speak formally: courteous, complete sentences, no slang and no contractions');
    expect(system).toContain('Direction for how you speak and word your replies: Speak like a concierge at a grand hotel.');
    llm.enqueue({ content: 'Hey!' });
    await runtime.reply({ agent, messages: visitorSays('Hello'), captured: {}, contactFacts: {}, language: 'en' }, toolsWith([]));
    expect(llm.requests[1]!.body.messages[0].content).not.toContain('Direction for how you speak');
  });
});

describe('reply', () => {
  it('runs the tool loop: search, then answer; records the call and sends the result back with its tool_call_id', async () => {
    llm.enqueue(
      { toolCalls: [{ id: 'call_search_1', name: 'search_knowledge', args: { query: 'opening hours' } }] },
      { content: 'We are open Monday to Friday, 9am to 6pm. Source: https://acme.test/hours' },
    );
    const tools = toolsWith([HOURS]);
    const turn = await runtime.reply({ agent, messages: visitorSays('When are you open?'), captured: {}, contactFacts: {}, language: 'en' }, tools);

    expect(turn.replies).toEqual(['We are open Monday to Friday, 9am to 6pm. Source: https://acme.test/hours']);
    expect(turn.toolCalls).toEqual([{ name: 'search_knowledge', args: { query: 'opening hours' }, ts: NOW.toISOString() }]);
    expect(tools.searchKnowledge).toHaveBeenCalledWith('opening hours', 5);

    expect(llm.requests).toHaveLength(2);
    const [first, second] = llm.requests;
    expect(first!.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(first!.body.model).toBe('test-model');
    expect(first!.body.tools.map((t: any) => t.function.name)).toEqual(['search_knowledge', 'capture_data']);
    expect(first!.body.tools[1].function.parameters.properties.field.enum).toEqual(['email', 'phone']);
    const system = first!.body.messages[0];
    expect(system.role).toBe('system');
    expect(system.content).toContain('You are the friendly assistant of Acme.');
    expect(system.content).toContain('- Never quote prices.');
    expect(system.content).toContain('- Book a demo');
    expect(system.content).toContain('- email (email, required): Work email');
    expect(system.content).toContain('offer to connect the visitor with a person');
    expect(system.content).toContain('Reply in English');
    expect(first!.body.messages.slice(1)).toEqual([
      { role: 'assistant', content: "Hi! I'm Ava. How can I help you today?" },
      { role: 'user', content: 'When are you open?' },
    ]);
    const [assistant, tool] = second!.body.messages.slice(-2);
    expect(assistant.tool_calls[0]).toMatchObject({ id: 'call_search_1', type: 'function', function: { name: 'search_knowledge' } });
    expect(tool.role).toBe('tool');
    expect(tool.tool_call_id).toBe('call_search_1');
    expect(JSON.parse(tool.content)).toEqual({ passages: [{ title: 'Opening hours', url: 'https://acme.test/hours', text: HOURS.text }] });
  });

  it('capture_data normalizes and stores valid values, and tells the model what it refused', async () => {
    llm.enqueue(
      { toolCalls: [
        { id: 'c1', name: 'capture_data', args: { field: 'phone', value: '(415) 555-2671' } },
        { id: 'c2', name: 'capture_data', args: { field: 'email', value: 'not an email' } },
        { id: 'c3', name: 'capture_data', args: { field: 'budget', value: 10 } },
        { id: 'c4', name: 'capture_data', args: '{"field": "email"' },
      ] },
      { toolCalls: [{ id: 'c5', name: 'capture_data', args: { field: 'email', value: 'Jane@Acme.io' } }] },
      { content: 'Thanks Jane, noted.' },
    );
    const turn = await runtime.reply({
      agent, messages: visitorSays('Call me on (415) 555-2671, jane@acme.io'), captured: { existing: 1 }, contactFacts: { first_name: 'Jane' }, language: 'en',
    }, toolsWith([]));

    expect(turn.captured).toEqual({ existing: 1, phone: '+14155552671', email: 'jane@acme.io' });
    expect(turn.toolCalls.map((t) => [t.name, t.args])).toEqual([
      ['capture_data', { field: 'phone', value: '(415) 555-2671' }],
      ['capture_data', { field: 'email', value: 'not an email' }],
      ['capture_data', { field: 'budget', value: 10 }],
      ['capture_data', { raw: '{"field": "email"' }],
      ['capture_data', { field: 'email', value: 'Jane@Acme.io' }],
    ]);
    expect(turn.toolCalls.every((t) => t.ts === NOW.toISOString())).toBe(true);
    const results = llm.requests[1]!.body.messages.filter((m: any) => m.role === 'tool').map((m: any) => [m.tool_call_id, JSON.parse(m.content)]);
    expect(results).toEqual([
      ['c1', { ok: true, field: 'phone', value: '+14155552671' }],
      ['c2', { ok: false, error: 'not a valid email' }],
      ['c3', { ok: false, error: 'unknown field; known fields: email, phone' }],
      ['c4', { error: 'arguments must be a JSON object' }],
    ]);
    expect(llm.requests[0]!.body.messages[0].content).toContain('Known facts about this visitor from earlier conversations: {"first_name":"Jane"}');
  });

  it('stops calling tools after 5 rounds and asks for an answer without them', async () => {
    const looping = await startChatCompletionsServer({
      fallback: (request) => (request.body.tool_choice === 'none'
        ? { content: 'Here is what I found.' }
        : { toolCalls: [{ name: 'search_knowledge', args: { query: 'again' } }] }),
    });
    try {
      const rt = createLlmRuntime({ baseUrl: looping.baseUrl, apiKey: API_KEY, model: 'm' });
      const turn = await rt.reply({ agent, messages: visitorSays('hours?'), captured: {}, contactFacts: {}, language: 'en' }, toolsWith([]));
      expect(turn.replies).toEqual(['Here is what I found.']);
      expect(turn.toolCalls).toHaveLength(5);
      expect(looping.requests.map((r) => r.body.tool_choice)).toEqual(['auto', 'auto', 'auto', 'auto', 'auto', 'none']);
      expect(JSON.parse(looping.requests[1]!.body.messages.at(-1).content)).toEqual({ passages: [], note: 'Not on the site: nothing in the knowledge answers this. Say you do not know; do not guess.' });
    } finally {
      await looping.close();
    }
  });

  it('answers honestly when the model returns no content', async () => {
    llm.enqueue({ content: '   ' });
    const turn = await runtime.reply({ agent, messages: visitorSays('Hmm'), captured: {}, contactFacts: {}, language: 'fr' }, toolsWith([]));
    expect(turn.replies).toEqual(['Je suis désolé, je ne connais pas la réponse à cette question. Souhaitez-vous que je vous mette en relation avec un membre de notre équipe ?']);
    expect(llm.requests[0]!.body.messages[0].content).toContain('Reply in French (page language "fr")');
  });

  it('retries an HTTP 500 and succeeds', async () => {
    llm.enqueue({ status: 500 }, { content: 'Hello again!' });
    const turn = await runtime.reply({ agent, messages: visitorSays('hi'), captured: {}, contactFacts: {}, language: 'en' }, toolsWith([]));
    expect(turn.replies).toEqual(['Hello again!']);
    expect(llm.requests).toHaveLength(2);
    expect(llm.requests[1]!.body).toEqual(llm.requests[0]!.body);
  });

  it('gives up after 2 retries with an error that never shows the API key', async () => {
    const echo = { status: 500, body: { error: { message: `upstream rejected Bearer ${API_KEY} (key ${API_KEY.slice(0, 12)}...)`, type: 'server_error' } } };
    llm.enqueue(echo, echo, echo);
    const failure = await failureOf(runtime.reply({ agent, messages: visitorSays('hi'), captured: {}, contactFacts: {}, language: 'en' }, toolsWith([])));
    expect(llm.requests).toHaveLength(3);
    expect(failure).toBeInstanceOf(LlmError);
    expect((failure as LlmError).status).toBe(500);
    expect(failure.message).toMatch(/^LLM chat completion failed \(HTTP 500\)/);
    expect(JSON.stringify({ ...failure, text: failure.message, stack: failure.stack, cause: failure.cause })).not.toContain(API_KEY.slice(8, 20));
  });

  it('a 401 that echoes the key and an unreachable server fail without the key in the message', async () => {
    llm.enqueue({ status: 401, body: { error: { message: `Incorrect API key provided: ${API_KEY}`, type: 'invalid_request_error' } } });
    const unauthorized = await failureOf(runtime.reply({ agent, messages: visitorSays('hi'), captured: {}, contactFacts: {}, language: 'en' }, toolsWith([])));
    expect(unauthorized.message).toContain('HTTP 401');
    expect(unauthorized.message).toContain('Incorrect API key provided: [redacted]');
    expect(unauthorized.message).not.toContain(API_KEY);
    expect(llm.requests).toHaveLength(1);

    await llm.close();
    const offline = createLlmRuntime({ baseUrl: llm.baseUrl, apiKey: API_KEY, model: 'm', fetch: async () => { throw new Error(`connect ECONNREFUSED (auth ${API_KEY})`); } });
    const unreachable = await failureOf(offline.evaluate({ agent, messages: [], captured: {} }));
    expect(unreachable).toBeInstanceOf(LlmError);
    expect(unreachable.message).not.toContain(API_KEY);
    llm = await startChatCompletionsServer(); // for afterEach
  });
});

describe('evaluate', () => {
  const messages = [...visitorSays('What is the price? Reach me at +1 415 555 2671'), { id: '3', role: 'agent' as const, text: 'I cannot quote prices.', ts: NOW.toISOString() }];

  it('asks for a JSON object and keeps the valid parts of the answer, normalized', async () => {
    llm.enqueue({ content: JSON.stringify({
      extracted_data: { phone: '+1 (415) 555-2671', email: null, unknown_field: 'x' },
      criteria_results: [
        { criterion: 'Greets the visitor', verdict: 'pass', reason: 'It said hi.' },
        { criterion: 'never quotes prices', verdict: 'maybe', reason: '?' },
      ],
      intent: 'Pricing Question',
      outcome: 'unresolved',
    }) });
    const evaluation = await runtime.evaluate({ agent, messages, captured: { email: 'jane@acme.io' } });
    const request = llm.requests[0]!.body;
    expect(request.response_format).toEqual({ type: 'json_object' });
    expect(request.messages[0].content).toContain('- Never quotes prices');
    expect(request.messages[0].content).toContain('- phone (phone)');
    expect(request.messages[1].content).toContain('[visitor] What is the price? Reach me at +1 415 555 2671');
    expect(request.messages[1].content).toContain('Data captured during the conversation: {"email":"jane@acme.io"}');

    const offline = evaluateOffline({ agent, messages, captured: { email: 'jane@acme.io' } }, NOW);
    expect(evaluation).toEqual({
      extracted_data: { phone: '+14155552671', email: 'jane@acme.io' },
      criteria_results: [
        { criterion: 'Book a demo', ...pick(offline.criteria_results[0]!) },
        { criterion: 'Greets the visitor', verdict: 'pass', reason: 'It said hi.' },
        // An invalid verdict: the offline judgement stands in for it.
        offline.criteria_results[2],
      ],
      intent: 'pricing_question',
      outcome: 'unresolved',
    });
  });

  it('falls back to the offline evaluator when the model answers garbage', async () => {
    const input = { agent, messages, captured: {} };
    for (const content of ['this is not json', '[1, 2]', '{"verdicts": "all good"}']) {
      llm.enqueue({ content });
      expect(await runtime.evaluate(input)).toEqual(evaluateOffline(input, NOW));
    }
  });
});

function pick(r: { verdict: string; reason: string }) {
  return { verdict: r.verdict, reason: r.reason };
}

describe('runtime selection and settings', () => {
  it('uses the LLM runtime when LLM_BASE_URL is set, else the offline one', () => {
    expect(createRuntime(loadConfig({})).kind).toBe('offline');
    const config = loadConfig({ LLM_BASE_URL: 'http://127.0.0.1:9/v1', LLM_API_KEY: API_KEY });
    expect(config.LLM_MODEL).toBe('gpt-4o-mini');
    expect(createRuntime(config).kind).toBe('llm');
    expect(() => loadConfig({ LLM_BASE_URL: 'ftp://example.com' })).toThrow(/LLM_BASE_URL/);
  });

  it('sends the configured key and model, and a logged config never shows the key', async () => {
    llm.enqueue({ content: 'ok' });
    const rt = createRuntime(loadConfig({ LLM_BASE_URL: llm.baseUrl, LLM_API_KEY: API_KEY, LLM_MODEL: 'local-model' }));
    await rt.reply({ agent, messages: visitorSays('hi'), captured: {}, contactFacts: {}, language: 'en' }, toolsWith([]));
    expect(llm.requests[0]!.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(llm.requests[0]!.body.model).toBe('local-model');

    let logged = '';
    const sink = new Writable({ write(chunk, _enc, done) { logged += String(chunk); done(); } });
    const log = createLogger('info', {}, sink);
    log.info({ config: loadConfig({ LLM_BASE_URL: llm.baseUrl, LLM_API_KEY: API_KEY }) }, 'configuration');
    log.info({ LLM_API_KEY: API_KEY, llm: { apiKey: API_KEY } }, 'flat');
    expect(logged).toContain('[redacted]');
    expect(logged).not.toContain(API_KEY);
  });

  it('greets from configuration without calling the model', async () => {
    expect(await runtime.greet(agent, { language: 'en', contactFacts: {} })).toBe("Hi! I'm Ava. How can I help you today?");
    expect(llm.requests).toHaveLength(0);
  });
});
