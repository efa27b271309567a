import { createRequire } from 'node:module';
import type OpenAI from 'openai';

let sdk: typeof OpenAI | undefined;
/** The OpenAI SDK, loaded when an LLM runtime is made (its CommonJS build): a service without LLM_BASE_URL never holds it. */
const openAi = (): typeof OpenAI => sdk ??= (createRequire(import.meta.url)('openai') as { OpenAI: typeof OpenAI }).OpenAI;
import type { ChatCompletionFunctionTool, ChatCompletionMessageFunctionToolCall, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { evaluateOffline } from './evaluation.ts';
import { defaultCountry, normalizeFieldValue, type ParseContext } from './parsers.ts';
import { modulesPrompt, withModules } from './prompt-modules.ts';
import { checkedLabels, enabledTrackingRules } from './tracking.ts';
import { dontKnowReply, greetingFor, pageLanguage, renderTemplate, type Lang } from '../answers/phrases.ts';
import { OUTCOMES, VERDICTS } from '../schemas/conversations.ts';
import { matchTransferInput } from './transfer.ts';
import { redactText } from '../domain/redaction.ts';
import { askedField, captureFrom } from './capture.ts';
import { businessOf, introduction } from './outbound.ts';
import { fileCitation } from '../answers/citations.ts';
import type {
  AgentRuntime, DataField, Evaluation, OutboundCall, Outcome, ReplyStream, RuntimeAgent, RuntimeTools, TokenUsage, ToolCall, TranscriptMessage, TransferCandidate,
  TransferInput, TurnInput, TurnResult, Verdict, VoiceStyle,
} from './types.ts';

/**
 * The LLM runtime: any OpenAI-compatible chat-completions endpoint, through the official SDK.
 * Retrieval and data capture are tools the model calls and we execute here; every call is
 * recorded. The greeting is configuration, so it is rendered locally (no round trip before the
 * visitor has typed anything).
 */

export interface LlmRuntimeOptions {
  /** e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer`; never logged nor put in an error message. */
  apiKey?: string | null | undefined;
  model: string;
  /** A fetch implementation for the SDK (tests, proxies); the global fetch otherwise. */
  fetch?: typeof globalThis.fetch;
  /** Where the SDK's own warnings go; silent otherwise (it would print to the console). */
  logger?: { debug(msg: string, ...rest: unknown[]): void; info(msg: string, ...rest: unknown[]): void; warn(msg: string, ...rest: unknown[]): void; error(msg: string, ...rest: unknown[]): void };
  /** The clock of tool-call timestamps; tests pin it. */
  now?: () => Date;
  /** Sampling settings sent with every chat completion of a turn (an agent's `model` setting, issue 46). */
  sampling?: { temperature?: number | undefined; max_tokens?: number | undefined } | undefined;
}

/** A failed call to the model endpoint, with the API key scrubbed from the message. */
export class LlmError extends Error {
  override readonly name = 'LlmError';
  constructor(message: string, readonly status: number | undefined) {
    super(message);
  }
}

const MAX_TOOL_ROUNDS = 5;
const TIMEOUT_MS = 30_000;
const MAX_RETRIES = 2;
const PASSAGE_CHARS = 1200;
/** Passages given to the model per search (recall@5 is measured by `npm run eval:answers`). */
const PASSAGES = 5;
const LANGUAGE_NAMES: Record<string, string> = { en: 'English', fr: 'French', de: 'German', es: 'Spanish', it: 'Italian', pt: 'Portuguese', nl: 'Dutch' };

/**
 * @example
 * const runtime = createLlmRuntime({ baseUrl: 'http://localhost:11434/v1', apiKey: process.env.LLM_API_KEY, model: 'llama3.1' });
 */
export function createLlmRuntime(options: LlmRuntimeOptions): AgentRuntime {
  const apiKey = options.apiKey || 'unused';
  const OpenAiClient = openAi();
  const client = new OpenAiClient({
    baseURL: options.baseUrl,
    // The SDK requires a key; local servers (Ollama, vLLM) take any.
    apiKey,
    // Explicit nulls: the SDK would otherwise read OPENAI_ORG_ID / OPENAI_PROJECT_ID from the environment.
    organization: null,
    project: null,
    timeout: TIMEOUT_MS,
    maxRetries: MAX_RETRIES,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.logger ? { logger: options.logger, logLevel: 'warn' as const } : { logLevel: 'off' as const }),
  });
  const now = options.now ?? (() => new Date());
  const call = async <T>(what: string, request: () => Promise<T>): Promise<T> => {
    try {
      return await request();
    } catch (err) {
      throw toLlmError(err, what, apiKey);
    }
  };

  return {
    kind: 'llm',
    async greet(agent, opts) {
      return greetingFor(agent, opts.language || agent.default_language || 'en', opts.contactFacts);
    },
    async reply(input, tools, stream) {
      return withModules(await replyWithModel(input, tools, { client, model: options.model, now, call, stream, sampling: options.sampling }), input.agent, input);
    },
    async chooseTransferRule(input) {
      return chooseTransferWithModel(input, { client, model: options.model, now, call }, options.logger);
    },
    async evaluate(input) {
      const fallback = evaluateOffline(input, now());
      const completion = await call('evaluation', () => client.chat.completions.create({
        model: options.model,
        response_format: { type: 'json_object' },
        messages: scrub([
          { role: 'system', content: evaluationPrompt(input.agent) },
          { role: 'user', content: transcriptText(input.messages, input.captured) },
        ], input.agent),
      }));
      return parseEvaluation(completion.choices[0]?.message?.content ?? null, input, fallback, parseContext(input.agent, input.agent.default_language ?? 'en', now()));
    },
  };
}

