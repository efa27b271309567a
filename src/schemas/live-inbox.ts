import { Type, type Static } from '@sinclair/typebox';
import { Email, Nullable, StringEnum, Timestamp, Uuid } from './common.ts';
import { SURFACES, TranscriptMessageSchema } from './conversations.ts';

/** Who answers the visitor: the agent, or a member who took over. */
export const CONVERSATION_MODES = ['agent', 'human'] as const;
export type ConversationMode = (typeof CONVERSATION_MODES)[number];

/** A conversation in progress, as the live inbox lists it. */
export const LiveConversationSchema = Type.Object({
  id: Uuid,
  widget_id: Type.String({ ...Uuid, description: 'The `id` of the agent holding the conversation' }),
  surface: StringEnum(SURFACES),
  status: StringEnum(['active', 'ended'] as const),
  started_at: Timestamp,
  last_activity_at: Timestamp,
  presence: StringEnum(['online', 'offline'] as const, { description: '`online` when the visitor polled or wrote in the last 30 seconds' }),
  unread_count: Type.Integer({ minimum: 0, description: 'Visitor messages the calling member has not marked read' }),
  assigned_to: Nullable(Type.String({ description: 'The e-mail of the member the conversation is assigned to' })),
  mode: StringEnum(CONVERSATION_MODES, { description: '`human` while a member holds the conversation (the agent does not answer)' }),
  held_by: Nullable(Type.String({ description: 'The e-mail of the member holding the conversation in human mode' })),
  needs_human: Type.Boolean({ description: 'The visitor asked for a person, the agent offered a hand-off, or a transfer rule matched' }),
  contact_id: Nullable(Type.String(Uuid)),
  last_message: Nullable(TranscriptMessageSchema),
}, { $id: 'LiveConversation', additionalProperties: false });
export type LiveConversation = Static<typeof LiveConversationSchema>;

export const LiveConversationListSchema = Type.Object({
  data: Type.Array(LiveConversationSchema),
}, { $id: 'LiveConversationList', additionalProperties: false });

export const ADVISOR_ACTIONS = ['take_over', 'hand_back', 'assign', 'mark_read', 'reply'] as const;

export const AdvisorActionSchema = Type.Object({
  action: StringEnum(ADVISOR_ACTIONS),
  user_email: Type.Optional(Type.String({ ...Email, description: '`assign`: the member to assign the conversation to' })),
  text: Type.Optional(Type.String({ minLength: 1, maxLength: 4000, description: '`reply`: what the member says to the visitor' })),
}, {
  $id: 'AdvisorAction', additionalProperties: false,
  description: '`take_over`, `hand_back`, `assign {user_email}`, `mark_read`, `reply {text}` (human mode only)',
});
export type AdvisorActionInput = Static<typeof AdvisorActionSchema>;

export const NoteSchema = Type.Object({
  id: Uuid,
  text: Type.String(),
  author: Type.String({ description: 'The e-mail of the member who wrote it, or `api key <name>`' }),
  created_at: Timestamp,
}, { $id: 'ConversationNote', additionalProperties: false });
export type Note = Static<typeof NoteSchema>;

export const ANNOTATION_LIMIT = 50;
const Tag = Type.String({ minLength: 1, maxLength: 50, pattern: '\\S', description: 'Case-folded; duplicates are dropped' });

export const AnnotationsSchema = Type.Object({
  tags: Type.Array(Type.String()),
  labels: Type.Array(Type.String()),
  summary_rating: Nullable(Type.Integer({ minimum: 1, maximum: 5 })),
  notes: Type.Array(NoteSchema, { description: 'Oldest first' }),
}, { $id: 'ConversationAnnotations', additionalProperties: false });
export type Annotations = Static<typeof AnnotationsSchema>;

export const AnnotationsPatchSchema = Type.Object({
  tags: Type.Optional(Type.Array(Tag, { maxItems: ANNOTATION_LIMIT })),
  labels: Type.Optional(Type.Array(Tag, { maxItems: ANNOTATION_LIMIT })),
  summary_rating: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 5 }))),
}, { $id: 'ConversationAnnotationsPatch', additionalProperties: false, description: 'Replaces the lists given; notes are appended through their own endpoint' });
export type AnnotationsPatch = Static<typeof AnnotationsPatchSchema>;

export const NoteCreateSchema = Type.Object({
  text: Type.String({ minLength: 1, maxLength: 4000, pattern: '\\S' }),
}, { $id: 'ConversationNoteCreate', additionalProperties: false });

/** Tags and labels as stored: trimmed, lower-cased, each once, in first-seen order. */
export function foldTags(values: readonly string[]): string[] {
  return [...new Set(values.map((v) => v.trim().toLowerCase()))];
}
