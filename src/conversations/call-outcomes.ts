import type { Db } from '../db/index.ts';
import { findCallOfConversation, markCalleeDoNotCall, recordCallOutcome, type CallOfConversation, type CallRecord } from '../db/campaigns.ts';
import { localClock } from '../domain/calling-window.ts';
import type { OutboundIntent, CallbackTime } from '../runtime/outbound.ts';
import type { OutboundCall } from '../runtime/types.ts';
import type { CallOutcome } from '../schemas/campaigns.ts';

/**
 * What a callee's answer does to a campaign call (issue 43): "not interested" and "take me off your
 * list" end it (the latter puts the callee on do-not-call), "call me later" ends it with a callback
 * time, from which the call's end queues the retry. Imports only repositories and pure rules, so the
 * conversation turn can call it in its own transaction.
 */

/** The outcomes after which the agent says goodbye and the call ends. */
export const CLOSING_OUTCOMES: readonly CallOutcome[] = ['not_interested', 'do_not_call', 'callback_requested'];

/** A later callback with no time said: an hour from now. */
const DEFAULT_CALLBACK_SECONDS = 3600;

/** Seconds from `now` to the callback the callee asked for, on their own clock (`zone`). */
export function secondsUntilCallback(at: CallbackTime, zone: string, now: Date): number {
  if (!at) return DEFAULT_CALLBACK_SECONDS;
  if ('inSeconds' in at) return at.inSeconds;
  const target = at.hour * 3600 + at.minute * 60;
  let delta = target - localClock(zone, now).secondOfDay;
  // A time already past today (or within the minute) is tomorrow's.
  if (delta <= 60) delta += 86_400;
  return delta;
}

/** The campaign's words for the runtime: why the agent calls. */
export function outboundOf(found: CallOfConversation): OutboundCall {
  return { objective: found.campaign.objective, opening_line: found.campaign.opening_line, voicemail_message: found.campaign.voicemail_message };
}

/** The campaign call a conversation belongs to (a phone conversation only), or null. */
export async function campaignCallOf(db: Db, conversation: { id: string; surface: string }): Promise<CallOfConversation | null> {
  return conversation.surface === 'phone' ? findCallOfConversation(db, conversation.id) : null;
}

/** Records the outcome an intent that ends the call means, in the turn's transaction; null for one that does not end it. */
export async function closeCall(tx: Db, call: CallRecord, intent: OutboundIntent, now: Date): Promise<CallOutcome | null> {
  switch (intent.kind) {
    case 'not_interested':
      await recordCallOutcome(tx, call.id, 'not_interested');
      return 'not_interested';
    case 'do_not_call':
      await markCalleeDoNotCall(tx, call.orgId, call);
      await recordCallOutcome(tx, call.id, 'do_not_call');
      return 'do_not_call';
    case 'callback': {
      const at = new Date(now.getTime() + secondsUntilCallback(intent.at, call.timezone, now) * 1000);
      await recordCallOutcome(tx, call.id, 'callback_requested', at);
      return 'callback_requested';
    }
    default:
      return null;
  }
}

/** Whether the conversation's call was closed by the callee's answer: the agent said goodbye, the line is hung up. */
export async function callClosed(db: Db, conversationId: string): Promise<boolean> {
  const found = await findCallOfConversation(db, conversationId);
  return found !== null && found.call.outcome !== null && CLOSING_OUTCOMES.includes(found.call.outcome);
}
