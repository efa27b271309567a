import { Type, type Static } from '@sinclair/typebox';
import { Nullable, StringEnum, Timestamp, Uuid } from './common.ts';
import { ConversationSchema } from './conversations.ts';
import { WidgetId } from './widgets.ts';

export const FEEDBACK_KINDS = ['rating', 'thumbs'] as const;
export const THUMBS = ['up', 'down'] as const;

const Comment = Type.String({ maxLength: 2000, description: 'What the visitor wrote, 2000 characters at most' });

/** One piece of a visitor's feedback: the end-of-chat rating, or a vote on one reply. */
export const FeedbackSchema = Type.Object({
  id: Uuid,
  conversation_id: Uuid,
  widget_id: Type.String({ ...Uuid, description: 'The `id` of the agent that held the conversation' }),
  kind: StringEnum(FEEDBACK_KINDS, { description: '`rating`: the end-of-chat survey (one per conversation); `thumbs`: a vote on one reply (one per message)' }),
  rating: Nullable(Type.Integer({ minimum: 1, maximum: 5, description: 'For `rating`: 1 (very unhappy) to 5 (very happy)' })),
  thumbs: Nullable(StringEnum(THUMBS, { description: 'For `thumbs`' })),
  message_id: Nullable(Type.String({ ...Uuid, description: 'For `thumbs`: the reply voted on' })),
  comment: Nullable(Comment),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'Feedback', additionalProperties: false });
export type Feedback = Static<typeof FeedbackSchema>;

export const RatingBodySchema = Type.Object({
  rating: Type.Integer({ minimum: 1, maximum: 5, 'x-code': 'invalid_rating', description: '1 (very unhappy) to 5 (very happy)' }),
  comment: Type.Optional(Nullable(Comment)),
}, { $id: 'RatingBody', additionalProperties: false });

export const ThumbsBodySchema = Type.Object({
  thumbs: StringEnum(THUMBS),
  comment: Type.Optional(Nullable(Comment)),
}, { $id: 'ThumbsBody', additionalProperties: false });

export const PublicMessageParams = Type.Object({
  public_key: WidgetId, id: Uuid, message_id: Uuid,
}, { additionalProperties: false });

export const ConversationFeedbackSchema = Type.Object({
  data: Type.Array(FeedbackSchema, { description: 'Oldest first' }),
}, { $id: 'ConversationFeedback', additionalProperties: false });

export const SATISFACTION_GROUPS = ['agent', 'member', 'team'] as const;

export const SatisfactionQuery = Type.Object({
  group_by: Type.Optional(StringEnum(SATISFACTION_GROUPS, {
    default: 'agent', description: '`agent` (default), `member` (the assigned member) or `team`: conversations with none are left out',
  })),
  from: Type.Optional(Type.String({ format: 'date-time', description: 'Feedback given at or after this time' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'Feedback given before this time' })),
}, { additionalProperties: false });

export const SatisfactionRowSchema = Type.Object({
  group_by: StringEnum(SATISFACTION_GROUPS),
  id: Type.String({ ...Uuid, description: 'The agent\'s, member\'s or team\'s id' }),
  ratings: Type.Integer({ minimum: 0, description: 'End-of-chat ratings given' }),
  average_rating: Nullable(Type.Number({ description: 'Their mean, 1 to 5; null without ratings' })),
  csat: Nullable(Type.Number({ description: 'CSAT: the share of ratings that are 4 or 5, 0 to 1; null without ratings' })),
  thumbs_up: Type.Integer({ minimum: 0 }),
  thumbs_down: Type.Integer({ minimum: 0 }),
}, { $id: 'SatisfactionRow', additionalProperties: false });
export type SatisfactionRow = Static<typeof SatisfactionRowSchema>;

export const SatisfactionReportSchema = Type.Object({
  data: Type.Array(SatisfactionRowSchema, { description: 'One row per agent, member or team with feedback, most ratings first' }),
}, { $id: 'SatisfactionReport', additionalProperties: false });

export const FeedbackEventDataSchema = Type.Object({
  feedback: FeedbackSchema,
  conversation: ConversationSchema,
}, { $id: 'FeedbackEventData', additionalProperties: false });
