import { IdParams } from '../../src/schemas/common.ts';
import {
  CannedExpandSchema, CannedExpansionSchema, CannedResponseCreateSchema, CannedResponseListQuery, CannedResponseListSchema, CannedResponsePatchSchema,
  CannedResponseSchema,
} from '../../src/schemas/canned-responses.ts';
import { changeCanned, createCanned, expandCanned, getCanned, listCanned, removeCanned } from '../../src/canned-responses/index.ts';
import { pageReply, route, type RouteFamily } from '../routing.ts';

const BASE = '/api/v1/rest';

export const cannedResponsesFamily: RouteFamily = {
  base: BASE,
  order: 121,
  tag: 'Canned responses',
  description: 'Reusable replies (issue 45), inserted in /inbox by typing `/short_code`, with `{{variables}}` filled from the conversation and the member.',
  routes: [
    route({
      method: 'GET', path: '/canned-responses', operationId: 'list_canned_responses', summary: 'List canned responses, newest first',
      description: '`q` keeps short codes starting with it (what /inbox suggests as you type).',
      permissions: ['conversations.read'], query: CannedResponseListQuery,
      responses: { 200: { description: 'A page of canned responses', schema: CannedResponseListSchema } },
      async handler({ query, principal, deps }) {
        return pageReply(await listCanned(deps.sql, principal.orgId, query), query);
      },
    }),
    route({
      method: 'POST', path: '/canned-responses/expand', operationId: 'expand_canned_response', summary: 'Expand `/short_code` into its text',
      description: 'Fills `visitor.name`, `visitor.email` and `agent.name` from `conversation_id`, `member.name` and `member.email` from the user token, '
        + 'and anything in `variables` (which wins). A variable left without a value stays as written and is named in `missing`. An unknown code is 400.',
      permissions: ['conversations.read'], body: CannedExpandSchema,
      responses: { 200: { description: 'The text', schema: CannedExpansionSchema } },
      async handler({ body, principal, deps }) {
        return { status: 200, body: await expandCanned(deps.sql, principal, body) };
      },
    }),
    route({
      method: 'GET', path: '/canned-responses/:id', operationId: 'get_canned_response', summary: 'Get a canned response',
      permissions: ['conversations.read'], params: IdParams,
      responses: { 200: { description: 'The canned response', schema: CannedResponseSchema } },
      async handler({ params, principal, deps }) {
        return { status: 200, body: await getCanned(deps.sql, principal.orgId, params.id) };
      },
    }),
    route({
      method: 'POST', path: '/canned-responses', operationId: 'create_canned_response', summary: 'Create a canned response',
      description: 'Short codes are unique per organization, case-insensitively (409 `name_taken`). `title` defaults to the short code.',
      permissions: ['conversations.write'], body: CannedResponseCreateSchema,
      responses: { 201: { description: 'The canned response', schema: CannedResponseSchema } },
      async handler({ body, principal, deps }) {
        const created = await createCanned(deps.sql, principal.orgId, body);
        return { status: 201, body: created, headers: { Location: `${BASE}/canned-responses/${created.id}` } };
      },
    }),
    route({
      method: 'PATCH', path: '/canned-responses/:id', operationId: 'update_canned_response', summary: 'Change a canned response',
      permissions: ['conversations.write'], params: IdParams, body: CannedResponsePatchSchema,
      responses: { 200: { description: 'The canned response', schema: CannedResponseSchema } },
      async handler({ params, body, principal, deps }) {
        return { status: 200, body: await changeCanned(deps.sql, principal.orgId, params.id, body) };
      },
    }),
    route({
      method: 'DELETE', path: '/canned-responses/:id', operationId: 'delete_canned_response', summary: 'Delete a canned response',
      permissions: ['conversations.write'], params: IdParams,
      responses: { 204: { description: 'Deleted' } },
      async handler({ params, principal, deps }) {
        await removeCanned(deps.sql, principal.orgId, params.id);
        return { status: 204 };
      },
    }),
  ],
};
