import type { Principal } from '../auth/authenticator.ts';
import { lockWaiting } from '../db/assignments.ts';
import { insertMessages } from '../db/conversations.ts';
import { findLiveConversation, findMember, TEXT_SURFACES } from '../db/live-inbox.ts';
import { AppError, notFound } from '../errors.ts';
import type { LiveConversation } from '../schemas/live-inbox.ts';
import { endAssignment, inScope, pokeAssignment, pokeWaitingConversations } from '../assignments/index.ts';
import { displayNameOf } from './advisor.ts';
import { markConversationEnded, signalLifecycle, type ConversationDeps } from './lifecycle.ts';

type CloseDeps = Pick<ConversationDeps, 'sql' | 'temporal' | 'log' | 'config'>;

/**
 * Closes an active text conversation from the console or the API (issue 45): a system note, the
 * assignment's end (a `released` step with reason `closed`: the member's slot is free), then the end
 * every ending has (`ended_reason` `closed`, the usage record, `conversation.ended`), in one transaction.
 * After commit the lifecycle workflow goes on to the evaluation, and the waiting conversations hear of
 * the freed slot at once. 409 `invalid_state` for an ended, voice or simulated conversation.
 */
export async function closeConversation(deps: CloseDeps, principal: Principal, id: string): Promise<LiveConversation> {
  const member = principal.memberId ? await findMember(deps.sql, principal.memberId) : null;
  const released = await deps.sql.begin(async (tx) => {
    const c = await lockWaiting(tx, id, principal.orgId);
    if (!c || !inScope(principal, c.agentId)) throw notFound('conversation');
    if (c.status !== 'active') throw new AppError(409, 'invalid_state', 'the conversation has ended already');
    if (c.isSimulated) throw new AppError(409, 'invalid_state', 'a simulated conversation ends with its simulation');
    if (!(TEXT_SURFACES as readonly string[]).includes(c.surface)) throw new AppError(409, 'invalid_state', 'a call ends when it hangs up: it cannot be closed');
    await insertMessages(tx, c.id, [{ role: 'system', text: `${member ? displayNameOf(member.email) : 'The team'} closed the conversation` }]);
    const step = await endAssignment(tx, c, 'closed', member?.id ?? null);
    await markConversationEnded(tx, c.id, 'closed');
    return step;
  });
  await signalLifecycle(deps, id, 'ended');
  // Its assignment workflow (if one waits) ends now; a freed slot takes the next waiting conversation.
  await pokeAssignment(deps, id);
  if (released) await pokeWaitingConversations(deps, principal.orgId);
  const live = await findLiveConversation(deps.sql, principal.orgId, id, principal.memberId);
  if (!live) throw notFound('conversation');
  return live;
}
