import { Type, type Static } from '@sinclair/typebox';
import { PERMISSIONS } from './permissions.ts';
import { ListEnvelope, Nullable, StringEnum, Timestamp, Uuid } from './common.ts';

export const PermissionSchema = StringEnum(PERMISSIONS);

export const ApiKeySchema = Type.Object({
  id: Uuid,
  name: Type.String(),
  permissions: Type.Array(PermissionSchema),
  kind: StringEnum(['org', 'user'] as const, { description: '`org` for `sk_` keys, `user` for `ut_` tokens' }),
  user_email: Nullable(Type.String({ format: 'email' })),
  token_hint: Type.String({ description: 'Prefix and last four characters, to recognize a key' }),
  created_at: Timestamp,
}, { $id: 'ApiKey', additionalProperties: false });

export const ApiKeyCreatedSchema = Type.Composite([ApiKeySchema, Type.Object({
  token: Type.String({ description: 'The secret: shown in this response only' }),
})], { $id: 'ApiKeyCreated', additionalProperties: false });

export const ApiKeyCreateSchema = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  permissions: Type.Array(PermissionSchema, { uniqueItems: true, maxItems: PERMISSIONS.length }),
  user_email: Type.Optional(Type.String({ format: 'email', maxLength: 320, description: 'Makes a user-scoped `ut_` token for this member (created if new)' })),
}, { $id: 'ApiKeyCreate', additionalProperties: false });
export type ApiKeyCreate = Static<typeof ApiKeyCreateSchema>;

export const ApiKeyListSchema = ListEnvelope(ApiKeySchema, 'ApiKeyList');
