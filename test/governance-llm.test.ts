import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLlmRuntime } from '../src/runtime/llm.ts';
import type { RuntimeAgent, RuntimeTools, TranscriptMessage } from '../src/runtime/types.ts';
import { startChatCompletionsServer, type ChatCompletionsServer } from './fixtures/chat-completions-server.ts';

/**
 * Issue 47, the `llm` redaction path: what reaches the model provider (a local chat-completions
 * server standing in for it) is masked, while what the data schema asks is still captured.
 */

const agent: RuntimeAgent = {
  id: '00000000-0000-7000-8000-000000000047', name: 'Ava', persona: null, greeting: null, guardrails: null, goals: null, acceptance_criteria: null,
  data_schema: [{ name: 'email', type: 'email', description: null, required: true }, { name: 'phone', type: 'phone', description: null, required: false }],
  default_language: 'en', config_variables: null, can_transfer: false,
  redaction: { kinds: ['email', 'phone', 'card', 'iban', 'national_id', 'pattern'], countries: ['US'], patterns: [{ name: 'member_no', pattern: 'MBR-\\d{6}' }] },
};
const said = 'I am jo@example.com, +1 415 555 0142, card 4111 1111 1111 1111, IBAN DE89 3704 0044 0532 0130 00, SSN 123-45-6789, member MBR-123456';
const messages: TranscriptMessage[] = [
  { id: '1', role: 'agent', text: 'Hi! What is your email?', ts: '2026-12-06T10:00:00.000Z' },
  { id: '2', role: 'visitor', text: said, ts: '2026-12-06T10:00:05.000Z' },
];
const tools: RuntimeTools = { searchKnowledge: async () => [] };

let llm: ChatCompletionsServer;
beforeAll(async () => { llm = await startChatCompletionsServer({ fallback: () => ({ content: 'Thanks!' }) }); });
afterAll(async () => { await llm.close(); });

it('masks every kind in what is sent to the model, and captures the data schema from the text as said', async () => {
  const runtime = createLlmRuntime({ baseUrl: llm.baseUrl, model: 'test-model' });
  const turn = await runtime.reply({ agent, messages, captured: {}, contactFacts: {}, language: 'en' }, tools);
  const sent = JSON.stringify(llm.requests.map((r) => r.body.messages));
  for (const raw of ['jo@example.com', '415 555 0142', '4111 1111 1111 1111', 'DE89 3704', '123-45-6789', 'MBR-123456']) expect(sent).not.toContain(raw);
  expect(sent).toContain('+1 ••• ••• 0142');
  expect(sent).toContain('[member_no]');
  expect(turn.captured).toMatchObject({ email: 'jo@example.com', phone: '+14155550142' });

  // Without redaction the same turn reaches the model as said.
  llm.requests.length = 0;
  await runtime.reply({ agent: { ...agent, redaction: null }, messages, captured: {}, contactFacts: {}, language: 'en' }, tools);
  expect(JSON.stringify(llm.requests.map((r) => r.body.messages))).toContain('jo@example.com');
});