interface TurnDeps {
  client: OpenAI;
  model: string;
  now: () => Date;
  call: <T>(what: string, request: () => Promise<T>) => Promise<T>;
  /** Where the reply's text goes as it is written; without it each request answers whole. */
  stream?: ReplyStream | undefined;
  /** Sampling settings of the agent's model (issue 46). */
  sampling?: { temperature?: number | undefined; max_tokens?: number | undefined } | undefined;
}

type CompletionParams = Omit<OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming, 'stream'>;
interface Completed { content: string | null; toolCalls: ChatCompletionMessageFunctionToolCall[]; usage: TokenUsage }

/**
 * One chat completion of a turn. With `deps.stream`, it is requested as a stream: the text is handed to `onText`
 * piece by piece as it comes, tool calls are put together from their fragments, and the usage comes in the last chunk.
 */
async function complete(deps: TurnDeps, params: CompletionParams): Promise<Completed> {
  const body = { ...params, ...withSampling(deps.sampling) };
  const stream = deps.stream;
  if (!stream) {
    const completion = await deps.call('chat completion', () => deps.client.chat.completions.create(body));
    const message = completion.choices[0]?.message;
    return {
      content: message?.content ?? null,
      toolCalls: (message?.tool_calls ?? []).filter((c): c is ChatCompletionMessageFunctionToolCall => c.type === 'function'),
      usage: usageOf(completion.usage),
    };
  }
  return deps.call('chat completion', async () => {
    const chunks = await deps.client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } }, stream.signal ? { signal: stream.signal } : {});
    let content = '';
    const calls = new Map<number, { id: string; name: string; arguments: string }>();
    let usage: TokenUsage = { input_tokens: 0, output_tokens: 0 };
    for await (const chunk of chunks) {
      if (chunk.usage) usage = usageOf(chunk.usage);
      const delta = chunk.choices[0]?.delta;
      if (!delta) continue;
      if (delta.content) {
        content += delta.content;
        stream.onText(delta.content);
      }
      for (const part of delta.tool_calls ?? []) {
        const call = calls.get(part.index) ?? { id: '', name: '', arguments: '' };
        if (part.id) call.id = part.id;
        if (part.function?.name) call.name += part.function.name;
        if (part.function?.arguments) call.arguments += part.function.arguments;
        calls.set(part.index, call);
      }
    }
    // The SDK ends an aborted stream quietly: the turn must not pass what was cut off for a whole reply.
    if (stream.signal?.aborted) throw new Error('the reply was aborted');
    const toolCalls = [...calls.entries()].sort(([a], [b]) => a - b).map(([, c]): ChatCompletionMessageFunctionToolCall => ({
      id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments },
    }));
    return { content: content || null, toolCalls, usage };
  });
}

