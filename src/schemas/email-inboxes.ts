import { Type, type Static } from '@sinclair/typebox';
import { ListEnvelope, PageQueryProps, Timestamp, Uuid } from './common.ts';

/**
 * An inbox address as a client may send it: the `email` format of the shared `Email` schema
 * (the same rule ajv-formats applies), spelled as a pattern so that surrounding white space is
 * accepted; the service trims it and stores the address lower-case.
 */
const InboxAddress = Type.String({
  minLength: 3, maxLength: 254, 'x-code': 'invalid_email',
  pattern: "^\\s*[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\s*$",
  description: 'Email address the agent receives mail at and sends from; trimmed and stored lower-case; unique across the whole service',
  examples: ['support@example.com'],
});
const SenderName = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'Display name on outgoing mail, 1 to 200 characters' });
const WidgetId = Type.String({ ...Uuid, description: 'The `id` of the agent the inbox belongs to (a live agent of this organization)' });

/** An inbox as every endpoint returns it. */
export const EmailInboxSchema = Type.Object({
  id: Uuid,
  widget_id: Uuid,
  address: Type.String({ description: 'Lower-case email address' }),
  sender_name: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'EmailInbox', additionalProperties: false, description: 'An email address attached to an agent' });
export type EmailInbox = Static<typeof EmailInboxSchema>;

export const EmailInboxCreateSchema = Type.Object({
  widget_id: WidgetId,
  address: InboxAddress,
  sender_name: SenderName,
}, { $id: 'EmailInboxCreate', additionalProperties: false });
export type EmailInboxCreate = Static<typeof EmailInboxCreateSchema>;

/** Any subset; `widget_id` moves the inbox to another agent of the same organization. */
export const EmailInboxPatchSchema = Type.Object({
  widget_id: Type.Optional(WidgetId),
  address: Type.Optional(InboxAddress),
  sender_name: Type.Optional(SenderName),
}, { $id: 'EmailInboxPatch', additionalProperties: false });
export type EmailInboxPatch = Static<typeof EmailInboxPatchSchema>;

export const EmailInboxListQuery = Type.Object({
  widget_id: Type.Optional(Type.String({ ...Uuid, description: 'Only the inboxes of this agent (`id`)' })),
  ...PageQueryProps,
}, { additionalProperties: false });

export const EmailInboxListSchema = ListEnvelope(EmailInboxSchema, 'EmailInboxList');
