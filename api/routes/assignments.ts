import { Type } from '@sinclair/typebox';
import { IdParams } from '../../src/schemas/common.ts';
import { AssignBodySchema, AssignmentListSchema, AssignmentSchema, QueueQuery, QueueSchema } from '../../src/schemas/assignments.ts';
import { assignByHand, historyOf, queueOf, releaseByHand } from '../../src/assignments/index.ts';
import { route, type RouteFamily } from '../routing.ts';

const BASE = '/api/v1/rest';

// Before the conversations family: `/conversations/queue` must not be taken for `/conversations/:id`.
export const assignmentsFamily: RouteFamily = {
  base: BASE,
  order: 119,
  tag: 'Assignment',
  description: 'Who answers a conversation that asks for a person (issue 45): round-robin among the online members of the routed team, each under '
    + 'their `max_conversations`; the rest wait in the queue. An assignee who does not take the conversation over within ASSIGNMENT_ACCEPT_SECONDS, '
    + 'or goes away, loses it to the next member. Each step is a `conversation.assigned` or `conversation.released` event.',
  routes: [
    route({
      method: 'GET', path: '/conversations/queue', operationId: 'list_conversation_queue', summary: 'Conversations waiting for a person, oldest first',
      description: 'Active conversations the agent still answers whose visitor asked for a person. `assigned=0` (default): nobody has them; `1`: '
        + 'assigned, not yet taken over; `all`. An operator sees only the agents they serve.',
      permissions: ['conversations.read'], query: QueueQuery,
      responses: { 200: { description: 'The queue', schema: QueueSchema } },
      async handler({ query, principal, deps }) {
        return { status: 200, body: { data: await queueOf(deps.sql, principal, query) } };
      },
    }),
    route({
      method: 'POST', path: '/conversations/:id/assign', operationId: 'assign_conversation', summary: 'Assign or reassign a conversation',
      description: 'To `member_id`, or (without it) to the next available member round-robin, passing over the current assignee; 409 `invalid_state` '
        + 'when the conversation has ended or nobody is online with room. Assigning to the current assignee changes nothing.',
      permissions: ['conversations.write'], params: IdParams, body: AssignBodySchema,
      responses: { 200: { description: 'The assignment step', schema: AssignmentSchema } },
      async handler({ params, body, principal, deps }) {
        return { status: 200, body: await assignByHand(deps, principal, params.id, body.member_id) };
      },
    }),
    route({
      method: 'POST', path: '/conversations/:id/release', operationId: 'release_conversation', summary: 'Release a conversation back to the queue',
      description: 'The assignee lets it go; it goes to the next member (not them) or waits. 409 `invalid_state` when it is not assigned.',
      permissions: ['conversations.write'], params: IdParams, body: Type.Object({}, { additionalProperties: false }),
      responses: { 200: { description: 'The release step', schema: AssignmentSchema } },
      async handler({ params, principal, deps }) {
        return { status: 200, body: await releaseByHand(deps, principal, params.id) };
      },
    }),
    route({
      method: 'GET', path: '/conversations/:id/assignments', operationId: 'list_conversation_assignments', summary: 'A conversation\'s assignment history, oldest first',
      permissions: ['conversations.read'], params: IdParams,
      responses: { 200: { description: 'The history', schema: AssignmentListSchema } },
      async handler({ params, principal, deps }) {
        return { status: 200, body: { data: await historyOf(deps.sql, principal, params.id) } };
      },
    }),
  ],
};
