import type { Principal } from '../auth/authenticator.ts';
import type { Db, Sql } from '../db/index.ts';
import { insertMessages } from '../db/conversations.ts';
import {
  findAnnotations, findLiveConversation, findMember, findMemberByEmail, insertNote, lockAdvisable, markConversationRead,
  setConversationMode, touchActivity, touchInboxMember, updateAnnotations, TEXT_SURFACES, type AdvisableConversation,
} from '../db/live-inbox.ts';
import { AppError, fieldError, notFound } from '../errors.ts';
import { foldTags, type AdvisorActionInput, type Annotations, type AnnotationsPatch, type LiveConversation, type Note } from '../schemas/live-inbox.ts';
import { signalLifecycle, type ConversationDeps } from './lifecycle.ts';
import { queueEmailReply } from './email.ts';
import { assignLockedTo, endAssignment, inScope, pokeAssignment, pokeWaitingConversations, requestPerson } from '../assignments/index.ts';
import { lockWaiting } from '../db/assignments.ts';
import { findSmsThread } from '../db/carrier-sessions.ts';
import { CarrierError, type Carrier } from '../telephony/carrier.ts';

/**
 * The live inbox's use cases: a member takes a conversation over from the agent, replies, hands
 * it back, assigns it, marks it read; and annotations. Each action is recorded as a `system`
 * message; take-over and hand-back are also signals to the conversation's lifecycle workflow,
 * which then applies the human inactivity limit.
 */

type AdvisorDeps = Pick<ConversationDeps, 'sql' | 'temporal' | 'log' | 'config'> & { carrier: Carrier };

/** How the visitor sees a member: the part of their e-mail before the @. */
export const displayNameOf = (email: string): string => email.split('@')[0] || email;

/**
 * Whether a member may act on the conversation: a text conversation whose visitor is still there
 * (not ended, and not silent past the inactivity limit that applies). Voice is never claimable.
 */
function claimable(c: AdvisableConversation, deps: AdvisorDeps): boolean {
  if (!(TEXT_SURFACES as readonly string[]).includes(c.surface) || c.isSimulated) return false;
  if (c.status !== 'active') return false;
  const limit = c.mode === 'human' ? deps.config.HUMAN_INACTIVITY_SECONDS : deps.config.CONVERSATION_INACTIVITY_SECONDS;
  return Date.now() - c.lastSeenAt.getTime() <= limit * 1000;
}

const notClaimable = () => new AppError(409, 'not_claimable', 'the visitor has left, or this is a voice conversation: it cannot be taken over');

/** Runs one advisor action for a user-scoped principal and answers the conversation as the live inbox shows it. */
export async function runAdvisorAction(deps: AdvisorDeps, principal: Principal, id: string, input: AdvisorActionInput): Promise<LiveConversation> {
  const memberId = principal.memberId!;
  if (input.action === 'assign' && !input.user_email) throw fieldError('user_email', 'required', 'user_email is required to assign');
  if (input.action === 'reply' && !input.text) throw fieldError('text', 'required', 'text is required to reply');
  const me = await findMember(deps.sql, memberId);
  if (!me) throw new AppError(403, 'user_token_required', 'this token\'s member no longer exists');
  await touchInboxMember(deps.sql, memberId);
  const done = await deps.sql.begin(async (tx) => {
    const c = await lockAdvisable(tx, principal.orgId, id);
    if (!c || !inScope(principal, c.agentId)) throw notFound('conversation');
    if (input.action === 'mark_read') {
      await markConversationRead(tx, c.id, memberId);
      return { c, signal: null, said: null, assigned: false, freed: false };
    }
    if (!claimable(c, deps)) throw notClaimable();
    const applied = await applyAction(tx, c, { id: memberId, email: me.email }, input);
    // A member's reply in an SMS conversation is texted before it commits: a carrier refusal records nothing.
    if (applied.said && c.surface === 'sms') await textReply(deps, tx, c.id, input.text!);
    return { c, ...applied };
  });
  if (done.signal) await signalLifecycle(deps, id, done.signal);
  // An assignment goes the assignment use case's way: its workflow follows the new assignee (and starts, if none ran).
  if (done.assigned) await requestPerson(deps, { id, orgId: principal.orgId, agentId: done.c.agentId });
  // The assignment workflow (if one waits) learns of a take-over or hand-back at once.
  else if (done.signal === 'takeOver' || done.signal === 'handBack') await pokeAssignment(deps, id);
  // A hand-back freed its assignee's slot: the waiting conversations hear of it now.
  if (done.freed) await pokeWaitingConversations(deps, principal.orgId);
  // A member's reply in an email conversation goes out by mail too.
  if (done.said) await queueEmailReply(deps, done.c, [done.said]);
  const live = await findLiveConversation(deps.sql, principal.orgId, id, memberId);
  if (!live) throw notFound('conversation');
  return live;
}

