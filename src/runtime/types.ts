import type { AskedIn, Passage } from '../answers/retrieval.ts';
import type { RedactionPolicy } from '../domain/redaction.ts';
import type { NoteMatch } from '../knowledge/notes.ts';
import type { RowAnswer } from '../knowledge/rows.ts';
import type { DataField } from '../schemas/agents.ts';
import type { CriterionResult, MessageRole, Outcome, ToolCall, TranscriptMessage, Verdict } from '../schemas/conversations.ts';

export type { CriterionResult, DataField, MessageRole, Outcome, ToolCall, TranscriptMessage, Verdict };

/**
 * The agent runtime: what answers a visitor or caller. One interface, two implementations: an
 * offline one grounded in the agent's knowledge (the default, no outside service) and one that
 * calls an OpenAI-compatible chat-completions endpoint (LLM_BASE_URL, LLM_API_KEY, LLM_MODEL).
 */

/** What the runtime knows of the agent: its configuration as GET /agents/:id shows it. */
export interface RuntimeAgent {
  id: string;
  name: string;
  persona: string | null;
  greeting: string | null;
  guardrails: string[] | null;
  goals: string[] | null;
  acceptance_criteria: string[] | null;
  data_schema: DataField[] | null;
  default_language: string | null;
  config_variables: Record<string, string> | null;
  /** Enabled or not, as configured; the runtimes use the enabled ones (`prompt-modules.ts`). */
  prompt_modules?: { name: string; content: string; enabled: boolean }[] | null;
  /** Labels applied to conversations that meet their condition, decided at evaluation. */
  tracking_rules?: { name: string; condition: string; enabled: boolean }[] | null;
  /** Whether a human can take over (the agent has an enabled transfer rule or live chat alerts). */
  can_transfer: boolean;
  /** The wording its voice profile asks for (issue 43): `formality` picks the phrasings, `custom_direction` is told to a model. Null without a profile. */
  style?: VoiceStyle | null;
  /** Set on a call the agent placed (a campaign call): why it calls. The agent introduces itself and says so. */
  outbound?: OutboundCall | null;
  /** What the text sent to a model provider must hide (the agent's redaction with the `llm` target); null: nothing. */
  redaction?: RedactionPolicy | null;
}

/** A voice profile's direction of the agent's words. */
export interface VoiceStyle { formality: 'casual' | 'neutral' | 'formal'; custom_direction: string | null }

/** A call the agent placed: its campaign's `objective`, `opening_line` and `voicemail_message` (templates). */
export interface OutboundCall {
  objective: string | null;
  opening_line: string | null;
  voicemail_message: string | null;
}

/** What the runtime may call during a turn; each call is recorded as a ToolCall by the runtime. */
export interface RuntimeTools {
  /**
   * Ranked passages of the agent's knowledge (its site and knowledge bases) with their page URLs. `asked`: where `query`
   * stands when it is one part of a message (`parts.ts`): the story told besides (read, weighing less), and the whole
   * message (the entity it names is the one a part that names none asks about).
   */
  searchKnowledge(query: string, limit?: number, asked?: AskedIn): Promise<Passage[]>;
  /**
   * The passages most likely to answer, best first, with no answer threshold (hybrid retrieval): what
   * a model is given to judge for itself. Without it, the model gets `searchKnowledge`'s.
   */
  retrievePassages?(query: string, limit?: number): Promise<Passage[]>;
  /** The agent's training notes that ask what the query asks (same retrieval and threshold), best first: answered ahead of the site. */
  searchNotes?(query: string): Promise<NoteMatch[]>;
  /** The answer from the data-table row the query names, or null when it names none. */
  lookupRows?(query: string): Promise<RowAnswer | null>;
  /** The agent's own tools (`call_on: model`): offered to the model as functions besides the runtime's. */
  agentTools?: { name: string; description: string | null; parameters: Record<string, unknown> }[];
  /** Calls one of `agentTools`: the record for `tool_calls` (status, duration) and what goes back to the model. Never throws. */
  callAgentTool?(name: string, args: Record<string, unknown>): Promise<{ record: ToolCall; result: unknown }>;
}

export interface TurnInput {
  agent: RuntimeAgent;
  /** The conversation so far, oldest first, ending with the visitor's new message. */
  messages: TranscriptMessage[];
  /** Data captured so far (per data_schema), to ask only for what is missing. */
  captured: Record<string, unknown>;
  /** Facts known of this contact from earlier conversations (cross_channel_memory), or empty. */
  contactFacts: Record<string, unknown>;
  /** The page language (`en`, `fr`...), for the reply's language. */
  language: string;
}

export interface TurnResult {
  /** The agent's replies, in order (usually one). */
  replies: string[];
  toolCalls: ToolCall[];
  /** The captured data after this turn (previous values plus what this turn captured). */
  captured: Record<string, unknown>;
  /** Tokens the model used for this turn, every request of it summed; absent when no model was asked (the offline runtime). */
  usage?: TokenUsage;
}

/** Tokens a model used, as its endpoint reported them. */
export interface TokenUsage { input_tokens: number; output_tokens: number }

/**
 * Where a reply goes while it is produced (issue 46): `onText` receives each piece of the reply's text as the model
 * writes it (the LLM runtime streams tokens; a runtime that has the reply at once calls it once, or not at all, and the
 * caller then has only the whole reply). Not tied to any transport: Server-Sent Events, a WebSocket or a speech
 * synthesizer read it alike. `signal` aborts the turn: the runtime stops asking the model and throws.
 */
export interface ReplyStream {
  onText(delta: string): void;
  signal?: AbortSignal;
}

export interface Evaluation {
  extracted_data: Record<string, unknown>;
  /** One per goal and per acceptance criterion. */
  criteria_results: CriterionResult[];
  /** A short snake_case label of what the visitor wanted, e.g. `pricing_question`, `book_demo`, `other`. */
  intent: string;
  outcome: Outcome;
  /** The names of the enabled tracking rules the conversation meets (case-folded); absent when the agent has none. */
  labels?: string[];
}

/** A transfer rule as the runtime weighs it: its natural-language condition and priority (highest first). */
export interface TransferCandidate { id: string; name: string; condition: string; priority: number; enabled: boolean }

export interface TransferInput<R extends TransferCandidate> {
  agent: RuntimeAgent;
  /** The conversation so far, oldest first, ending with the visitor's or caller's new message. */
  messages: TranscriptMessage[];
  rules: R[];
}

export interface AgentRuntime {
  readonly kind: 'offline' | 'llm';
  /** The first message of a conversation. */
  greet(agent: RuntimeAgent, opts: { language: string; contactFacts: Record<string, unknown> }): Promise<string>;
  reply(input: TurnInput, tools: RuntimeTools, stream?: ReplyStream): Promise<TurnResult>;
  /**
   * The enabled transfer rule whose condition the latest visitor or caller message meets (the
   * highest priority when several do), or null. Offline: by the condition's words; LLM: the model decides.
   */
  chooseTransferRule<R extends TransferCandidate>(input: TransferInput<R>): Promise<R | null>;
  /**
   * Optional: what it can do with a caller's words before their turn is certain (a streamed call's endpoint is still
   * awaited), such that the turn's reply is the same, done ahead or not. Offline: the question read (reply.ts, readAhead).
   */
  readAhead?(said: string): void;
  /** After the conversation ends: data per data_schema, a verdict per goal and criterion, intent and outcome. */
  evaluate(input: { agent: RuntimeAgent; messages: TranscriptMessage[]; captured: Record<string, unknown> }): Promise<Evaluation>;
}