const usageOf = (usage: { prompt_tokens?: number; completion_tokens?: number } | null | undefined): TokenUsage =>
  ({ input_tokens: usage?.prompt_tokens ?? 0, output_tokens: usage?.completion_tokens ?? 0 });

/** The request fields of the agent's sampling settings (only those it sets). */
function withSampling(sampling: TurnDeps['sampling']): { temperature?: number; max_tokens?: number } {
  return {
    ...(sampling?.temperature !== undefined ? { temperature: sampling.temperature } : {}),
    ...(sampling?.max_tokens !== undefined ? { max_tokens: sampling.max_tokens } : {}),
  };
}

async function replyWithModel(input: TurnInput, tools: RuntimeTools, deps: TurnDeps): Promise<TurnResult> {
  const { agent } = input;
  const lang = pageLanguage(input.language || agent.default_language);
  const captured = { ...input.captured };
  const toolCalls: ToolCall[] = [];
  const ctx = parseContext(agent, input.language, deps.now());
  // The model will see redacted text: what the visitor just gave for the data schema is captured here first.
  if (agent.redaction) captureBeforeRedaction(agent, input.messages, captured, ctx);
  const messages: ChatCompletionMessageParam[] = scrub([
    { role: 'system', content: systemPrompt(agent, input, captured) },
    ...await authoritativeContext(input, tools, toolCalls, deps.now),
    ...history(input.messages),
  ], agent);
  const declared = [...toolDeclarations(agent.data_schema ?? []), ...(tools.agentTools ?? []).map((t): ChatCompletionFunctionTool => ({
    type: 'function', function: { name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.parameters },
  }))];
  let content: string | null = null;
  const usage: TokenUsage = { input_tokens: 0, output_tokens: 0 };
  // Up to MAX_TOOL_ROUNDS rounds of tool calls; then one more request that may not call tools.
  for (let round = 0; round <= MAX_TOOL_ROUNDS; round += 1) {
    const lastRound = round === MAX_TOOL_ROUNDS;
    const message = await complete(deps, { model: deps.model, messages, tools: declared, tool_choice: lastRound ? 'none' : 'auto' });
    usage.input_tokens += message.usage.input_tokens;
    usage.output_tokens += message.usage.output_tokens;
    const calls = message.toolCalls;
    if (!calls.length || lastRound) {
      content = message.content?.trim() || null;
      break;
    }
    messages.push({ role: 'assistant', content: message.content ?? null, tool_calls: calls });
    for (const toolCall of calls) {
      const { args, result, record } = await runTool(toolCall, agent, tools, captured, ctx);
      toolCalls.push(record ?? { name: toolCall.function.name, args, ts: deps.now().toISOString() });
      messages.push({ role: 'tool', tool_call_id: toolCall.id, content: JSON.stringify(result) });
    }
  }
  // A model that never says anything still leaves the visitor an honest answer.
  return { replies: [content ?? dontKnowReply(lang, agent.can_transfer)], toolCalls, captured, usage };
}

/** The function the model calls to hand the conversation to a person, by one of the agent's rules. */
export const TRANSFER_TOOL = 'transfer_to_human';

/**
 * The model decides whether the latest message meets a transfer rule's condition: the enabled
 * rules are listed highest priority first, and the model calls `transfer_to_human({rule_id})` or
 * answers without calling it. Only a listed rule id counts; when it names several, the highest
 * priority wins. Without enabled rules nothing is asked. When the endpoint fails, the offline
 * reading of the conditions decides, so a caller who asks for a person is never left stranded.
 */
