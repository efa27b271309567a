import { Type, type Static } from '@sinclair/typebox';
import { Nullable, StringEnum, Timestamp, Uuid } from './common.ts';

/** One step of a conversation's assignment history (and the `data.assignment` of `conversation.assigned` / `.released`). */
export const ASSIGNMENT_ACTIONS = ['assigned', 'reassigned', 'released'] as const;
export const ASSIGNMENT_REASONS = ['round_robin', 'manual', 'timeout', 'offline', 'released', 'handed_back', 'closed'] as const;

export const AssignmentSchema = Type.Object({
  id: Uuid,
  conversation_id: Uuid,
  action: StringEnum(ASSIGNMENT_ACTIONS),
  member_id: Nullable(Type.String(Uuid)),
  member_email: Nullable(Type.String()),
  team_id: Nullable(Type.String(Uuid)),
  reason: StringEnum(ASSIGNMENT_REASONS, {
    description: '`round_robin` (the next available member of the routed team), `manual` (by a member or key), `timeout` (the assignee did not take it '
      + 'over in time), `offline` (the assignee went away or offline), `released` (by hand, back to the queue), `handed_back` (a member handed the '
      + 'conversation back to the agent: nobody holds it, and it is not queued), `closed` (the conversation was closed; the member stays named on it)',
  }),
  by_member_id: Nullable(Type.String(Uuid)),
  created_at: Timestamp,
}, { $id: 'Assignment', additionalProperties: false });
export type Assignment = Static<typeof AssignmentSchema>;

export const AssignmentListSchema = Type.Object({ data: Type.Array(AssignmentSchema) }, { $id: 'AssignmentList', additionalProperties: false });

export const AssignBodySchema = Type.Object({
  member_id: Type.Optional(Type.String({ ...Uuid, description: 'The member to assign to; absent: the next available member of the routed team (round-robin)' })),
}, { $id: 'AssignBody', additionalProperties: false });

/** A conversation waiting for a person, as the queue shows it. */
export const QueuedConversationSchema = Type.Object({
  id: Uuid,
  widget_id: Uuid,
  surface: Type.String(),
  team_id: Nullable(Type.String(Uuid)),
  queued_at: Timestamp,
  assigned_to: Nullable(Type.String({ description: 'The e-mail of the member it is assigned to, who has not taken it over yet' })),
  last_message: Nullable(Type.String()),
}, { $id: 'QueuedConversation', additionalProperties: false });

export const QueueSchema = Type.Object({
  data: Type.Array(QueuedConversationSchema, { description: 'Oldest waiting first' }),
}, { $id: 'ConversationQueue', additionalProperties: false });

export const QueueQuery = Type.Object({
  assigned: Type.Optional(StringEnum(['0', '1', 'all'] as const, { default: '0', description: '`0`: unassigned only (default); `1`: assigned, not yet taken over; `all`' })),
  team_id: Type.Optional(Uuid),
}, { additionalProperties: false });
