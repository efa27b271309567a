import { Type, type Static } from '@sinclair/typebox';
import { Identifier, ListEnvelope, Nullable, StringEnum, Timestamp, Uuid } from './common.ts';

/** Limits of the contract (Agent tools). */
export const AGENT_TOOL_LIMITS = {
  toolsPerAgent: 20, parameterProperties: 20, answerBytes: 64 * 1024, parametersBytes: 16 * 1024, defaultTimeoutSeconds: 10,
} as const;

export const TOOL_METHODS = ['POST', 'GET'] as const;
export const TOOL_CALL_ON = ['model', 'data_captured'] as const;
export const TOOL_MODES = ['live', 'sandbox', 'mock'] as const;
/** How a conversation's tool calls go out: `live` to the tool's URL, `sandbox` to the service's echo endpoint, `mock` nowhere. */
export type ToolMode = (typeof TOOL_MODES)[number];
export const TOOL_CALL_STATUSES = ['ok', 'error', 'timeout', 'mocked'] as const;
export type ToolCallStatus = (typeof TOOL_CALL_STATUSES)[number];

/** Names of the runtime's own functions: a tool may not shadow them. */
export const RESERVED_TOOL_NAMES = ['search_knowledge', 'capture_data', 'search_training_notes', 'lookup_data_tables'] as const;

const Name = { ...Identifier, description: 'The function name the model sees: an identifier, unique per agent (at most 64 characters)' };
const Description = Type.String({ maxLength: 1000, description: 'What the tool does and when to call it (the model reads it), up to 1,000 characters' });
const Parameters = Type.Record(Type.String(), Type.Unknown(), {
  description: `A JSON Schema of the arguments: \`{"type": "object", "properties": {...}}\` with at most ${AGENT_TOOL_LIMITS.parameterProperties} properties; it is compiled when saved (a schema that does not compile is 400)`,
});
const ToolUrl = Type.String({
  format: 'uri', pattern: '^https?://', maxLength: 2048, 'x-code': 'invalid_url',
  description: 'Where calls go: https (http only with ALLOW_PRIVATE_NETWORK_TARGETS); never a private address',
});
const Method = StringEnum(TOOL_METHODS, { description: '`POST` (arguments as the JSON body) or `GET` (arguments as query parameters)' });
const Timeout = Type.Integer({ minimum: 1, maximum: 30, description: 'Seconds to wait for the answer, 1 to 30 (default 10)' });
const CallOn = StringEnum(TOOL_CALL_ON, {
  description: '`model`: offered to the LLM runtime as a function it may call; `data_captured`: called once per conversation when the agent\'s data_schema is complete, with the captured fields as arguments (every runtime)',
});
const Secret = Type.String({ pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$', description: 'Signing secret (Standard Webhooks): shown only on create and rotate-secret' });

/** A tool as every endpoint answers it: never with its secret. */
export const AgentToolSchema = Type.Object({
  id: Uuid,
  name: Type.String(),
  description: Nullable(Type.String()),
  parameters: Type.Record(Type.String(), Type.Unknown()),
  url: Type.String(),
  method: StringEnum(TOOL_METHODS),
  timeout_seconds: Type.Integer(),
  call_on: StringEnum(TOOL_CALL_ON),
  enabled: Type.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'AgentTool', additionalProperties: false, description: 'An HTTP endpoint of the business the agent calls, signed with Standard Webhooks headers' });
export type AgentTool = Static<typeof AgentToolSchema>;

export const AgentToolWithSecretSchema = Type.Composite([AgentToolSchema, Type.Object({ secret: Secret })],
  { $id: 'AgentToolWithSecret', additionalProperties: false });
export type AgentToolWithSecret = Static<typeof AgentToolWithSecretSchema>;

export const AgentToolCreateSchema = Type.Object({
  name: Name,
  description: Type.Optional(Nullable(Description)),
  parameters: Type.Optional(Parameters),
  url: ToolUrl,
  method: Type.Optional(Method),
  timeout_seconds: Type.Optional(Timeout),
  call_on: Type.Optional(CallOn),
  enabled: Type.Optional(Type.Boolean({ description: 'Default true' })),
}, { $id: 'AgentToolCreate', additionalProperties: false, description: 'Defaults: parameters `{"type":"object","properties":{}}`, method `POST`, timeout_seconds 10, call_on `model`, enabled true' });
export type AgentToolCreate = Static<typeof AgentToolCreateSchema>;

export const AgentToolPatchSchema = Type.Object({
  name: Type.Optional(Name),
  description: Type.Optional(Nullable(Description)),
  parameters: Type.Optional(Parameters),
  url: Type.Optional(ToolUrl),
  method: Type.Optional(Method),
  timeout_seconds: Type.Optional(Timeout),
  call_on: Type.Optional(CallOn),
  enabled: Type.Optional(Type.Boolean()),
}, { $id: 'AgentToolPatch', additionalProperties: false, description: 'Any subset of the fields; `{}` changes nothing' });
export type AgentToolPatch = Static<typeof AgentToolPatchSchema>;

export const AgentToolListSchema = ListEnvelope(AgentToolSchema, 'AgentToolList');

/** One call as the operator's log lists it: no arguments (they live only in the conversation's `tool_calls`). */
export const AgentToolCallSchema = Type.Object({
  id: Uuid,
  conversation_id: Nullable(Uuid),
  status: StringEnum(TOOL_CALL_STATUSES),
  duration_ms: Type.Integer({ minimum: 0 }),
  created_at: Timestamp,
}, { $id: 'AgentToolCall', additionalProperties: false });
export type AgentToolCall = Static<typeof AgentToolCallSchema>;
export const AgentToolCallListSchema = ListEnvelope(AgentToolCallSchema, 'AgentToolCallList');

export const AgentToolParams = Type.Object({ id: Uuid, toolId: Uuid }, { additionalProperties: false });

/** What a `sandbox` call POSTs to the service's echo endpoint (whatever the tool's method). */
export const ToolEchoBodySchema = Type.Object({
  tool: Type.Optional(Type.String({ maxLength: 64, description: 'The tool\'s name' })),
  arguments: Type.Optional(Type.Unknown({ description: 'The arguments the tool would have received' })),
}, { $id: 'ToolEchoBody', additionalProperties: false });

/** What the sandbox echo endpoint answers: the call as it arrived. */
export const ToolEchoSchema = Type.Object({
  sandbox: Type.Literal(true),
  tool: Nullable(Type.String()),
  arguments: Type.Unknown(),
  webhook_id: Nullable(Type.String()),
}, { $id: 'ToolEcho', additionalProperties: false });

/** A tool as the manifest (export, import) carries it: no id, no secret (import makes a new one). */
export const ManifestToolSchema = Type.Object({
  name: Name,
  description: Type.Optional(Nullable(Description)),
  parameters: Parameters,
  url: ToolUrl,
  method: Method,
  timeout_seconds: Timeout,
  call_on: CallOn,
  enabled: Type.Boolean(),
}, { additionalProperties: false });
export type ManifestTool = Static<typeof ManifestToolSchema>;
