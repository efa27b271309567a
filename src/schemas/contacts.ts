import { Type, type Static } from '@sinclair/typebox';
import { E164, Email, ListEnvelope, Nullable, PageQueryProps, Timestamp, Uuid } from './common.ts';

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Facts = Type.Record(Type.String({ minLength: 1, maxLength: 100 }), Type.Unknown(), {
  maxProperties: 200, description: 'Free-form key/value data known of the person',
});
// Accepted in any case and stored lower-case (the field is named for what is stored).
const ContactEmail = Type.String({ ...Email, description: 'Email address; stored lower-case' });

/** A contact as every endpoint returns it. */
export const ContactSchema = Type.Object({
  id: Uuid,
  phone_e164: Nullable(Type.String({ description: 'Phone number in E.164; unique in the organization' })),
  email_lower: Nullable(Type.String({ description: 'Lower-case email address; unique in the organization' })),
  first_name: Nullable(Type.String()),
  last_name: Nullable(Type.String()),
  visitor_ids: Type.Array(Type.String(), { description: 'Web fingerprints (the widget\'s visitor ids) matched to this person' }),
  facts: Type.Record(Type.String(), Type.Unknown(), { description: 'Free-form key/value data, enriched by the data its conversations capture' }),
  do_not_call: Type.Boolean({ description: 'Outbound calls to the contact and its number are blocked' }),
  conversation_count: Type.Integer({ minimum: 0, description: 'Conversations recorded for the contact' }),
  first_seen_at: Nullable(Timestamp),
  last_seen_at: Nullable(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'Contact', additionalProperties: false, description: 'A person matched across channels on phone, email or web fingerprint' });
export type Contact = Static<typeof ContactSchema>;

export const ContactCreateSchema = Type.Object({
  phone_e164: Type.Optional(E164),
  email_lower: Type.Optional(ContactEmail),
  first_name: Type.Optional(Nullable(Name)),
  last_name: Type.Optional(Nullable(Name)),
  facts: Type.Optional(Facts),
  do_not_call: Type.Optional(Type.Boolean()),
}, { $id: 'ContactCreate', additionalProperties: false, description: 'At least one of phone_e164 and email_lower' });
export type ContactCreate = Static<typeof ContactCreateSchema>;

/** Any subset; null clears a field (but a contact keeps a phone or an email). */
export const ContactPatchSchema = Type.Object({
  phone_e164: Type.Optional(Nullable(E164)),
  email_lower: Type.Optional(Nullable(ContactEmail)),
  first_name: Type.Optional(Nullable(Name)),
  last_name: Type.Optional(Nullable(Name)),
  facts: Type.Optional(Type.Record(Type.String({ minLength: 1, maxLength: 100 }), Type.Unknown(), {
    maxProperties: 200, description: 'Merged key by key into the facts; a key set to null is removed',
  })),
  do_not_call: Type.Optional(Type.Boolean({ description: '`true` blocks outbound dialing to the contact and its number' })),
}, { $id: 'ContactPatch', additionalProperties: false });
export type ContactPatch = Static<typeof ContactPatchSchema>;

export const ContactListQuery = Type.Object({
  search: Type.Optional(Type.String({ maxLength: 200, description: 'Part of a first or last name, phone number or email, any case' })),
  ...PageQueryProps,
}, { additionalProperties: false });
export type ContactListQuery = Static<typeof ContactListQuery>;

export const ContactListSchema = ListEnvelope(ContactSchema, 'ContactList');
