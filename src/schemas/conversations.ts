import { Type, type Static } from '@sinclair/typebox';
import { ListEnvelope, Nullable, PageQueryProps, StringEnum, Timestamp, Uuid } from './common.ts';
import { VoiceTurnTimingSchema } from './voice.ts';

/** Where a conversation took place. */
export const SURFACES = ['web', 'phone', 'sms', 'email', 'campaign'] as const;

export const CONVERSATION_STATUSES = ['active', 'ended'] as const;
export const MESSAGE_ROLES = ['visitor', 'agent', 'human_agent', 'caller', 'system'] as const;
export type MessageRole = (typeof MESSAGE_ROLES)[number];
export const VERDICTS = ['pass', 'fail', 'not_applicable'] as const;
export type Verdict = (typeof VERDICTS)[number];
/** How a conversation ended up, as evaluation judges it. */
export const OUTCOMES = ['resolved', 'unresolved', 'handoff_requested', 'abandoned'] as const;
export type Outcome = (typeof OUTCOMES)[number];

const CriterionResultSchema = Type.Object({
  criterion: Type.String({ description: 'The goal or acceptance criterion, as the agent states it' }),
  verdict: StringEnum(VERDICTS, { description: '`not_applicable` does not count against the pass rate' }),
  reason: Type.String({ description: 'Why the evaluation decided so' }),
}, { $id: 'CriterionResult' });
export type CriterionResult = Static<typeof CriterionResultSchema>;

/** A conversation as the list shows it. */
export const ConversationSchema = Type.Object({
  id: Uuid,
  widget_id: Type.String({ ...Uuid, description: 'The `id` of the agent that held the conversation' }),
  surface: StringEnum(SURFACES),
  is_simulated: Type.Boolean({ description: 'A simulation (test run), not a real visitor or caller' }),
  status: StringEnum(CONVERSATION_STATUSES),
  started_at: Timestamp,
  ended_at: Nullable(Timestamp),
  duration_seconds: Type.Integer({ minimum: 0, description: 'Whole seconds from the start to the end (to the last activity while active)' }),
  page_url: Nullable(Type.String({ description: 'The page a web conversation started on' })),
  intent: Nullable(Type.String({ description: 'What the visitor wanted (snake_case label); null until evaluated' })),
  outcome: Nullable(StringEnum(OUTCOMES, { description: 'How it ended up; null until evaluated' })),
  extracted_data: Type.Record(Type.String(), Type.Unknown(), { description: 'Data extracted by the evaluation, per the agent\'s data_schema' }),
  criteria_results: Type.Array(CriterionResultSchema, { description: 'A verdict per goal and acceptance criterion, once evaluated' }),
  contact_id: Nullable(Type.String({ ...Uuid, description: 'The contact the conversation was matched to' })),
  labels: Type.Array(Type.String(), {
    description: 'Case-folded labels: the names of the agent\'s tracking rules the conversation meets (added at evaluation) and those members set in the live inbox',
  }),
}, { $id: 'Conversation', additionalProperties: false });
export type Conversation = Static<typeof ConversationSchema>;

export const TranscriptMessageSchema = Type.Object({
  id: Uuid,
  role: StringEnum(MESSAGE_ROLES),
  text: Type.String(),
  ts: Timestamp,
  cut: Type.Optional(Type.Boolean({ description: 'Present (true) on an agent reply whose stream the visitor aborted: `text` is what was sent before' })),
}, { $id: 'TranscriptMessage', additionalProperties: false });
export type TranscriptMessage = Static<typeof TranscriptMessageSchema>;

export const ToolCallSchema = Type.Object({
  name: Type.String(),
  args: Type.Record(Type.String(), Type.Unknown()),
  ts: Timestamp,
  status: Type.Optional(StringEnum(['ok', 'error', 'timeout', 'mocked'] as const, { description: 'For the agent\'s tools (the business\'s endpoints): how the call ended' })),
  duration_ms: Type.Optional(Type.Integer({ minimum: 0, description: 'For the agent\'s tools: how long the call took' })),
}, { $id: 'ToolCall', additionalProperties: false });
export type ToolCall = Static<typeof ToolCallSchema>;