async function chooseTransferWithModel<R extends TransferCandidate>(input: TransferInput<R>, deps: TurnDeps, logger?: LlmRuntimeOptions['logger']): Promise<R | null> {
  const rules = input.rules.filter((r) => r.enabled).sort((a, b) => b.priority - a.priority);
  if (!rules.length) return null;
  let completion: OpenAI.Chat.Completions.ChatCompletion;
  try {
    completion = await deps.call('transfer decision', () => deps.client.chat.completions.create({
      model: deps.model,
      messages: scrub([{ role: 'system', content: transferPrompt(input.agent, rules) }, ...history(input.messages)], input.agent),
      tools: [{
        type: 'function',
        function: {
          name: TRANSFER_TOOL,
          description: 'Hand the conversation to a person from the team, by the transfer rule whose condition the latest message meets.',
          parameters: {
            type: 'object',
            properties: { rule_id: { type: 'string', enum: rules.map((r) => r.id), description: 'The id of the rule whose condition is met' } },
            required: ['rule_id'],
            additionalProperties: false,
          },
        },
      }],
      tool_choice: 'auto',
    }));
  } catch (err) {
    logger?.warn(`transfer decision fell back to the rules' wording: ${(err as Error).message}`);
    return matchTransferInput({ ...input, rules });
  }
  const named = new Set((completion.choices[0]?.message?.tool_calls ?? [])
    .filter((c): c is ChatCompletionMessageFunctionToolCall => c.type === 'function' && c.function.name === TRANSFER_TOOL)
    .map((c) => {
      try {
        const args = JSON.parse(c.function.arguments || '{}') as { rule_id?: unknown };
        return typeof args.rule_id === 'string' ? args.rule_id : null;
      } catch {
        return null;
      }
    }));
  return rules.find((r) => named.has(r.id)) ?? null;
}

function transferPrompt(agent: RuntimeAgent, rules: TransferCandidate[]): string {
  return [
    `You decide whether a conversation with ${agent.name}, a business's assistant, must be handed to a person from the team.`,
    `Transfer rules, highest priority first; each says when to hand over:\n${rules.map((r) => `- rule_id ${r.id} ("${r.name}"): ${r.condition}`).join('\n')}`,
    `Read the latest message of the visitor or caller, in the light of the conversation. When it meets a rule's condition, call ${TRANSFER_TOOL} `
      + 'with that rule\'s id (the first listed when several are met). When it meets none, do not call it and answer "none".',
  ].join('\n\n');
}

/**
 * What the business said itself, for the visitor's last message: the training notes that ask
 * what it asks and the data-table row it names, as a system message the model must follow ahead
 * of anything search_knowledge returns. Empty when nothing matches.
 */
async function authoritativeContext(input: TurnInput, tools: RuntimeTools, toolCalls: ToolCall[], now: () => Date): Promise<ChatCompletionMessageParam[]> {
  const last = [...input.messages].reverse().find((m) => m.role === 'visitor' || m.role === 'caller');
  const query = last?.text.replace(/\s+/g, ' ').trim().slice(0, 500);
  if (!query) return [];
  const notes = tools.searchNotes ? await tools.searchNotes(query) : [];
  const row = tools.lookupRows ? await tools.lookupRows(query) : null;
  const lines: string[] = [];
  if (notes.length) {
    toolCalls.push({ name: 'search_training_notes', args: { query, note_question: notes[0]!.question }, ts: now().toISOString() });
    lines.push('Training notes from the business: authoritative. When the visitor asks what a note asks, answer with the note\'s answer, '
      + 'ahead of and instead of anything search_knowledge returns, and cite no source for it:',
    ...notes.map((n) => `- Q: ${n.question}\n  A: ${n.answer}`));
  }
  if (row) {
    toolCalls.push({ name: 'lookup_data_tables', args: { query, table: row.table }, ts: now().toISOString() });
    lines.push(`From the business's data table "${row.table}" (authoritative, no source to cite): ${row.text}`);
  }
  return lines.length ? [{ role: 'system', content: lines.join('\n') }] : [];
}

