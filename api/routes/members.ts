import { IdParams, PageQuery } from '../../src/schemas/common.ts';
import {
  MemberCreateSchema, MemberListQuery, MemberListSchema, MemberPatchSchema, MemberSchema, MemberSelfPatchSchema, MemberTokenSchema,
  TeamCreateSchema, TeamListSchema, TeamPatchSchema, TeamSchema,
} from '../../src/schemas/members.ts';
import {
  changeMember, changeTeam, createMember, createTeam, getMember, getTeam, issueMemberToken, listMembers, listTeams, removeMember, removeTeam,
  revokeMemberToken,
} from '../../src/members/index.ts';
import { getApiKey } from '../../src/auth/keys.ts';
import { pageReply, route, type RouteFamily } from '../routing.ts';

const BASE = '/api/v1/rest';

export const membersFamily: RouteFamily = {
  base: BASE,
  order: 41,
  tag: 'Members',
  description: 'The people of the organization (issue 45): each with a role (`operator`, `supervisor`, `admin`, mapped onto permissions), '
    + 'an availability, the agents they serve and a cap on open conversations. A member signs in with a `ut_` token that this resource '
    + 'issues, rotates and revokes. An operator serving some agents sees only those agents\' conversations.',
  routes: [
    route({
      method: 'GET', path: '/members/me', operationId: 'get_my_member', summary: 'The member this user token acts for',
      permissions: [], userToken: true,
      responses: { 200: { description: 'The member', schema: MemberSchema } },
      async handler({ principal, deps }) {
        return { status: 200, body: await getMember(deps.sql, principal.orgId, principal.memberId!) };
      },
    }),
    route({
      method: 'PATCH', path: '/members/me', operationId: 'update_my_member', summary: 'Set your availability, name, phone or notification preferences',
      description: 'Going `online` makes you eligible for assignment at once; `away` or `offline` passes the conversations assigned to you, '
        + 'not yet taken over, to the next member.',
      permissions: [], userToken: true, body: MemberSelfPatchSchema,
      responses: { 200: { description: 'The member', schema: MemberSchema } },
      async handler({ principal, deps, body }) {
        return { status: 200, body: await changeMember(deps, { ...principal, permissions: new Set() }, principal.memberId!, body) };
      },
    }),
    route({
      method: 'GET', path: '/members', operationId: 'list_members', summary: 'List members, newest first',
      description: '`availability` and `role` filter.', permissions: ['org.read'], query: MemberListQuery,
      responses: { 200: { description: 'A page of members', schema: MemberListSchema } },
      async handler({ query, principal, deps }) {
        return pageReply(await listMembers(deps.sql, principal.orgId, query), query);
      },
    }),
    route({
      method: 'GET', path: '/members/:id', operationId: 'get_member', summary: 'Get a member',
      permissions: ['org.read'], params: IdParams,
      responses: { 200: { description: 'The member', schema: MemberSchema } },
      async handler({ params, principal, deps }) {
        return { status: 200, body: await getMember(deps.sql, principal.orgId, params.id) };
      },
    }),
    route({
      method: 'POST', path: '/members', operationId: 'create_member', summary: 'Add a member',
      description: 'A key may give only a role whose every permission it holds (403 `missing_permission` otherwise). An e-mail the organization '
        + 'already has is 409 `member_exists` with `member_id`. `agent_ids` empty or absent: the member serves every agent.',
      permissions: ['org.write'], body: MemberCreateSchema,
      responses: { 201: { description: 'The member', schema: MemberSchema } },
      async handler({ body, principal, deps }) {
        const member = await createMember(deps, principal, body);
        return { status: 201, body: member, headers: { Location: `${BASE}/members/${member.id}` } };
      },
    }),
    route({
      method: 'PATCH', path: '/members/:id', operationId: 'update_member', summary: 'Change a member',
      description: 'A role change applies to the member\'s tokens at once.',
      permissions: ['org.write'], params: IdParams, body: MemberPatchSchema,
      responses: { 200: { description: 'The member', schema: MemberSchema } },
      async handler({ params, body, principal, deps }) {
        return { status: 200, body: await changeMember(deps, principal, params.id, body) };
      },
    }),
    route({
      method: 'DELETE', path: '/members/:id', operationId: 'delete_member', summary: 'Remove a member',
      description: 'Every token of the member stops working at once; conversations assigned to them return to the queue.',
      permissions: ['org.write'], params: IdParams,
      responses: { 204: { description: 'Removed' } },
      async handler({ params, principal, deps }) {
        await removeMember(deps, principal, params.id);
        return { status: 204 };
      },
    }),
    route({
      method: 'POST', path: '/members/:id/token', operationId: 'issue_member_token', summary: 'Issue the member a sign-in token (`ut_`)',
      description: 'The token holds the permissions of the member\'s role, and follows the role when it changes. It is shown in this response only.',
      permissions: ['org.write'], params: IdParams,
      responses: { 201: { description: 'The token', schema: MemberTokenSchema } },
      async handler({ params, principal, deps }) {
        const key = await issueMemberToken(deps, principal, params.id, { rotate: false });
        return { status: 201, body: key, headers: { Location: `${BASE}/api-keys/${key.id}` } };
      },
      async stillExists({ deps, principal, body }) {
        return (await getApiKey(deps.sql, principal.orgId, (body as { id: string }).id)) !== null;
      },
    }),
    route({
      method: 'POST', path: '/members/:id/token/rotate', operationId: 'rotate_member_token', summary: 'Replace the member\'s sign-in tokens with a new one',
      description: 'Revokes every token this resource issued to the member, at once, and answers the new one (shown here only).',
      permissions: ['org.write'], params: IdParams,
      responses: { 200: { description: 'The new token', schema: MemberTokenSchema } },
      async handler({ params, principal, deps }) {
        return { status: 200, body: await issueMemberToken(deps, principal, params.id, { rotate: true }) };
      },
      async stillExists({ deps, principal, body }) {
        return (await getApiKey(deps.sql, principal.orgId, (body as { id: string }).id)) !== null;
      },
    }),
    route({
      method: 'DELETE', path: '/members/:id/token', operationId: 'revoke_member_token', summary: 'Revoke the member\'s sign-in tokens',
      permissions: ['org.write'], params: IdParams,
      responses: { 204: { description: 'Revoked' } },
      async handler({ params, principal, deps }) {
        await revokeMemberToken(deps, principal, params.id);
        return { status: 204 };
      },
    }),
  ],
};

