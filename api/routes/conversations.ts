import type { PassThrough } from 'node:stream';
import { Type } from '@sinclair/typebox';
import { AppError, notFound } from '../../src/errors.ts';
import { findConversation, listConversations } from '../../src/db/conversations.ts';
import { deleteConversationAndWork } from '../../src/conversations/lifecycle.ts';
import { IdParams } from '../../src/schemas/common.ts';
import { ConversationDetailSchema, ConversationListQuery, ConversationListSchema } from '../../src/schemas/conversations.ts';
import type { AppContext, AppDeps } from '../context.ts';
import { findMember, listLiveConversations, touchInboxMember } from '../../src/db/live-inbox.ts';
import { addNote, changeAnnotations, readAnnotations, runAdvisorAction } from '../../src/conversations/advisor.ts';
import { closeConversation } from '../../src/conversations/close.ts';
import { openLiveStream } from '../../src/conversations/live-stream.ts';
import { assertInScope, inScope } from '../../src/assignments/index.ts';
import {
  AdvisorActionSchema, AnnotationsPatchSchema, AnnotationsSchema, LiveConversationListSchema, LiveConversationSchema, NoteCreateSchema, NoteSchema,
} from '../../src/schemas/live-inbox.ts';
import { pageReply, route, type RouteFamily } from '../routing.ts';
import { cardUrl } from './conversation-cards.ts';
import { voiceDetailOf } from '../../src/voice/details.ts';
import { publicOrigin } from '../public-origin.ts';

const BASE = '/api/v1/rest';


/**
 * A slot for one more live stream, per API key and per client address, or 429 (issue 40, I17): each
 * open stream holds a socket and a subscription for up to LIVE_STREAM_MAX_SECONDS. Counted in this
 * process, where the connections live. Retry-After is a heartbeat: a client that vanished without
 * closing is noticed when the next heartbeat cannot be written, and its slot freed.
 */
function takeStreamSlots(deps: AppDeps, ctx: AppContext, keyId: string): () => void {
  const { perKey, perAddress } = deps.liveStreamSlots;
  const refuse = (policy: string, limit: number, whose: string) => {
    const wait = deps.config.LIVE_STREAM_HEARTBEAT_SECONDS;
    ctx.set('RateLimit-Policy', [ctx.response.get('RateLimit-Policy'), `"${policy}";q=${limit}`].filter(Boolean).join(', '));
    ctx.set('RateLimit', [ctx.response.get('RateLimit'), `"${policy}";r=0;t=${wait}`].filter(Boolean).join(', '));
    return new AppError(429, 'rate_limited', `${limit} live streams are already open for ${whose} on this server; close one or try again later`, {
      headers: { 'Retry-After': String(wait) },
    });
  };
  const forKey = perKey.acquire(keyId);
  if (!forKey) throw refuse('live_streams_per_key', perKey.limit, 'this API key');
  const forAddress = perAddress.acquire(ctx.ip);
  if (!forAddress) {
    forKey();
    throw refuse('live_streams_per_address', perAddress.limit, 'this client address');
  }
  return () => { forKey(); forAddress(); };
}

