import { notFound } from '../../src/errors.ts';
import { findContact, listContacts } from '../../src/db/contacts.ts';
import { createContact, patchContact, removeContact } from '../../src/contacts/index.ts';
import { IdParams } from '../../src/schemas/common.ts';
import {
  ContactCreateSchema, ContactListQuery, ContactListSchema, ContactPatchSchema, ContactSchema,
} from '../../src/schemas/contacts.ts';
import { pageReply, route, type RouteFamily } from '../routing.ts';

const BASE = '/api/v1/rest';

export const contactsFamily: RouteFamily = {
  base: BASE,
  order: 130,
  tag: 'Contacts',
  description: 'People matched across channels on phone, email or web fingerprint; conversations are linked to them and enrich their facts.',
  routes: [
    route({
      method: 'GET', path: '/contacts', operationId: 'list_contacts', summary: 'List contacts, newest first',
      description: '`search` matches part of a first or last name, phone number or email address, in any case.',
      permissions: ['campaigns.read'], query: ContactListQuery,
      responses: { 200: { description: 'A page of contacts', schema: ContactListSchema } },
      async handler({ query, principal, deps }) {
        const page = await listContacts(deps.sql, principal.orgId, query);
        return pageReply(page, query);
      },
    }),
    route({
      method: 'GET', path: '/contacts/:id', operationId: 'get_contact', summary: 'Get a contact',
      permissions: ['campaigns.read'], params: IdParams,
      responses: { 200: { description: 'The contact', schema: ContactSchema } },
      async handler({ params, principal, deps }) {
        const contact = await findContact(deps.sql, principal.orgId, params.id);
        if (!contact) throw notFound('contact');
        return { status: 200, body: contact };
      },
    }),
    route({
      method: 'POST', path: '/contacts', operationId: 'create_contact', summary: 'Create a contact',
      description: 'Needs `phone_e164` or `email_lower` (400 otherwise), so that the contact can be linked to conversations; '
        + 'the email is stored lower-case. 409 `contact_exists` (with the existing `contact_id`) when another contact of the '
        + 'organization has the phone number or the email address.',
      permissions: ['campaigns.write'], body: ContactCreateSchema,
      responses: { 201: { description: 'The new contact', schema: ContactSchema } },
      async handler({ body, principal, deps }) {
        const contact = await createContact(deps, principal.orgId, body);
        return { status: 201, body: contact, headers: { Location: `${BASE}/contacts/${contact.id}` } };
      },
    }),
    route({
      method: 'PATCH', path: '/contacts/:id', operationId: 'update_contact', summary: 'Update a contact',
      description: 'Any subset of the fields; null clears one, but a contact keeps a phone number or an email address (400). '
        + '`facts` merges key by key (null removes a key). `do_not_call: true` blocks outbound dialing to the contact and its '
        + 'number, both when queueing and at dial time. Conflicts as on create.',
      permissions: ['campaigns.write'], params: IdParams, body: ContactPatchSchema,
      responses: { 200: { description: 'The updated contact', schema: ContactSchema } },
      async handler({ params, body, principal, deps }) {
        return { status: 200, body: await patchContact(deps, principal.orgId, params.id, body) };
      },
    }),
    route({
      method: 'DELETE', path: '/contacts/:id', operationId: 'delete_contact', summary: 'Delete a contact',
      description: 'Its enrolments in campaigns that have not dialed it go with it (draft campaigns, queued calls); its conversations and dialed calls stay, no longer linked to a contact.',
      permissions: ['campaigns.write'], params: IdParams,
      responses: { 204: { description: 'Deleted' } },
      async handler({ params, principal, deps }) {
        await removeContact(deps, principal.orgId, params.id);
        return { status: 204 };
      },
    }),
  ],
};