async function textReply(deps: AdvisorDeps, tx: Db, conversationId: string, text: string): Promise<void> {
  const thread = await findSmsThread(tx, conversationId);
  if (!thread) return;
  try {
    await deps.carrier.sendSms({ from: thread.ourNumber, to: thread.caller, body: text });
  } catch (err) {
    if (err instanceof CarrierError) throw new AppError(502, 'carrier_error', `${err.message}; the reply was not sent nor recorded`);
    throw err;
  }
}

interface Change { signal: 'takeOver' | 'handBack' | 'activity' | null; said: string | null; assigned: boolean; freed: boolean }
const NO_CHANGE: Change = { signal: null, said: null, assigned: false, freed: false };

/**
 * The action's change and its system message: the lifecycle signal to send after commit, a reply's
 * message id, whether it assigned the conversation, and whether a hand-back released its assignee.
 */
async function applyAction(tx: Db, c: AdvisableConversation, me: { id: string; email: string }, input: AdvisorActionInput): Promise<Change> {
  const name = displayNameOf(me.email);
  switch (input.action) {
    case 'take_over':
      if (c.mode === 'human' && c.heldBy === me.id) return NO_CHANGE;
      await setConversationMode(tx, c.id, 'human', me.id);
      await insertMessages(tx, c.id, [{ role: 'system', text: `${name} joined the conversation` }]);
      await markConversationRead(tx, c.id, me.id);
      return { ...NO_CHANGE, signal: 'takeOver' };
    case 'hand_back': {
      if (c.mode === 'agent') return NO_CHANGE;
      await setConversationMode(tx, c.id, 'agent', null);
      await insertMessages(tx, c.id, [{ role: 'system', text: `${name} handed the conversation back to the assistant` }]);
      // The agent answers again: the assignee's slot is free (issue 45), and the conversation is not queued.
      const released = await endAssignment(tx, (await lockWaiting(tx, c.id))!, 'handed_back', me.id);
      return { ...NO_CHANGE, signal: 'handBack', freed: released !== null };
    }
    case 'assign': {
      const member = await findMemberByEmail(tx, c.orgId, input.user_email!);
      if (!member) throw fieldError('user_email', 'unknown_member', 'user_email is not a member of this organization');
      // The assignment use case's path: the history, `conversation.assigned` and the member's notice (issue 45).
      const step = await assignLockedTo(tx, (await lockWaiting(tx, c.id))!, member, me.id, `${name} assigned the conversation to ${member.email}`);
      return { ...NO_CHANGE, assigned: step !== null };
    }
    case 'reply': {
      if (c.mode !== 'human') throw new AppError(409, 'invalid_state', 'take the conversation over before replying');
      const [said] = await insertMessages(tx, c.id, [{ role: 'human_agent', text: input.text! }]);
      await touchActivity(tx, c.id);
      await markConversationRead(tx, c.id, me.id);
      return { ...NO_CHANGE, signal: 'activity', said: said!.id };
    }
    default:
      return NO_CHANGE;
  }
}

export async function readAnnotations(sql: Sql, orgId: string, id: string): Promise<Annotations> {
  const found = await findAnnotations(sql, orgId, id);
  if (!found) throw notFound('conversation');
  return found;
}

/** Replaces tags, labels or the rating; tags and labels are case-folded and kept once each. */
export async function changeAnnotations(sql: Sql, orgId: string, id: string, patch: AnnotationsPatch): Promise<Annotations> {
  const changed = await updateAnnotations(sql, orgId, id, {
    ...(patch.tags ? { tags: foldTags(patch.tags) } : {}),
    ...(patch.labels ? { labels: foldTags(patch.labels) } : {}),
    ...(patch.summary_rating !== undefined ? { summary_rating: patch.summary_rating } : {}),
  });
  if (!changed) throw notFound('conversation');
  return readAnnotations(sql, orgId, id);
}

/** Appends a note signed by the member (or, for an org key, by the key). */
export async function addNote(sql: Sql, principal: Principal, id: string, text: string): Promise<Note> {
  if (!(await findAnnotations(sql, principal.orgId, id))) throw notFound('conversation');
  const member = principal.memberId ? await findMember(sql, principal.memberId) : null;
  return insertNote(sql, id, { memberId: member?.id ?? null, author: member?.email ?? `api key ${principal.keyId}`, text });
}
