import { Type, type Static } from '@sinclair/typebox';
import { ListEnvelope, Timestamp, Uuid } from './common.ts';

const ShortCode = Type.String({
  pattern: '^[A-Za-z0-9_-]{1,40}$', 'x-code': 'invalid_short_code',
  description: 'What a member types after `/` in /inbox: letters, digits, `_` and `-`, at most 40; unique per organization (case-insensitive)',
});

export const CannedResponseSchema = Type.Object({
  id: Uuid,
  short_code: Type.String(),
  title: Type.String(),
  text: Type.String({ description: 'May hold `{{variables}}`: `visitor.name`, `visitor.email`, `member.name`, `member.email`, `agent.name`, or any given in `variables`' }),
  variables: Type.Array(Type.String(), { description: 'The variable names the text uses' }),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'CannedResponse', additionalProperties: false });
export type CannedResponse = Static<typeof CannedResponseSchema>;

export const CannedResponseCreateSchema = Type.Object({
  short_code: ShortCode,
  title: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  text: Type.String({ minLength: 1, maxLength: 4000 }),
}, { $id: 'CannedResponseCreate', additionalProperties: false });

export const CannedResponsePatchSchema = Type.Partial(CannedResponseCreateSchema, { $id: 'CannedResponsePatch', additionalProperties: false });

export const CannedResponseListSchema = ListEnvelope(CannedResponseSchema, 'CannedResponseList');

export const CannedResponseListQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50, description: '1 to 100' }),
  offset: Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 }),
  q: Type.Optional(Type.String({ maxLength: 40, description: 'Short codes starting with this (case-insensitive)' })),
}, { additionalProperties: false });

export const CannedExpandSchema = Type.Object({
  short_code: Type.String({ minLength: 1, maxLength: 41, description: 'With or without the leading `/`' }),
  conversation_id: Type.Optional(Type.String({ ...Uuid, description: 'Fills `visitor.*` and `agent.*` from this conversation' })),
  variables: Type.Optional(Type.Record(Type.String({ pattern: '^[A-Za-z0-9_.]{1,64}$' }), Type.String({ maxLength: 1000 }), { maxProperties: 50 })),
}, { $id: 'CannedExpand', additionalProperties: false });

export const CannedExpansionSchema = Type.Object({
  text: Type.String(),
  missing: Type.Array(Type.String(), { description: 'Variables with no value: left as written' }),
}, { $id: 'CannedExpansion', additionalProperties: false });
