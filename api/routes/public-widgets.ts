import { AppError, notFound } from '../../src/errors.ts';
import { findPublicAgent } from '../../src/db/agents.ts';
import { hostAllowed } from '../../src/domain/hosts.ts';
import { FeedbackSchema, PublicMessageParams, RatingBodySchema, ThumbsBodySchema } from '../../src/schemas/feedback.ts';
import { rateConversation, voteOnReply } from '../../src/feedback/index.ts';
import { endConversation, sendVisitorMessage, startConversation, visitorTokenMatches } from '../../src/conversations/lifecycle.ts';
import { findConversationRecord, listMessages, type ConversationRecord } from '../../src/db/conversations.ts';
import { touchVisitor } from '../../src/db/live-inbox.ts';
import type { Agent } from '../../src/schemas/agents.ts';
import {
  PublicConversationCreateSchema, PublicConversationEndedSchema, PublicConversationParams, PublicConversationStartedSchema,
  PublicMessageCreateSchema, PublicMessagesQuery, PublicMessagesSchema, PublicWidgetConfigSchema, PublicWidgetParams, toPublicWidgetConfig,
} from '../../src/schemas/public-widgets.ts';
import { withRenderedCopy } from '../../src/answers/phrases.ts';
import { isSimulationToken, SIMULATION_HEADER } from '../../src/simulations/web-marker.ts';
import type { AppContext, AppDeps } from '../context.ts';
import { route, type RouteFamily } from '../routing.ts';
import { streamVisitorReply, wantsEventStream } from '../reply-stream.ts';

const BASE = '/api/v1/public';

/**
 * The agent behind a widget id, for a request from a browser: when the agent lists `domains`,
 * the request's Origin must be one of them (a missing Origin is refused too).
 */
async function publicAgent(ctx: AppContext, deps: AppDeps, publicKey: string): Promise<{ agent: Agent; orgId: string }> {
  const found = await findPublicAgent(deps.sql, publicKey);
  if (!found) throw notFound('widget');
  const { domains } = found.agent;
  if (domains.length > 0) {
    let host = '';
    try {
      host = new URL(ctx.get('Origin')).hostname;
    } catch { /* missing or malformed: refused below */ }
    if (!host || !hostAllowed(host, domains)) {
      throw new AppError(403, 'origin_not_allowed', 'this widget may only be used on the sites its owner allows');
    }
  }
  return found;
}

/** The agent and the visitor's conversation with it: the Origin must be allowed and the token (`X-Visitor-Token`) must match. */
async function visitorConversation(ctx: AppContext, deps: AppDeps, params: { public_key: string; id: string }):
  Promise<{ agent: Agent; conversation: ConversationRecord }> {
  const { agent } = await publicAgent(ctx, deps, params.public_key);
  const conversation = await findConversationRecord(deps.sql, params.id, { agentId: agent.id });
  if (!conversation) throw notFound('conversation');
  if (!visitorTokenMatches(conversation, ctx.get('X-Visitor-Token'))) {
    throw new AppError(401, 'unauthorized', 'X-Visitor-Token is missing or does not belong to this conversation');
  }
  return { agent, conversation };
}

