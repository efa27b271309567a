import { Type, type Static } from '@sinclair/typebox';
import { Nullable, pick, StringEnum, Timestamp, Uuid } from './common.ts';
import { AgentSchema, type Agent } from './agents.ts';
import { WidgetId } from './widgets.ts';

export const PublicWidgetParams = Type.Object({ public_key: WidgetId }, { additionalProperties: false });
export const PublicConversationParams = Type.Object({ public_key: WidgetId, id: Uuid }, { additionalProperties: false });

/** The agent fields the embed renders with, in this order: the one list behind the config's schema and its value. */
export const PUBLIC_CONFIG_FIELDS = [
  'display_mode', 'position', 'theme', 'intro_title', 'intro_subtitle', 'suggested_prompts', 'localized_copy', 'button_label', 'show_label',
  'logo_url', 'launcher_icon_url', 'launcher_icon_kind', 'default_language', 'satisfaction_survey',
] as const;

const a = AgentSchema.properties;

/** What the embed needs to render: appearance, every language of the intro copy, and whether it may start a conversation. */
export const PublicWidgetConfigSchema = Type.Object({
  widget_id: WidgetId,
  name: a.name,
  status: a.status,
  accepting_conversations: Type.Boolean({ description: 'False while the agent is paused: the widget loads but does not start conversations' }),
  ...pick(a, PUBLIC_CONFIG_FIELDS),
}, { $id: 'PublicWidgetConfig', additionalProperties: false });

/** The public config of an agent's widget. */
export function toPublicWidgetConfig(agent: Agent): Static<typeof PublicWidgetConfigSchema> {
  return {
    widget_id: agent.public_key, name: agent.name, status: agent.status, accepting_conversations: agent.status !== 'paused',
    ...pick(agent, PUBLIC_CONFIG_FIELDS),
  };
}

export const MessageSchema = Type.Object({
  id: Uuid,
  role: StringEnum(['visitor', 'agent', 'human_agent', 'caller', 'system'] as const),
  text: Type.String(),
  ts: Timestamp,
  cut: Type.Optional(Type.Boolean({ description: 'Present (true) on an agent reply whose stream was aborted: `text` is what was sent before' })),
}, { $id: 'Message', additionalProperties: false, description: 'A transcript message' });

export const VisitorId = Type.String({ pattern: '^[A-Za-z0-9_-]{8,64}$', description: 'The visitor\'s id kept by the embed (8 to 64 URL-safe characters)' });

export const PublicConversationCreateSchema = Type.Object({
  page_url: Type.String({ format: 'uri', pattern: '^[hH][tT][tT][pP][sS]?://', maxLength: 2048, 'x-code': 'invalid_url', description: 'The page the visitor is on' }),
  language: Type.Optional(Type.String({ pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$', maxLength: 35, 'x-code': 'invalid_language', description: 'The page language (BCP 47)' })),
  visitor_id: Type.Optional(VisitorId),
}, { $id: 'PublicConversationCreate', additionalProperties: false });

export const PublicConversationStartedSchema = Type.Object({
  conversation_id: Uuid,
  visitor_id: VisitorId,
  visitor_token: Type.String({ description: 'Send as `X-Visitor-Token` on this conversation\'s requests' }),
  messages: Type.Array(MessageSchema, { description: 'The greeting' }),
}, { $id: 'PublicConversationStarted', additionalProperties: false });

export const PublicMessageCreateSchema = Type.Object({
  text: Type.String({ minLength: 1, maxLength: 4000, pattern: '\\S', description: 'What the visitor says, 1 to 4000 characters' }),
}, { $id: 'PublicMessageCreate', additionalProperties: false });

export const PublicMessagesSchema = Type.Object({
  messages: Type.Array(MessageSchema),
}, { $id: 'PublicMessages', additionalProperties: false });

export const PublicMessagesQuery = Type.Object({
  after: Type.Optional({ ...Uuid, description: 'Only messages after this one' }),
}, { additionalProperties: false });

export const PublicConversationEndedSchema = Type.Object({
  conversation_id: Uuid,
  status: StringEnum(['ended'] as const),
  ended_at: Nullable(Timestamp),
}, { $id: 'PublicConversationEnded', additionalProperties: false });