/** One conversation: the row, its transcript, what the agent's tools did, and a preview card. */
export const ConversationDetailSchema = Type.Composite([ConversationSchema, Type.Object({
  messages: Type.Array(TranscriptMessageSchema, { description: 'The transcript, oldest first' }),
  tool_calls: Type.Array(ToolCallSchema, { description: 'Oldest first' }),
  usage: Type.Object({
    input_tokens: Type.Integer({ minimum: 0, description: 'Prompt tokens of every model request of the conversation' }),
    output_tokens: Type.Integer({ minimum: 0, description: 'Completion tokens of every model request of the conversation' }),
    turns: Type.Array(Type.Object({
      message_id: Uuid,
      input_tokens: Type.Integer({ minimum: 0 }),
      output_tokens: Type.Integer({ minimum: 0 }),
    }, { additionalProperties: false }), { description: 'Per turn a model answered: the tokens of its requests, by the turn\'s (first) agent message' }),
  }, { additionalProperties: false, description: 'Tokens the LLM used (0 and no turns with the offline runtime)' }),
  card_url: Type.String({
    format: 'uri',
    description: 'A self-contained HTML transcript card for an iframe; the signed URL needs no token and is valid 15 minutes',
  }),
  voice_turns: Type.Array(VoiceTurnTimingSchema, { description: 'A streamed call\'s agent turns with their latency timings (empty for other conversations)' }),
  has_recording: Type.Boolean({ description: 'A recording of the call is stored (`GET /conversations/:id/recording`)' }),
})], { $id: 'ConversationDetail', additionalProperties: false });

export const ConversationListQuery = Type.Object({
  widget_id: Type.Optional(Type.String({ ...Uuid, description: 'Only this agent\'s conversations (its `id`)' })),
  simulated: Type.Optional(StringEnum(['1', 'all'] as const, {
    description: 'Absent: real conversations only. `1`: simulations only. `all`: both',
  })),
  tag: Type.Optional(Type.String({ minLength: 1, maxLength: 50, description: 'Only conversations carrying this tag (any case)' })),
  label: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only conversations carrying this label (any case): a tracking rule\'s name or a live inbox label' })),
  from: Type.Optional(Type.String({ format: 'date-time', description: 'Only conversations started at or after this time' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'Only conversations started before this time' })),
  surface: Type.Optional(StringEnum(SURFACES, { description: 'Only this surface' })),
  status: Type.Optional(StringEnum(CONVERSATION_STATUSES, { description: 'Only active or only ended ones' })),
  outcome: Type.Optional(StringEnum(OUTCOMES, { description: 'Only evaluated ones with this outcome' })),
  contact_id: Type.Optional(Type.String({ ...Uuid, description: 'Only this contact\'s conversations' })),
  assignee_id: Type.Optional(Type.String({ ...Uuid, description: 'Only conversations assigned to this member (their `id`)' })),
  team_id: Type.Optional(Type.String({ ...Uuid, description: 'Only conversations routed to this team' })),
  q: Type.Optional(Type.String({
    minLength: 1, maxLength: 200, pattern: '\\S',
    description: 'Full-text search over the transcripts (not the service\'s `system` notes): every word must occur, each message '
      + 'read in its own language (stemmed: "booking" finds "booked"); `"quoted words"` for a phrase, `or` between alternatives, '
      + '`-word` to exclude one',
  })),
  ...PageQueryProps,
}, { additionalProperties: false });
export type ConversationListQuery = Static<typeof ConversationListQuery>;

export const ConversationListSchema = ListEnvelope(ConversationSchema, 'ConversationList');
