import { notFound } from '../../src/errors.ts';
import { findSipTrunk, listSipTrunks } from '../../src/db/sip-trunks.ts';
import { createSipTrunk, patchSipTrunk, removeSipTrunk } from '../../src/sip-trunks/index.ts';
import { IdParams, PageQuery } from '../../src/schemas/common.ts';
import {
  SipTrunkCreateSchema, SipTrunkListSchema, SipTrunkPatchSchema, SipTrunkSchema,
} from '../../src/schemas/sip-trunks.ts';
import { pageReply, route, type RouteFamily } from '../routing.ts';

const BASE = '/api/v1/rest';

export const sipTrunksFamily: RouteFamily = {
  base: BASE,
  order: 70,
  tag: 'SIP trunks',
  description: 'Connections to a customer\'s own PBX, used by `sip_refer` transfer rules. The password is write-only: stored encrypted, never returned.',
  routes: [
    route({
      method: 'GET', path: '/sip-trunks', operationId: 'list_sip_trunks', summary: 'List SIP trunks, newest first (never their passwords)',
      permissions: ['org.read'], query: PageQuery,
      responses: { 200: { description: 'A page of trunks', schema: SipTrunkListSchema } },
      async handler({ query, principal, deps }) {
        const page = await listSipTrunks(deps.sql, principal.orgId, query);
        return pageReply(page, query);
      },
    }),
    route({
      method: 'GET', path: '/sip-trunks/:id', operationId: 'get_sip_trunk', summary: 'Get a SIP trunk, without its credential',
      permissions: ['org.read'], params: IdParams,
      responses: { 200: { description: 'The trunk', schema: SipTrunkSchema } },
      async handler({ params, principal, deps }) {
        const trunk = await findSipTrunk(deps.sql, principal.orgId, params.id);
        if (!trunk) throw notFound('SIP trunk');
        return { status: 200, body: trunk };
      },
    }),
    route({
      method: 'POST', path: '/sip-trunks', operationId: 'create_sip_trunk', summary: 'Create a SIP trunk',
      description: '`sip_host` is normalized to a bare `hostname[:port]` (400 `invalid_sip_host` when it names no valid host). The password is encrypted at rest and never returned.',
      permissions: ['org.write'], body: SipTrunkCreateSchema,
      responses: { 201: { description: 'The new trunk, without its credential', schema: SipTrunkSchema } },
      async handler({ body, principal, deps }) {
        const trunk = await createSipTrunk(deps, principal.orgId, body);
        return { status: 201, body: trunk, headers: { Location: `${BASE}/sip-trunks/${trunk.id}` } };
      },
    }),
    route({
      method: 'PATCH', path: '/sip-trunks/:id', operationId: 'update_sip_trunk', summary: 'Update a SIP trunk; `password` rotates the credential',
      description: 'Any subset of label, sip_host, sip_username and password; `{}` changes nothing. A new password replaces the stored one at once.',
      permissions: ['org.write'], params: IdParams, body: SipTrunkPatchSchema,
      responses: { 200: { description: 'The updated trunk, without its credential', schema: SipTrunkSchema } },
      async handler({ params, body, principal, deps }) {
        return { status: 200, body: await patchSipTrunk(deps, principal.orgId, params.id, body) };
      },
    }),
    route({
      method: 'DELETE', path: '/sip-trunks/:id', operationId: 'delete_sip_trunk', summary: 'Delete a SIP trunk',
      description: '409 `sip_trunk_in_use` while transfer rules still reference the trunk (the problem carries `transfer_rule_count`): reassign or delete those rules first.',
      permissions: ['org.write'], params: IdParams,
      responses: { 204: { description: 'Deleted' }, 409: { description: '`sip_trunk_in_use`: transfer rules still reference the trunk' } },
      async handler({ params, principal, deps }) {
        await removeSipTrunk(deps, principal.orgId, params.id);
        return { status: 204 };
      },
    }),
  ],
};