/** Runs one tool call locally; the result goes back to the model as the tool message. */
async function runTool(
  toolCall: ChatCompletionMessageFunctionToolCall, agent: RuntimeAgent, tools: RuntimeTools, captured: Record<string, unknown>, ctx: ParseContext,
): Promise<{ args: Record<string, unknown>; result: unknown; record?: ToolCall }> {
  let args: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(toolCall.function.arguments || '{}');
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
    args = parsed as Record<string, unknown>;
  } catch {
    return { args: { raw: toolCall.function.arguments.slice(0, 1000) }, result: { error: 'arguments must be a JSON object' } };
  }
  switch (toolCall.function.name) {
    case 'search_knowledge': {
      const query = typeof args.query === 'string' ? args.query.trim().slice(0, 500) : '';
      if (!query) return { args, result: { error: 'query must be a non-empty string' } };
      // The best passages whatever their score: the model judges whether they answer (the prompt says how to decline).
      const passages = await (tools.retrievePassages ?? tools.searchKnowledge)(query, PASSAGES);
      return {
        args,
        result: passages.length
          ? { passages: passages.map((p) => {
            // A passage of an uploaded file has no web address to give: the model cites it as "(Price list, page 2)".
            const cite = fileCitation(p.url);
            return { title: p.title, ...(p.section ? { section: p.section } : {}), ...(cite ? { cite: `(${cite})` } : { url: p.url }), text: p.text.slice(0, PASSAGE_CHARS) };
          }) }
          : { passages: [], note: 'Not on the site: nothing in the knowledge answers this. Say you do not know; do not guess.' },
      };
    }
    case 'capture_data': {
      const field = (agent.data_schema ?? []).find((f) => f.name === args.field);
      if (!field) return { args, result: { ok: false, error: `unknown field; known fields: ${(agent.data_schema ?? []).map((f) => f.name).join(', ')}` } };
      const checked = normalizeFieldValue(field, args.value, ctx);
      if (!checked.ok) return { args, result: { ok: false, error: checked.error } };
      captured[field.name] = checked.value;
      return { args, result: { ok: true, field: field.name, value: checked.value } };
    }
    default: {
      // One of the business's own tools: its call is bounded, signed and recorded by the caller's callAgentTool.
      if (tools.callAgentTool && tools.agentTools?.some((t) => t.name === toolCall.function.name)) {
        const { record, result } = await tools.callAgentTool(toolCall.function.name, args);
        return { args, result, record };
      }
      return { args, result: { error: `unknown tool ${toolCall.function.name}` } };
    }
  }
}

function parseContext(agent: RuntimeAgent, language: string, now: Date): ParseContext {
  const lang: Lang = pageLanguage(language || agent.default_language);
  return { lang, country: defaultCountry(agent, lang), now };
}

function toolDeclarations(schema: DataField[]): ChatCompletionFunctionTool[] {
  const declared: ChatCompletionFunctionTool[] = [{
    type: 'function',
    function: {
      name: 'search_knowledge',
      description: "Search this business's knowledge (its website pages and knowledge bases). Returns the best passages with their page URL.",
      parameters: {
        type: 'object',
        properties: { query: { type: 'string', description: 'What to look for, in a few keywords' } },
        required: ['query'],
        additionalProperties: false,
      },
    },
  }];
  if (schema.length) {
    declared.push({
      type: 'function',
      function: {
        name: 'capture_data',
        description: 'Record a value the visitor gave for one of the data fields to capture.',
        parameters: {
          type: 'object',
          properties: {
            field: { type: 'string', enum: schema.map((f) => f.name), description: 'The field name' },
            value: { type: ['string', 'number', 'boolean'], description: 'The value, as the visitor gave it' },
          },
          required: ['field', 'value'],
          additionalProperties: false,
        },
      },
    });
  }
  return declared;
}

function languageName(language: string): string {
  const code = language.toLowerCase().split(/[-_]/)[0] ?? 'en';
  return LANGUAGE_NAMES[code] ?? language;
}

