import { Type, type Static } from '@sinclair/typebox';
import { Nullable, StringEnum, Timestamp, Uuid } from './common.ts';
import { AGENT_STATUSES, AgentName, AgentPatchProps, DISPLAY_MODES, POSITIONS, SiteUrl, ThemeSchema } from './agents.ts';

export const WidgetId = Type.String({ pattern: '^wgt_[A-Za-z0-9_-]{20,64}$', description: 'Widget id: `wgt_` and at least 20 URL-safe characters (the agent\'s public_key)' });
export const WidgetParams = Type.Object({ id: WidgetId }, { additionalProperties: false });

/** The widget: the appearance and distribution view of an agent (the same entity as `/agents/:agent_id`). */
export const WidgetSchema = Type.Object({
  id: WidgetId,
  agent_id: { ...Uuid, description: 'The same entity under /api/v1/rest/agents' },
  name: Type.String(),
  status: StringEnum(AGENT_STATUSES),
  display_mode: StringEnum(DISPLAY_MODES),
  position: StringEnum(POSITIONS),
  voice: Nullable(Type.String()),
  persona: Nullable(Type.String()),
  theme: ThemeSchema,
  intro_title: Nullable(Type.String()),
  intro_subtitle: Nullable(Type.String()),
  suggested_prompts: Type.Array(Type.String()),
  button_label: Nullable(Type.String()),
  show_label: Type.Boolean(),
  domains: Type.Array(Type.String(), { description: 'Host allowlist' }),
  site_url: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'Widget', additionalProperties: false });
export type Widget = Static<typeof WidgetSchema>;

export const WidgetCreateSchema = Type.Object({
  name: AgentName,
  site_url: SiteUrl,
}, { $id: 'WidgetCreate', additionalProperties: false });

const p = AgentPatchProps;
/** The widget fields PATCH accepts; each has the schema of the agent field of the same name. */
export const WidgetPatchSchema = Type.Object({
  name: p.name, status: p.status, display_mode: p.display_mode, position: p.position, voice: p.voice, persona: p.persona,
  theme: p.theme, intro_title: p.intro_title, intro_subtitle: p.intro_subtitle, suggested_prompts: p.suggested_prompts,
  button_label: p.button_label, show_label: p.show_label, domains: p.domains,
}, { $id: 'WidgetPatch', additionalProperties: false, description: 'Any subset of the widget fields; `{}` changes nothing' });

export const WidgetListQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50, description: '1 to 100' }),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Opaque: the `next_cursor` of the previous page' })),
}, { additionalProperties: false });

export const WidgetListSchema = Type.Object({
  data: Type.Array(WidgetSchema),
  next_cursor: Nullable(Type.String({ description: 'Pass as `cursor` for the next page; null on the last page' })),
}, { $id: 'WidgetList', additionalProperties: false });
