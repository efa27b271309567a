import { Type, type Static } from '@sinclair/typebox';
import { Nullable, pick, Uuid } from './common.ts';
import { AgentName, AgentPatchProps, AgentSchema, SiteUrl, type Agent } from './agents.ts';

export const WidgetId = Type.String({ pattern: '^wgt_[A-Za-z0-9_-]{20,64}$', description: 'Widget id: `wgt_` and at least 20 URL-safe characters (the agent\'s public_key)' });
export const WidgetParams = Type.Object({ id: WidgetId }, { additionalProperties: false });

/**
 * The agent fields the widget view shows and its PATCH takes, in this order: the one list behind
 * `WidgetSchema`, `WidgetPatchSchema` and `toWidget`. Each keeps the agent field's schema.
 */
export const WIDGET_FIELDS = [
  'name', 'status', 'display_mode', 'position', 'voice', 'persona', 'theme', 'intro_title', 'intro_subtitle', 'suggested_prompts',
  'button_label', 'show_label', 'domains',
] as const;

const a = AgentSchema.properties;

/** The widget: the appearance and distribution view of an agent (the same entity as `/agents/:agent_id`). */
export const WidgetSchema = Type.Object({
  id: WidgetId,
  agent_id: { ...Uuid, description: 'The same entity under /api/v1/rest/agents' },
  ...pick(a, WIDGET_FIELDS),
  site_url: a.site_url,
  created_at: a.created_at,
  updated_at: a.updated_at,
}, { $id: 'Widget', additionalProperties: false });
export type Widget = Static<typeof WidgetSchema>;

/** The widget view of an agent. */
export function toWidget(agent: Agent): Widget {
  return {
    id: agent.public_key, agent_id: agent.id, ...pick(agent, WIDGET_FIELDS),
    site_url: agent.site_url, created_at: agent.created_at, updated_at: agent.updated_at,
  };
}

export const WidgetCreateSchema = Type.Object({
  name: AgentName,
  site_url: SiteUrl,
}, { $id: 'WidgetCreate', additionalProperties: false });

/** The widget fields PATCH accepts; each has the schema of the agent field of the same name. */
export const WidgetPatchSchema = Type.Object(pick(AgentPatchProps, WIDGET_FIELDS), {
  $id: 'WidgetPatch', additionalProperties: false, description: 'Any subset of the widget fields; `{}` changes nothing',
});

export const WidgetListQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50, description: '1 to 100' }),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Opaque: the `next_cursor` of the previous page' })),
}, { additionalProperties: false });

export const WidgetListSchema = Type.Object({
  data: Type.Array(WidgetSchema),
  next_cursor: Nullable(Type.String({ description: 'Pass as `cursor` for the next page; null on the last page' })),
}, { $id: 'WidgetList', additionalProperties: false });
