import { Type, type TSchema } from '@sinclair/typebox';
import { Timestamp } from './common.ts';
import { AgentSchema } from './agents.ts';
import { CampaignCallSchema, CampaignSchema } from './campaigns.ts';
import { ConversationSchema } from './conversations.ts';
import { AssignmentSchema } from './assignments.ts';
import { WidgetSchema } from './widgets.ts';
import { FeedbackEventDataSchema } from './feedback.ts';

/** Every event type the service emits (the specification's Events table), in its order. */
export const EVENT_TYPES = [
  'widget.ready',
  'widget.crawl_completed',
  'widget.activated',
  'widget.paused',
  'conversation.started',
  'conversation.ended',
  'conversation.evaluated',
  'conversation.deleted',
  'conversation.assigned',
  'conversation.released',
  'conversation.feedback',
  'campaign.started',
  'campaign.completed',
  'campaign_call.ended',
  'contact.erased',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** What an endpoint may subscribe to: an event type, or `*` for all of them (today's and future ones). */
export const EVENT_SUBSCRIPTIONS = [...EVENT_TYPES, '*'] as const;
export type EventSubscription = (typeof EVENT_SUBSCRIPTIONS)[number];

/** `data` of the widget events: the agent as `GET /agents/:id` returns it, and its widget view. */
export const WidgetEventDataSchema = Type.Object({
  agent: AgentSchema,
  widget: WidgetSchema,
}, { $id: 'WidgetEventData', additionalProperties: false });

/** `data` of the conversation events: the conversation as the conversations list shows it. */
export const ConversationEventDataSchema = Type.Object({
  conversation: ConversationSchema,
}, { $id: 'ConversationEventData', additionalProperties: false });

/** `data` of the assignment events (issue 45): the conversation and the assignment step. */
export const AssignmentEventDataSchema = Type.Object({
  conversation: ConversationSchema,
  assignment: AssignmentSchema,
}, { $id: 'AssignmentEventData', additionalProperties: false });

/** `data` of the campaign events: the campaign as `GET /campaigns/:id` returns it. */
export const CampaignEventDataSchema = Type.Object({
  campaign: CampaignSchema,
}, { $id: 'CampaignEventData', additionalProperties: false });

/** `data` of the campaign call events: the call as `GET /campaigns/:id/calls/:callId` returns it. */
export const CampaignCallEventDataSchema = Type.Object({
  call: CampaignCallSchema,
}, { $id: 'CampaignCallEventData', additionalProperties: false });

/** `data` of contact.erased: the erased contact's id only (the event outlives the person's data, and holds none of it). */
export const ContactErasedEventDataSchema = Type.Object({
  contact: Type.Object({ id: Type.String(), erased_at: Timestamp }, { additionalProperties: false }),
}, { $id: 'ContactErasedEventData', additionalProperties: false });

/** Each event type: when it fires, and the schema of its `data`. */
export const EVENTS: Record<EventType, { description: string; data: TSchema }> = {
  'widget.ready': { description: 'A widget created through the widgets endpoints finished its first crawl and became `active`.', data: WidgetEventDataSchema },
  'widget.crawl_completed': { description: 'An agent created with `site_url` finished its first crawl and became `active`.', data: WidgetEventDataSchema },
  'widget.activated': { description: 'An agent\'s status changed to `active` (PATCH, resume, or a published draft).', data: WidgetEventDataSchema },
  'widget.paused': { description: 'An agent\'s status changed to `paused` (PATCH, pause, or a published draft).', data: WidgetEventDataSchema },
  'conversation.started': { description: 'A conversation started.', data: ConversationEventDataSchema },
  'conversation.ended': { description: 'A conversation ended (the visitor ended it, or it was inactive too long).', data: ConversationEventDataSchema },
  'conversation.evaluated': { description: 'The evaluation of an ended conversation completed.', data: ConversationEventDataSchema },
  'conversation.deleted': { description: 'A conversation was deleted by its retention policy (the conversation as it was listed).', data: ConversationEventDataSchema },
  'conversation.assigned': { description: 'A conversation was assigned or reassigned to a member (round-robin, or by hand).', data: AssignmentEventDataSchema },
  'conversation.released': { description: 'A conversation\'s assignee let it go (released, timed out, or went offline): it waits in the queue again.', data: AssignmentEventDataSchema },
  'conversation.feedback': {
    description: 'A visitor rated the conversation (end-of-chat survey, 1 to 5) or voted on a reply (thumbs up or down), or changed that feedback.',
    data: FeedbackEventDataSchema,
  },
  'campaign.started': { description: 'A campaign started: its calls are queued (POST /campaigns/:id/start from `draft`).', data: CampaignEventDataSchema },
  'campaign.completed': { description: 'Every call of a running campaign has ended: the campaign is `completed`.', data: CampaignEventDataSchema },
  'campaign_call.ended': { description: 'A campaign call reached its terminal status (see `status` and `ended_reason`).', data: CampaignCallEventDataSchema },
  'contact.erased': { description: 'A contact and every piece of data tied to it were erased (POST /contacts/:id/erase).', data: ContactErasedEventDataSchema },
};

/** The body of a webhook delivery: the Standard Webhooks envelope around one event's `data`. */
export function EventSchema(type: EventType) {
  return Type.Object({
    id: Type.String({ pattern: '^evt_[A-Za-z0-9_-]{24}$', description: 'The event id; also the `webhook-id` header, the same on every retry' }),
    type: Type.Literal(type),
    created_at: Timestamp,
    data: EVENTS[type].data,
  }, { additionalProperties: false, description: EVENTS[type].description });
}
