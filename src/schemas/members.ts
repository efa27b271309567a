import { Type, type Static } from '@sinclair/typebox';
import { E164, Email, ListEnvelope, Nullable, StringEnum, Timestamp, Uuid } from './common.ts';
import { PERMISSIONS, type Permission } from './permissions.ts';
import { ApiKeySchema } from './api-keys.ts';
import { SURFACES } from './conversations.ts';

/** What a member may do, from least to most (issue 45). */
export const MEMBER_ROLES = ['operator', 'supervisor', 'admin'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

export const AVAILABILITIES = ['online', 'away', 'offline'] as const;
export type Availability = (typeof AVAILABILITIES)[number];

/**
 * Roles onto the existing permissions: an operator works conversations (of the agents they serve); a
 * supervisor also reads the rest of the organization; an admin holds every permission.
 */
export const ROLE_PERMISSIONS: Record<MemberRole, readonly Permission[]> = {
  operator: ['conversations.read', 'conversations.write', 'agents.read'],
  supervisor: ['conversations.read', 'conversations.write', 'agents.read', 'org.read', 'reports.read', 'simulations.read', 'sites.read', 'campaigns.read'],
  admin: PERMISSIONS,
};

const Phone = E164;

/** How a member is told of an assignment or of a conversation waiting in the queue (each channel on or off). */
export const NotificationPreferencesSchema = Type.Object({
  assigned: Type.Boolean({ default: true, description: 'Be told when a conversation is assigned to you' }),
  waiting: Type.Boolean({ default: true, description: 'Be told when a conversation in your scope waits in the queue' }),
  email: Type.Boolean({ default: true, description: 'By e-mail (SMTP_URL, or an .eml file without it)' }),
  sms: Type.Boolean({ default: false, description: 'By SMS to `phone`, from the agent\'s active number' }),
  browser: Type.Boolean({ default: true, description: 'By the browser\'s Notification API on /inbox' }),
  sound: Type.Boolean({ default: true, description: 'A tone on /inbox' }),
}, { $id: 'NotificationPreferences', additionalProperties: false });
export type NotificationPreferences = Static<typeof NotificationPreferencesSchema>;

export const DEFAULT_PREFERENCES: NotificationPreferences = { assigned: true, waiting: true, email: true, sms: false, browser: true, sound: true };

export const MemberSchema = Type.Object({
  id: Uuid,
  email: Type.String(),
  name: Type.String(),
  role: StringEnum(MEMBER_ROLES),
  availability: StringEnum(AVAILABILITIES, { description: 'Only `online` members are assigned conversations' }),
  agent_ids: Type.Array(Uuid, { description: 'The agents the member serves; empty: every agent' }),
  team_ids: Type.Array(Uuid),
  max_conversations: Type.Integer({ minimum: 1, maximum: 100, description: 'The most open conversations assigned to the member at once' }),
  open_conversations: Type.Integer({ minimum: 0, description: 'Active conversations assigned to the member now' }),
  phone: Nullable(Phone),
  notification_preferences: NotificationPreferencesSchema,
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'Member', additionalProperties: false });
export type Member = Static<typeof MemberSchema>;

const PreferencesPatch = Type.Partial(NotificationPreferencesSchema, { additionalProperties: false });

export const MemberCreateSchema = Type.Object({
  email: Email,
  name: Type.String({ minLength: 1, maxLength: 200 }),
  role: Type.Optional(StringEnum(MEMBER_ROLES, { default: 'operator' })),
  availability: Type.Optional(StringEnum(AVAILABILITIES, { default: 'offline' })),
  agent_ids: Type.Optional(Type.Array(Uuid, { uniqueItems: true, maxItems: 500 })),
  max_conversations: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 5 })),
  phone: Type.Optional(Nullable(Phone)),
  notification_preferences: Type.Optional(PreferencesPatch),
}, { $id: 'MemberCreate', additionalProperties: false });
export type MemberCreate = Static<typeof MemberCreateSchema>;

export const MemberPatchSchema = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  role: Type.Optional(StringEnum(MEMBER_ROLES)),
  availability: Type.Optional(StringEnum(AVAILABILITIES)),
  agent_ids: Type.Optional(Type.Array(Uuid, { uniqueItems: true, maxItems: 500 })),
  max_conversations: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  phone: Type.Optional(Nullable(Phone)),
  notification_preferences: Type.Optional(PreferencesPatch),
}, { $id: 'MemberPatch', additionalProperties: false });
export type MemberPatch = Static<typeof MemberPatchSchema>;

/** What a member changes of themselves (`PATCH /members/me`). */
export const MemberSelfPatchSchema = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  availability: Type.Optional(StringEnum(AVAILABILITIES)),
  phone: Type.Optional(Nullable(Phone)),
  notification_preferences: Type.Optional(PreferencesPatch),
}, { $id: 'MemberSelfPatch', additionalProperties: false });

export const MemberListQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50, description: '1 to 100' }),
  offset: Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 }),
  availability: Type.Optional(StringEnum(AVAILABILITIES)),
  role: Type.Optional(StringEnum(MEMBER_ROLES)),
}, { additionalProperties: false });

export const MemberListSchema = ListEnvelope(MemberSchema, 'MemberList');

/** A member's sign-in token: the key it is, with the token shown only here. */
export const MemberTokenSchema = Type.Composite([ApiKeySchema, Type.Object({
  token: Type.String({ description: 'The `ut_` token: shown in this response only' }),
})], { $id: 'MemberToken', additionalProperties: false });

// ---- teams

export const TeamSchema = Type.Object({
  id: Uuid,
  name: Type.String(),
  member_ids: Type.Array(Uuid),
  agent_ids: Type.Array(Uuid, { description: 'Agents whose conversations go to this team' }),
  surfaces: Type.Array(StringEnum(SURFACES), { description: 'Channels whose conversations go to this team (when no team names the agent)' }),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'Team', additionalProperties: false });
export type Team = Static<typeof TeamSchema>;

export const TeamCreateSchema = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  member_ids: Type.Optional(Type.Array(Uuid, { uniqueItems: true, maxItems: 500 })),
  agent_ids: Type.Optional(Type.Array(Uuid, { uniqueItems: true, maxItems: 500 })),
  surfaces: Type.Optional(Type.Array(StringEnum(SURFACES), { uniqueItems: true })),
}, { $id: 'TeamCreate', additionalProperties: false });
export type TeamCreate = Static<typeof TeamCreateSchema>;

export const TeamPatchSchema = Type.Partial(TeamCreateSchema, { $id: 'TeamPatch', additionalProperties: false });
export type TeamPatch = Static<typeof TeamPatchSchema>;

export const TeamListSchema = ListEnvelope(TeamSchema, 'TeamList');
