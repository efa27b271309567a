import { Type, type Static, type TSchema } from '@sinclair/typebox';

// An explicit pattern: the `uuid` format would also admit a `urn:uuid:` prefix.
export const Uuid = Type.String({ pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$', description: 'UUID (time-ordered v7)' });
export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds and Z' });

/** A string enum that validates and documents as `enum` (one error per field, not one per branch). */
export function StringEnum<const T extends readonly string[]>(values: T, opts: Record<string, unknown> = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...opts });
}

/**
 * Accepts null as well (PATCH bodies where null clears a field). A simple typed schema becomes
 * `type: [T, "null"]`, so its own errors (too long, wrong type) are reported as such.
 */
export function Nullable<T extends TSchema>(schema: T) {
  const type = (schema as { type?: unknown }).type;
  const values = (schema as { enum?: unknown[] }).enum;
  // An enum lists null too, or it would refuse what the type admits.
  if (typeof type === 'string') return Type.Unsafe<Static<T> | null>({ ...schema, type: [type, 'null'], ...(values ? { enum: [...values, null] } : {}) });
  return Type.Union([schema, Type.Null()]);
}

/**
 * The named members of an object, in the order of `keys`: picks the same fields from a schema's
 * `properties` and from a value of it, so one list of names drives both.
 */
export function pick<T extends object, const K extends readonly (keyof T)[]>(from: T, keys: K): Pick<T, K[number]> {
  return Object.fromEntries(keys.map((k) => [k, from[k]])) as Pick<T, K[number]>;
}

export const IdParams = Type.Object({ id: Uuid }, { additionalProperties: false });

export const PageQueryProps = {
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50, description: '1 to 100' }),
  offset: Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 }),
};
export const PageQuery = Type.Object(PageQueryProps, { additionalProperties: false });
/** The query of a route that declares none: every parameter is unknown (400 `unknown_field`, as in a body). */
export const NoQuery = Type.Object({}, { additionalProperties: false });

/** The offset-list envelope: `{data, total, limit, offset}`, newest first. */
export function ListEnvelope<T extends TSchema>(item: T, $id: string) {
  return Type.Object({
    data: Type.Array(item),
    total: Type.Integer({ minimum: 0 }),
    limit: Type.Integer(),
    offset: Type.Integer(),
  }, { $id, additionalProperties: false });
}

export const FieldErrorSchema = Type.Object({
  field: Type.String({ description: 'Path of the offending field, e.g. `theme.mode` or `domains[2]`' }),
  code: Type.String({ description: 'Stable snake_case rule identifier' }),
  message: Type.String(),
});

export const ProblemSchema = Type.Object({
  type: Type.String({ format: 'uri' }),
  title: Type.String(),
  status: Type.Integer(),
  code: Type.String({ description: 'Stable snake_case identifier: branch on it, never on text' }),
  detail: Type.String(),
  errors: Type.Optional(Type.Array(FieldErrorSchema)),
  required_permission: Type.Optional(Type.String({ description: 'With `missing_permission`: the permission the token lacks' })),
  contact_id: Type.Optional(Type.String({ description: 'With `contact_exists`: the contact that already has the phone number or email' })),
  field: Type.Optional(Type.String({ description: 'With `contact_exists`: `phone_e164` or `email_lower`, the identity that collided' })),
  member_id: Type.Optional(Type.String({ description: 'With `member_exists`: the member that already has the e-mail' })),
  transfer_rule_count: Type.Optional(Type.Integer({ description: 'With `sip_trunk_in_use`: how many transfer rules still use the trunk' })),
  request_id: Type.String(),
}, { $id: 'Problem', description: 'RFC 9457 problem details' });

/** A phone number in E.164: `+`, a non-zero country digit, at most 15 digits in all. */
export const E164 = Type.String({
  pattern: '^\\+[1-9][0-9]{1,14}$', maxLength: 16, 'x-code': 'invalid_e164',
  description: 'Phone number in E.164 form, e.g. +14155550123', examples: ['+14155550123'],
});

/** A lower-cased email address (max 254 characters, RFC 5321). */
export const Email = Type.String({ format: 'email', maxLength: 254, 'x-code': 'invalid_email', description: 'Email address' });

/** An identifier: a letter or underscore, then letters, digits or underscores. */
export const Identifier = Type.String({
  pattern: '^[A-Za-z_][A-Za-z0-9_]*$', minLength: 1, maxLength: 64, 'x-code': 'invalid_identifier',
  description: 'Identifier: letters, digits and underscores, not starting with a digit; at most 64 characters',
});