/** The system prompt: who the agent is, how to use the tools, its rules, goals, data to capture and what is known of the visitor. */
export function systemPrompt(agent: RuntimeAgent, input: Pick<TurnInput, 'language' | 'contactFacts'>, captured: Record<string, unknown>): string {
  const language = input.language || agent.default_language || 'en';
  const outbound = agent.outbound ?? null;
  const sections = [
    outbound ? outboundPrompt(agent, outbound, language) : `You are ${agent.name}, the chat assistant on this business's website.`,
    agent.persona?.trim() ? renderTemplate(agent.persona, agent, input.contactFacts) : '',
    styleDirection(agent.style ?? null),
    outbound
      ? `Reply in ${languageName(language)}, in one or two short spoken sentences. Never read out a URL or a "Source:" line: say it is on our website.`
      : `Reply in ${languageName(language)} (page language "${language}"), in 1 to 3 short sentences.`,
    'Before answering a question about the business, its products, services or policies, call search_knowledge. '
      + (outbound ? 'Answer only from what it returns. ' : 'Answer only from what it returns and end with "Source: <url>" of the page you used (for a passage with `cite`, end with its `cite` instead). ')
      + 'It returns the closest passages whether or not they answer: use only a passage that says what was asked, about the very place, product or service asked about '
      + '(not another location\'s, not something a blog post only mentions). '
      + `When none of them says it, say honestly that you don't know and ${agent.can_transfer
        ? 'offer to connect the visitor with a person from the team'
        : 'offer to take their contact details so the team gets back to them'}. Never invent facts.`,
  ];
  if (agent.guardrails?.length) {
    sections.push(`Rules you must never break (if the visitor asks for something a rule forbids, decline politely and cite the rule):\n${agent.guardrails.map((g) => `- ${renderTemplate(g, agent, input.contactFacts)}`).join('\n')}`);
  }
  sections.push(modulesPrompt(agent, input.contactFacts));
  if (agent.goals?.length) sections.push(`Goals of this conversation:\n${agent.goals.map((g) => `- ${g}`).join('\n')}`);
  const schema = agent.data_schema ?? [];
  if (schema.length) {
    const lines = schema.map((f) => {
      const have = captured[f.name] !== undefined ? ` (already captured: ${JSON.stringify(captured[f.name])})` : '';
      return `- ${f.name} (${f.type}${f.required ? ', required' : ''})${f.description ? `: ${f.description}` : ''}${have}`;
    });
    sections.push('Data to capture: call capture_data as soon as the visitor gives one of these values; ask for missing required ones one at a time, '
      + `in a natural sentence, when it fits the conversation:\n${lines.join('\n')}`);
  }
  if (Object.keys(input.contactFacts).length) sections.push(`Known facts about this visitor from earlier conversations: ${JSON.stringify(input.contactFacts)}`);
  return sections.filter(Boolean).join('\n\n');
}

const REGISTER_DIRECTION = {
  formal: 'Speak formally: courteous, complete sentences, no slang and no contractions; greet with "Hello" and close with "Thank you".',
  casual: 'Speak casually, as a friendly person would: a relaxed tone and contractions are fine ("Hi there", "Thanks!").',
  neutral: '',
} as const;

/** The voice profile's direction of the agent's words (issue 43): its formality, and its custom_direction as written. */
export function styleDirection(style: VoiceStyle | null): string {
  if (!style) return '';
  const direction = style.custom_direction?.trim();
  return [REGISTER_DIRECTION[style.formality], direction ? `Direction for how you speak and word your replies: ${direction}` : ''].filter(Boolean).join(' ');
}

/** A call the agent placed: it called them, who it is, for which business, and why (the campaign's objective). */
function outboundPrompt(agent: RuntimeAgent, call: OutboundCall, language: string): string {
  const business = businessOf(agent);
  return [
    `You are ${agent.name}${business ? `, calling on behalf of ${business}` : ''}. This is a phone call that YOU placed: the person did not call you, you called them.`,
    call.objective ? `The objective of this call: ${call.objective}.` : 'The call has no stated objective beyond introducing the business.',
    `You opened with: "${introduction(agent, call, pageLanguage(language))}".`,
    'If they ask who is calling or why you are calling, say who you are, for which business, and the objective. '
      + 'If they are not interested, or ask not to be called again, thank them politely and say goodbye. '
      + 'If they ask to be called back later, agree and say goodbye.',
  ].join(' ');
}