export const conversationsFamily: RouteFamily = {
  base: BASE,
  order: 120,
  tag: 'Conversations',
  description: 'Recorded and live conversations of the organization\'s agents, with transcripts; simulations are conversations too.',
  routes: [
    // Before `/conversations/:id`, which would take `live` for an id.
    route({
      method: 'GET', path: '/conversations/live', operationId: 'list_live_conversations', summary: 'The live inbox: conversations in progress',
      description: 'Active conversations on text surfaces (web, sms, email), most recently active first, with the visitor\'s '
        + 'presence, the calling member\'s `unread_count`, `assigned_to`, `mode` and `needs_human`.',
      permissions: ['conversations.read'],
      responses: { 200: { description: 'Conversations in progress', schema: LiveConversationListSchema } },
      async handler({ principal, deps }) {
        if (principal.memberId) await touchInboxMember(deps.sql, principal.memberId);
        return { status: 200, body: { data: await listLiveConversations(deps.sql, principal.orgId, principal.memberId, principal.agentScope) } };
      },
    }),
    route({
      method: 'GET', path: '/conversations/live/stream', operationId: 'stream_live_conversations', summary: 'The live inbox as Server-Sent Events',
      description: '`text/event-stream` of `message`, `started`, `ended`, `assigned`, `mode_changed` and `alert` events (each `data` names its '
        + '`conversation_id`). `alert` (agents with `live_chat_alerts`, for the conversations in their `live_chat_alert_scope`): '
        + '`{conversation_id, widget_id, surface, reason: handoff_requested|visitor_message, scope, assigned_to, text}`; with the scope '
        + '`assigned` only the assigned member\'s stream (and organization keys) receives it. With a heartbeat comment on a quiet line. Send `Last-Event-ID` to replay what followed that event '
        + '(ten minutes back at most). The stream ends after a few minutes; reconnect with `Last-Event-ID`.',
      permissions: ['conversations.read'],
      responses: { 200: { description: 'An event stream', mediaType: 'text/event-stream', schema: Type.String({ description: 'Server-Sent Events: `id`, `event` and `data` (JSON) lines, and `:` heartbeat comments' }) } }, eventStream: true,
      async handler({ principal, deps, ctx }) {
        const release = takeStreamSlots(deps, ctx, principal.keyId);
        let unwatch = () => {};
        let stream: PassThrough;
        try {
          if (principal.memberId) await touchInboxMember(deps.sql, principal.memberId);
          const member = principal.memberId ? await findMember(deps.sql, principal.memberId) : null;
          stream = await openLiveStream({ sql: deps.sql, hub: deps.liveHub }, {
            orgId: principal.orgId, lastEventId: ctx.get('Last-Event-ID') || null, memberEmail: member?.email ?? null, agentScope: principal.agentScope,
            heartbeatSeconds: deps.config.LIVE_STREAM_HEARTBEAT_SECONDS, maxSeconds: deps.config.LIVE_STREAM_MAX_SECONDS,
            onClose: (cb) => {
              ctx.req.once('close', cb);
              // Revoking the key (or user token) ends the stream at once, on whichever replica holds it (issue 40, D18).
              unwatch = deps.authenticator.watchRevocation(principal.keyId, cb);
            },
          });
        } catch (err) {
          release();
          unwatch();
          throw err;
        }
        stream.once('close', () => { release(); unwatch(); });
        ctx.req.socket.setTimeout(0);
        ctx.set('Cache-Control', 'no-cache, no-transform');
        ctx.set('X-Accel-Buffering', 'no');
        ctx.type = 'text/event-stream; charset=utf-8';
        ctx.body = stream;
        return { status: 200 };
      },
    }),
    route({
      method: 'GET', path: '/conversations', operationId: 'list_conversations', summary: 'List conversations, newest first',
      description: 'Real conversations only by default; `simulated=1` lists only simulations, `simulated=all` both. '
        + '`widget_id` keeps one agent\'s (an unknown agent has none). Conversations of deleted agents are gone. '
        + '`total` is exact.',
      permissions: ['conversations.read'], query: ConversationListQuery,
      responses: { 200: { description: 'A page of conversations', schema: ConversationListSchema } },
      async handler({ query, principal, deps }) {
        const page = await listConversations(deps.sql, principal.orgId, { ...query, agent_scope: principal.agentScope });
        return pageReply(page, query);
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
        if (!conversation || !inScope(principal, conversation.widget_id)) throw notFound('conversation');
        return {
          status: 200,
          body: { ...conversation, card_url: cardUrl(publicOrigin(ctx), deps.secrets, conversation.id), ...await voiceDetailOf(deps.sql, principal.orgId, conversation.id) },
        };
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
    route({
      method: 'POST', path: '/conversations/:id/advisor', operationId: 'advise_conversation', summary: 'Act on a live conversation as a member',
      description: '`take_over` (the agent stops answering; the visitor sees the member join), `hand_back` (the agent answers again; an '
        + 'assignee is released, reason `handed_back`, and the conversation is not queued), `assign {user_email}` (as `POST /conversations/:id/assign` '
        + 'does: a history step, `conversation.assigned` and the member\'s notice), '
        + '`mark_read`, `reply {text}` (in human mode only; the visitor sees it with role `human_agent`; mailed in an email conversation, '
        + 'texted through the carrier in an SMS one: 502 `carrier_error` and nothing recorded when the carrier refuses). Needs a user-scoped `ut_` '
        + 'token (403 `user_token_required` otherwise). A departed visitor (ended, or silent past the inactivity limit) and a voice '
        + 'conversation are 409 `not_claimable`. Each action but `mark_read` is recorded as a `system` message.',
      permissions: ['conversations.write'], userToken: true, params: IdParams, body: AdvisorActionSchema,
      responses: { 200: { description: 'The conversation as the live inbox shows it', schema: LiveConversationSchema } },
      async handler({ params, body, principal, deps }) {
        return { status: 200, body: await runAdvisorAction(deps, principal, params.id, body) };
      },
    }),
    route({
      method: 'POST', path: '/conversations/:id/close', operationId: 'close_conversation', summary: 'Close a conversation',
      description: 'Ends an active text conversation (web, sms, email) for a member or key: a `system` message names who closed it, '
        + 'its assignment ends (a `released` step with reason `closed`, `conversation.released`; the member\'s slot is free at once, and '
        + 'the next waiting conversation is assigned), and it ends as every conversation does, with `ended_reason` `closed`, its usage '
        + 'record, `conversation.ended` and then its evaluation. 409 `invalid_state` when it has ended already, or is a call or a simulation.',
      permissions: ['conversations.write'], params: IdParams, body: Type.Object({}, { additionalProperties: false }),
      responses: { 200: { description: 'The conversation as the live inbox shows it, ended', schema: LiveConversationSchema } },
      async handler({ params, principal, deps }) {
        return { status: 200, body: await closeConversation(deps, principal, params.id) };
      },
    }),
    route({
      method: 'GET', path: '/conversations/:id/annotations', operationId: 'get_conversation_annotations', summary: 'Read a conversation\'s tags, labels, rating and notes',
      permissions: ['conversations.read'], params: IdParams,
      responses: { 200: { description: 'The annotations', schema: AnnotationsSchema } },
      async handler({ params, principal, deps }) {
        await assertInScope(deps.sql, principal, params.id);
        return { status: 200, body: await readAnnotations(deps.sql, principal.orgId, params.id) };
      },
    }),
    route({
      method: 'PATCH', path: '/conversations/:id/annotations', operationId: 'update_conversation_annotations', summary: 'Change tags, labels or the summary rating',
      description: 'Each list given replaces the old one; tags and labels are case-folded and kept once each (50 at most). '
        + '`summary_rating` is 1 to 5, or null.',
      permissions: ['conversations.write'], params: IdParams, body: AnnotationsPatchSchema,
      responses: { 200: { description: 'The annotations', schema: AnnotationsSchema } },
      async handler({ params, body, principal, deps }) {
        await assertInScope(deps.sql, principal, params.id);
        return { status: 200, body: await changeAnnotations(deps.sql, principal.orgId, params.id, body) };
      },
    }),
    route({
      method: 'POST', path: '/conversations/:id/annotations/notes', operationId: 'add_conversation_note', summary: 'Append a note',
      description: 'The note carries its author (the member of a user token, else the key) and time.',
      permissions: ['conversations.write'], params: IdParams, body: NoteCreateSchema,
      responses: { 201: { description: 'The note', schema: NoteSchema } },
      async handler({ params, body, principal, deps }) {
        await assertInScope(deps.sql, principal, params.id);
        const note = await addNote(deps.sql, principal, params.id, body.text);
        return { status: 201, body: note, headers: { Location: `${BASE}/conversations/${params.id}/annotations` } };
      },
    }),
  ],
};
