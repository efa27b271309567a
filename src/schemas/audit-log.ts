import { Type, type Static } from '@sinclair/typebox';
import { Nullable, PageQueryProps, StringEnum, Timestamp, Uuid } from './common.ts';

/** How a write reached the service: the REST API, an MCP tool call, or the /inbox console (a page of this service). */
export const AUDIT_CHANNELS = ['rest', 'mcp', 'inbox'] as const;
export type AuditChannel = (typeof AUDIT_CHANNELS)[number];
export const AUDIT_OUTCOMES = ['succeeded', 'failed'] as const;
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number];

/** One write, as the audit log keeps it. */
export const AuditEntrySchema = Type.Object({
  id: Uuid,
  at: Timestamp,
  actor: Type.Object({
    type: StringEnum(['api_key', 'member'] as const, { description: '`member` for a user-scoped (`ut_`) token, else `api_key`' }),
    api_key_id: Type.String({ ...Uuid, description: 'The key (or user token) that made the request' }),
    member_id: Nullable(Type.String({ ...Uuid, description: 'The member of a user-scoped token' })),
  }, { additionalProperties: false }),
  channel: StringEnum(AUDIT_CHANNELS),
  operation: Type.String({ description: 'The operation id, as in the OpenAPI document and the MCP tool name (e.g. `create_agent`)' }),
  method: StringEnum(['POST', 'PUT', 'PATCH', 'DELETE'] as const),
  path: Type.String({ description: 'The request path' }),
  resource_id: Nullable(Type.String({ description: 'The resource acted on: the created resource\'s id, else the last id in the path' })),
  status: Type.Integer({ description: 'The HTTP status answered' }),
  outcome: StringEnum(AUDIT_OUTCOMES, { description: '`succeeded` for a 1xx-3xx answer, `failed` otherwise' }),
  error_code: Nullable(Type.String({ description: 'The problem `code` of a failed request' })),
  client_address: Nullable(Type.String({ description: 'The client\'s IP address (behind TRUSTED_PROXIES, the forwarded one)' })),
  request_id: Nullable(Type.String({ description: 'The request\'s `X-Request-Id`' })),
}, { $id: 'AuditEntry', additionalProperties: false });
export type AuditEntry = Static<typeof AuditEntrySchema>;

export const AuditLogQuery = Type.Object({
  from: Type.Optional(Type.String({ format: 'date-time', description: 'Only entries at or after this time' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'Only entries before this time' })),
  operation: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only this operation id' })),
  resource_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only entries about this resource' })),
  api_key_id: Type.Optional(Type.String({ ...Uuid, description: 'Only this key\'s (or user token\'s) writes' })),
  member_id: Type.Optional(Type.String({ ...Uuid, description: 'Only this member\'s writes' })),
  channel: Type.Optional(StringEnum(AUDIT_CHANNELS)),
  outcome: Type.Optional(StringEnum(AUDIT_OUTCOMES)),
  ...PageQueryProps,
}, { additionalProperties: false });
export type AuditLogQuery = Static<typeof AuditLogQuery>;

export const AuditLogSchema = Type.Object({
  data: Type.Array(AuditEntrySchema),
  total: Type.Integer({ minimum: 0 }),
  limit: Type.Integer(),
  offset: Type.Integer(),
}, { $id: 'AuditLog', additionalProperties: false });