/** The messages as the agent's redaction lets them reach the provider (issue 47): every text content masked. */
function scrub(messages: ChatCompletionMessageParam[], agent: RuntimeAgent): ChatCompletionMessageParam[] {
  const policy = agent.redaction;
  if (!policy) return messages;
  return messages.map((m) => (typeof m.content === 'string' ? { ...m, content: redactText(m.content, policy) } as ChatCompletionMessageParam : m));
}

/** Captures from the visitor's last message, unredacted, what the data schema asks (the model cannot read it masked). */
function captureBeforeRedaction(agent: RuntimeAgent, messages: TranscriptMessage[], captured: Record<string, unknown>, ctx: ParseContext): void {
  const last = messages.at(-1);
  if (!last || (last.role !== 'visitor' && last.role !== 'caller')) return;
  const schema = agent.data_schema ?? [];
  const asked = askedField(schema, messages.slice(0, -1).reverse().find((m) => m.role === 'agent')?.text);
  for (const { field, value } of captureFrom(schema, last.text, asked, captured, ctx)) captured[field] = value;
}

function history(messages: TranscriptMessage[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  for (const m of messages) {
    if (m.role === 'visitor' || m.role === 'caller') out.push({ role: 'user', content: m.text });
    else if (m.role === 'agent') out.push({ role: 'assistant', content: m.text });
    else if (m.role === 'human_agent') out.push({ role: 'assistant', content: `[a person from the team] ${m.text}` });
    // System notes of the transcript (joined, left...) are not the model's business.
  }
  return out;
}

function transcriptText(messages: TranscriptMessage[], captured: Record<string, unknown>): string {
  const lines = messages.map((m) => `[${m.role}] ${m.text}`);
  return `Transcript:\n${lines.join('\n') || '(no messages)'}\n\nData captured during the conversation: ${JSON.stringify(captured)}`;
}

function evaluationPrompt(agent: RuntimeAgent): string {
  const tracking = enabledTrackingRules(agent);
  const criteria = [...(agent.goals ?? []), ...(agent.acceptance_criteria ?? [])];
  const schema = agent.data_schema ?? [];
  return [
    "You evaluate a finished conversation between a website's AI agent and a visitor. Answer with one JSON object and nothing else, of this shape:",
    '{"extracted_data": {"<field>": <value>}, "criteria_results": [{"criterion": "<criterion text, copied exactly>", "verdict": "pass" | "fail" | "not_applicable", "reason": "<one short sentence>"}], '
      + `"intent": "<snake_case label>", "outcome": ${OUTCOMES.map((o) => `"${o}"`).join(' | ')}}`,
    schema.length
      ? `Data fields to extract (leave out what the visitor never gave; email lower-case, phone in E.164, date as YYYY-MM-DD):\n${schema.map((f) => `- ${f.name} (${f.type})${f.description ? `: ${f.description}` : ''}`).join('\n')}`
      : 'There are no data fields: extracted_data is {}.',
    criteria.length
      ? `Criteria, one result each:\n${criteria.map((c) => `- ${c}`).join('\n')}\nVerdicts: not_applicable when the conversation never touched the criterion's topic; pass when it was met; fail otherwise.`
      : 'There are no criteria: criteria_results is [].',
    ...(tracking.length
      ? [`Tracking rules: add "labels": ["<rule name, copied exactly>"] to the object, naming every rule whose condition the conversation meets ([] when none does):\n${tracking.map((r) => `- ${r.name}: ${r.condition}`).join('\n')}`]
      : []),
    'Intent: what the visitor wanted, e.g. pricing_question, support_request, book_demo, contact_request, general_question, other.',
    'Outcome: abandoned when the visitor never wrote; handoff_requested when they asked for a person; resolved when their questions were answered; unresolved otherwise.',
  ].join('\n\n');
}

/**
 * Reads the model's evaluation. The model is not trusted: an answer that is not a JSON object
 * with at least one of the expected keys is garbage and the offline evaluator's result is used
 * whole; otherwise each part is checked on its own (data values normalized per field type,
 * verdicts and outcome within their sets, one result per criterion) and whatever is missing or
 * invalid is taken from the offline evaluation.
 */
export function parseEvaluation(
  content: string | null, input: { agent: RuntimeAgent; captured: Record<string, unknown> }, fallback: Evaluation, ctx: ParseContext,
): Evaluation {
  let parsed: unknown;
  try {
    parsed = JSON.parse((content ?? '').trim().replace(/^```(?:json)?\s*|\s*```$/g, ''));
  } catch {
    return fallback;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return fallback;
  const raw = parsed as Record<string, unknown>;
  if (!['extracted_data', 'criteria_results', 'intent', 'outcome'].some((k) => k in raw)) return fallback;

  const schema = input.agent.data_schema ?? [];
  const modelData: Record<string, unknown> = {};
  if (raw.extracted_data && typeof raw.extracted_data === 'object' && !Array.isArray(raw.extracted_data)) {
    const given = raw.extracted_data as Record<string, unknown>;
    for (const field of schema) {
      const checked = normalizeFieldValue(field, given[field.name], ctx);
      if (checked.ok) modelData[field.name] = checked.value;
    }
  }
  const capturedData = Object.fromEntries(schema.filter((f) => input.captured[f.name] !== undefined).map((f) => [f.name, input.captured[f.name]]));

  const items = Array.isArray(raw.criteria_results) ? raw.criteria_results.filter((x): x is Record<string, unknown> => !!x && typeof x === 'object') : [];
  const key = (s: unknown) => (typeof s === 'string' ? s.trim().toLowerCase() : '');
  const criteria_results = fallback.criteria_results.map((offline) => {
    const item = items.find((x) => key(x.criterion) === key(offline.criterion));
    const verdict = item?.verdict;
    if (!item || typeof verdict !== 'string' || !VERDICTS.includes(verdict as Verdict)) return offline;
    const reason = typeof item.reason === 'string' && item.reason.trim() ? item.reason.trim().slice(0, 500) : 'judged by the model';
    return { criterion: offline.criterion, verdict: verdict as Verdict, reason };
  });

  const intent = typeof raw.intent === 'string' ? raw.intent.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 64) : '';
  const outcome = OUTCOMES.includes(raw.outcome as Outcome) ? (raw.outcome as Outcome) : fallback.outcome;
  const labels = fallback.labels ? checkedLabels(input.agent, raw.labels) ?? fallback.labels : undefined;
  return {
    extracted_data: { ...fallback.extracted_data, ...modelData, ...capturedData },
    criteria_results,
    intent: intent || fallback.intent,
    outcome,
    ...(labels ? { labels } : {}),
  };
}

/** Long enough fragments of the key are scrubbed too, for servers that echo part of it back. */
function redact(text: string, apiKey: string): string {
  let out = text.replace(/Bearer\s+\S+/gi, 'Bearer [redacted]');
  if (apiKey.length < 8) return apiKey ? out.split(apiKey).join('[redacted]') : out;
  out = out.split(apiKey).join('[redacted]');
  for (let i = 0; i + 8 <= apiKey.length; i += 1) out = out.split(apiKey.slice(i, i + 8)).join('[redacted]');
  return out;
}

function toLlmError(err: unknown, what: string, apiKey: string): LlmError {
  const status = sdk !== undefined && err instanceof sdk.APIError ? err.status : undefined;
  const detail = err instanceof Error ? err.message : String(err);
  // A new error without `cause`: the SDK's error keeps the response headers and request details.
  return new LlmError(redact(`LLM ${what} failed${status ? ` (HTTP ${status})` : ''}: ${detail}`, apiKey), status);
}
