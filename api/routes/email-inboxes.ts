import { AppError, fieldError, notFound } from '../../src/errors.ts';
import {
  deleteEmailInbox, findEmailInbox, insertEmailInbox, listEmailInboxes, updateEmailInbox, type InboxRefusal,
} from '../../src/db/email-inboxes.ts';
import { IdParams } from '../../src/schemas/common.ts';
import {
  EmailInboxCreateSchema, EmailInboxListQuery, EmailInboxListSchema, EmailInboxPatchSchema, EmailInboxSchema,
} from '../../src/schemas/email-inboxes.ts';
import { pageReply, route, type RouteFamily } from '../routing.ts';

const BASE = '/api/v1/rest';

/** The problem for a refused write. The 409 never says which organization holds the address. */
function refused(reason: InboxRefusal): AppError {
  return reason === 'unknown_agent'
    ? fieldError('widget_id', 'unknown_agent', 'widget_id does not name an agent of this organization')
    : new AppError(409, 'email_address_taken', 'this email address is already in use');
}

export const emailInboxesFamily: RouteFamily = {
  base: BASE,
  order: 80,
  tag: 'Email inboxes',
  description: 'Email addresses attached to an agent: mail to the address reaches the agent, which answers as `sender_name`.',
  routes: [
    route({
      method: 'GET', path: '/email-inboxes', operationId: 'list_email_inboxes', summary: 'List email inboxes, newest first',
      description: '`widget_id` keeps the inboxes of one agent (an unknown agent has none). Inboxes of a deleted agent are gone.',
      permissions: ['agents.read'], query: EmailInboxListQuery,
      responses: { 200: { description: 'A page of inboxes', schema: EmailInboxListSchema } },
      async handler({ query, principal, deps }) {
        const page = await listEmailInboxes(deps.sql, principal.orgId, query);
        return pageReply(page, query);
      },
    }),
    route({
      method: 'GET', path: '/email-inboxes/:id', operationId: 'get_email_inbox', summary: 'Get an email inbox',
      permissions: ['agents.read'], params: IdParams,
      responses: { 200: { description: 'The inbox', schema: EmailInboxSchema } },
      async handler({ params, principal, deps }) {
        const inbox = await findEmailInbox(deps.sql, principal.orgId, params.id);
        if (!inbox) throw notFound('email inbox');
        return { status: 200, body: inbox };
      },
    }),
    route({
      method: 'POST', path: '/email-inboxes', operationId: 'create_email_inbox', summary: 'Attach an email inbox to an agent',
      description: 'The address is trimmed and stored lower-case. 400 `validation_error` on `widget_id` (`unknown_agent`) when it names no agent of this organization; 409 `email_address_taken` when any organization already uses the address (case-insensitive).',
      permissions: ['agents.write'], body: EmailInboxCreateSchema,
      responses: { 201: { description: 'The new inbox', schema: EmailInboxSchema } },
      async handler({ body, principal, deps }) {
        const inbox = await insertEmailInbox(deps.sql, principal.orgId, body);
        if (typeof inbox === 'string') throw refused(inbox);
        return { status: 201, body: inbox, headers: { Location: `${BASE}/email-inboxes/${inbox.id}` } };
      },
    }),
    route({
      method: 'PATCH', path: '/email-inboxes/:id', operationId: 'update_email_inbox', summary: 'Update an email inbox',
      description: 'Any subset of `address`, `sender_name` and `widget_id` (moves the inbox to another agent of this organization); `{}` changes nothing. Refusals as on create.',
      permissions: ['agents.write'], params: IdParams, body: EmailInboxPatchSchema,
      responses: {
        200: { description: 'The updated inbox', schema: EmailInboxSchema },
        409: { description: 'The address is already in use (`email_address_taken`)' },
      },
      async handler({ params, body, principal, deps }) {
        const inbox = await updateEmailInbox(deps.sql, principal.orgId, params.id, body);
        if (typeof inbox === 'string') throw refused(inbox);
        if (!inbox) throw notFound('email inbox');
        return { status: 200, body: inbox };
      },
    }),
    route({
      method: 'DELETE', path: '/email-inboxes/:id', operationId: 'delete_email_inbox', summary: 'Delete an email inbox',
      description: 'The address is free again at once.',
      permissions: ['agents.write'], params: IdParams,
      responses: { 204: { description: 'Deleted' } },
      async handler({ params, principal, deps }) {
        if (!(await deleteEmailInbox(deps.sql, principal.orgId, params.id))) throw notFound('email inbox');
        return { status: 204 };
      },
    }),
  ],
};
