import { notFound } from '../../src/errors.ts';
import { findConversation, listConversations } from '../../src/db/conversations.ts';
import { deleteConversationAndWork } from '../../src/conversations/lifecycle.ts';
import { IdParams } from '../../src/schemas/common.ts';
import { ConversationDetailSchema, ConversationListQuery, ConversationListSchema } from '../../src/schemas/conversations.ts';
import type { AppContext, AppDeps } from '../context.ts';
import { route, type RouteFamily } from '../routing.ts';
import { cardUrl } from './conversation-cards.ts';

const BASE = '/api/v1/rest';

/** Where the card URL points: PUBLIC_BASE_URL when set, else where this request came in (Koa's `origin` is the header). */
const publicBase = (deps: AppDeps, ctx: AppContext) => deps.config.PUBLIC_BASE_URL ?? `${ctx.protocol}://${ctx.host}`;

export const conversationsFamily: RouteFamily = {
  base: BASE,
  tag: 'Conversations',
  description: 'Recorded and live conversations of the organization\'s agents, with transcripts; simulations are conversations too.',
  routes: [
    route({
      method: 'GET', path: '/conversations', operationId: 'list_conversations', summary: 'List conversations, newest first',
      description: 'Real conversations only by default; `simulated=1` lists only simulations, `simulated=all` both. '
        + '`widget_id` keeps one agent\'s (an unknown agent has none). Conversations of deleted agents are gone. '
        + '`total` is exact.',
      permissions: ['conversations.read'], query: ConversationListQuery,
      responses: { 200: { description: 'A page of conversations', schema: ConversationListSchema } },
      async handler({ query, principal, deps }) {
        const page = await listConversations(deps.sql, principal.orgId, query);
        return { status: 200, body: { ...page, limit: query.limit, offset: query.offset } };
      },
    }),
    route({
      method: 'GET', path: '/conversations/:id', operationId: 'get_conversation', summary: 'Get a conversation with its transcript',
      description: '`messages` is the transcript, oldest first; `card_url` is a signed link to an HTML transcript card '
        + 'for an iframe (no token needed, valid 15 minutes).',
      permissions: ['conversations.read'], params: IdParams,
      responses: { 200: { description: 'The conversation', schema: ConversationDetailSchema } },
      async handler({ params, principal, deps, ctx }) {
        const conversation = await findConversation(deps.sql, principal.orgId, params.id);
        if (!conversation) throw notFound('conversation');
        return { status: 200, body: { ...conversation, card_url: cardUrl(publicBase(deps, ctx), deps.secrets, conversation.id) } };
      },
    }),
    route({
      method: 'DELETE', path: '/conversations/:id', operationId: 'delete_conversation', summary: 'Delete a conversation and its transcript',
      description: 'Irreversible. The usage record stays, with its conversation reference cleared. A conversation still '
        + 'active is ended without its `conversation.ended` event.',
      permissions: ['conversations.write'], params: IdParams,
      responses: { 204: { description: 'Deleted' } },
      async handler({ params, principal, deps }) {
        if (!(await deleteConversationAndWork(deps, principal.orgId, params.id))) throw notFound('conversation');
        return { status: 204 };
      },
    }),
  ],
};
