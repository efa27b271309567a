import { Type, type Static } from '@sinclair/typebox';
import { Nullable, PageQueryProps, StringEnum, Timestamp, Uuid, ListEnvelope } from './common.ts';

export const AGENT_STATUSES = ['draft', 'active', 'paused'] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'Display name, 1 to 200 characters' });
const Persona = Type.String({ maxLength: 20_000, description: 'System prompt' });
const Voice = Type.String({ minLength: 1, maxLength: 100, description: 'Name of a base voice' });
export const SiteUrl = Type.String({
  format: 'uri', pattern: '^[hH][tT][tT][pP][sS]?://[^/?#@\\s]+', maxLength: 2048, 'x-code': 'invalid_url',
  description: 'http or https URL of the website the agent learns from',
});

/** The agent as every endpoint returns it. */
export const AgentSchema = Type.Object({
  id: Uuid,
  public_key: Type.String({ pattern: '^wgt_[A-Za-z0-9_-]{20,}$', description: 'Widget id, used in the embed snippet' }),
  name: Type.String(),
  status: StringEnum(AGENT_STATUSES),
  voice: Nullable(Type.String()),
  persona: Nullable(Type.String()),
  site_url: Nullable(Type.String()),
  has_pending_draft: Type.Boolean({ description: 'True when publishing the staged draft would change the configuration' }),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'Agent', additionalProperties: false });
export type Agent = Static<typeof AgentSchema>;

export const AgentCreateSchema = Type.Object({
  name: Name,
  site_url: Type.Optional(SiteUrl),
}, { $id: 'AgentCreate', additionalProperties: false });
export type AgentCreate = Static<typeof AgentCreateSchema>;

/** The Basics group of PATCH; status may only be set to `paused` or `active`. */
export const AgentBasicsPatchProps = {
  name: Type.Optional(Name),
  persona: Type.Optional(Nullable(Persona)),
  voice: Type.Optional(Nullable(Voice)),
  status: Type.Optional(StringEnum(['paused', 'active'] as const, { description: '`paused` stops new conversations; `active` resumes them' })),
};
export const AgentPatchSchema = Type.Object(AgentBasicsPatchProps, { $id: 'AgentPatch', additionalProperties: false });
export type AgentPatch = Static<typeof AgentPatchSchema>;

export const AgentListQuery = Type.Object({
  status: Type.Optional(StringEnum(AGENT_STATUSES)),
  ...PageQueryProps,
}, { additionalProperties: false });

export const AgentDeleteQuery = Type.Object({
  delete_kbs: Type.Optional(Type.Boolean({ description: 'Also delete knowledge bases used only by this agent (needs knowledge.write)' })),
}, { additionalProperties: false });

export const AgentListSchema = ListEnvelope(AgentSchema, 'AgentList');
