/** Every event type the service emits (the specification's Events table), in its order. */
export const EVENT_TYPES = [
  'widget.ready',
  'widget.crawl_completed',
  'widget.activated',
  'widget.paused',
  'conversation.started',
  'conversation.ended',
  'conversation.evaluated',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** What an endpoint may subscribe to: an event type, or `*` for all of them (today's and future ones). */
export const EVENT_SUBSCRIPTIONS = [...EVENT_TYPES, '*'] as const;
export type EventSubscription = (typeof EVENT_SUBSCRIPTIONS)[number];