export const teamsFamily: RouteFamily = {
  base: BASE,
  order: 42,
  tag: 'Teams',
  description: 'Teams of members, with the agents and channels (surfaces) routed to them (issue 45). A conversation that asks for a person goes '
    + 'to the oldest team naming its agent, else the oldest taking its channel, else to any member serving the agent.',
  routes: [
    route({
      method: 'GET', path: '/teams', operationId: 'list_teams', summary: 'List teams, newest first',
      permissions: ['org.read'], query: PageQuery,
      responses: { 200: { description: 'A page of teams', schema: TeamListSchema } },
      async handler({ query, principal, deps }) {
        return pageReply(await listTeams(deps.sql, principal.orgId, query), query);
      },
    }),
    route({
      method: 'GET', path: '/teams/:id', operationId: 'get_team', summary: 'Get a team',
      permissions: ['org.read'], params: IdParams,
      responses: { 200: { description: 'The team', schema: TeamSchema } },
      async handler({ params, principal, deps }) {
        return { status: 200, body: await getTeam(deps.sql, principal.orgId, params.id) };
      },
    }),
    route({
      method: 'POST', path: '/teams', operationId: 'create_team', summary: 'Create a team',
      description: 'Names are unique per organization (409 `name_taken`).', permissions: ['org.write'], body: TeamCreateSchema,
      responses: { 201: { description: 'The team', schema: TeamSchema } },
      async handler({ body, principal, deps }) {
        const team = await createTeam(deps, principal.orgId, body);
        return { status: 201, body: team, headers: { Location: `${BASE}/teams/${team.id}` } };
      },
    }),
    route({
      method: 'PATCH', path: '/teams/:id', operationId: 'update_team', summary: 'Change a team',
      description: 'Each list given replaces the old one.', permissions: ['org.write'], params: IdParams, body: TeamPatchSchema,
      responses: { 200: { description: 'The team', schema: TeamSchema } },
      async handler({ params, body, principal, deps }) {
        return { status: 200, body: await changeTeam(deps, principal.orgId, params.id, body) };
      },
    }),
    route({
      method: 'DELETE', path: '/teams/:id', operationId: 'delete_team', summary: 'Delete a team',
      permissions: ['org.write'], params: IdParams,
      responses: { 204: { description: 'Deleted' } },
      async handler({ params, principal, deps }) {
        await removeTeam(deps, principal.orgId, params.id);
        return { status: 204 };
      },
    }),
  ],
};