export const publicWidgetsFamily: RouteFamily = {
  base: BASE,
  order: 110,
  public: true,
  tag: 'Public widget',
  description: 'What the embed (`embed.js`) calls from visitors\' browsers: no bearer token; CORS; the agent\'s `domains` decide which sites may use it.',
  routes: [
    route({
      method: 'GET', path: '/widgets/:public_key/config', operationId: 'get_public_widget_config', summary: 'What the embed needs to render',
      permissions: [], params: PublicWidgetParams,
      responses: { 200: { description: 'Appearance, every language of the intro copy, and status', schema: PublicWidgetConfigSchema } },
      async handler({ params, deps, ctx }) {
        const { agent } = await publicAgent(ctx, deps, params.public_key);
        ctx.set('Cache-Control', 'no-cache');
        return { status: 200, body: toPublicWidgetConfig(withRenderedCopy(agent)) };
      },
    }),
    route({
      method: 'POST', path: '/widgets/:public_key/conversations', operationId: 'start_public_conversation', summary: 'Start a conversation',
      description: 'Answers the greeting and a `visitor_token` for the conversation\'s other requests. 409 `agent_paused` while the agent is paused.',
      permissions: [], params: PublicWidgetParams, body: PublicConversationCreateSchema,
      responses: { 201: { description: 'The conversation and its greeting', schema: PublicConversationStartedSchema } },
      async handler({ params, body, deps, ctx }) {
        const { agent, orgId } = await publicAgent(ctx, deps, params.public_key);
        const marker = ctx.get(SIMULATION_HEADER);
        const simulated = marker !== '' && await isSimulationToken(deps.sql, deps.secrets, marker, { id: agent.id, orgId, publicKey: agent.public_key });
        const started = await startConversation(deps, orgId, agent, { ...body, simulated });
        return { status: 201, body: started, headers: { Location: `${BASE}/widgets/${agent.public_key}/conversations/${started.conversation_id}/messages` } };
      },
    }),
    route({
      method: 'POST', path: '/widgets/:public_key/conversations/:id/messages', operationId: 'send_public_message', summary: 'Say something to the agent',
      description: 'Needs `X-Visitor-Token`. Answers the agent\'s replies. 409 `invalid_state` once the conversation has ended. '
        + 'With `Accept: text/event-stream`, the reply streams as Server-Sent Events as it is produced: `delta` events `{text}` (the LLM '
        + 'runtime\'s tokens; the offline runtime\'s whole reply at once), then `done` `{messages, source, tool_calls}`: the stored messages '
        + '(as this JSON answer has them), `source` `llm` or `offline`, and the turn\'s tool calls; or `error` `{code, detail}`. Closing the '
        + 'stream before `done` stops the reply: what was sent is stored, with `cut: true`.',
      permissions: [], params: PublicConversationParams, body: PublicMessageCreateSchema,
      responses: { 200: { description: 'The agent\'s replies (or, with `Accept: text/event-stream`, the event stream)', schema: PublicMessagesSchema } },
      async handler({ params, body, deps, ctx }) {
        const { agent, conversation } = await visitorConversation(ctx, deps, params);
        if (wantsEventStream(ctx)) return { status: 200, body: streamVisitorReply(ctx, deps, agent, conversation, body.text) as never };
        return { status: 200, body: { messages: await sendVisitorMessage(deps, agent, conversation, body.text) } };
      },
    }),
    route({
      method: 'GET', path: '/widgets/:public_key/conversations/:id/messages', operationId: 'poll_public_messages', summary: 'Read the conversation\'s messages',
      description: 'Needs `X-Visitor-Token`. With `after`, only newer messages (e.g. a person\'s replies).',
      permissions: [], params: PublicConversationParams, query: PublicMessagesQuery,
      responses: { 200: { description: 'Messages, oldest first', schema: PublicMessagesSchema } },
      async handler({ params, query, deps, ctx }) {
        const { conversation } = await visitorConversation(ctx, deps, params);
        // A poll is the visitor's presence for the live inbox.
        if (conversation.status === 'active') await touchVisitor(deps.sql, conversation.id);
        return { status: 200, body: { messages: await listMessages(deps.sql, conversation.id, { after: query.after }) } };
      },
    }),
    route({
      method: 'POST', path: '/widgets/:public_key/conversations/:id/rating', operationId: 'rate_public_conversation',
      summary: 'Rate the conversation (end-of-chat survey)',
      description: 'Needs `X-Visitor-Token`. `{rating: 1-5, comment?}`, where the agent\'s `satisfaction_survey` is on (409 `invalid_state` '
        + 'otherwise); before or after the end. Rating again replaces the earlier rating. Emits `conversation.feedback`.',
      permissions: [], params: PublicConversationParams, body: RatingBodySchema,
      responses: { 200: { description: 'The rating as stored', schema: FeedbackSchema } },
      async handler({ params, body, deps, ctx }) {
        const { agent, conversation } = await visitorConversation(ctx, deps, params);
        const target = { orgId: conversation.orgId, agentId: agent.id, conversationId: conversation.id, surveyEnabled: agent.satisfaction_survey };
        return { status: 200, body: await rateConversation(deps.sql, target, body) };
      },
    }),
    route({
      method: 'POST', path: '/widgets/:public_key/conversations/:id/messages/:message_id/feedback', operationId: 'vote_public_reply',
      summary: 'Thumbs up or down on one reply',
      description: 'Needs `X-Visitor-Token`. `{thumbs: up|down, comment?}` on one of the agent\'s (or a member\'s) replies in this '
        + 'conversation (404 for any other message). Voting again replaces the earlier vote. Emits `conversation.feedback`.',
      permissions: [], params: PublicMessageParams, body: ThumbsBodySchema,
      responses: { 200: { description: 'The vote as stored', schema: FeedbackSchema } },
      async handler({ params, body, deps, ctx }) {
        const { agent, conversation } = await visitorConversation(ctx, deps, params);
        const target = { orgId: conversation.orgId, agentId: agent.id, conversationId: conversation.id, surveyEnabled: agent.satisfaction_survey };
        return { status: 200, body: await voteOnReply(deps.sql, target, params.message_id, body) };
      },
    }),
    route({
      method: 'POST', path: '/widgets/:public_key/conversations/:id/end', operationId: 'end_public_conversation', summary: 'End the conversation',
      description: 'Needs `X-Visitor-Token`. Emits conversation.ended, then the conversation is evaluated. Ending twice is fine.',
      permissions: [], params: PublicConversationParams,
      responses: { 200: { description: 'Ended', schema: PublicConversationEndedSchema } },
      async handler({ params, deps, ctx }) {
        const { conversation } = await visitorConversation(ctx, deps, params);
        await endConversation(deps, conversation.id, 'visitor');
        const ended = await findConversationRecord(deps.sql, conversation.id);
        return { status: 200, body: { conversation_id: conversation.id, status: 'ended', ended_at: ended?.endedAt?.toISOString() ?? null } };
      },
    }),
  ],
};
