import { condition, defineSignal, defineUpdate, proxyActivities, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { CampaignActivities } from '../activities/campaigns.ts';
import type { CallStatus, EndedReason, TerminalCallStatus } from '../src/schemas/campaigns.ts';
import type { EndedCall } from '../src/campaigns/calls.ts';
import type { SandboxCallOutcome } from '../src/telephony/sandbox.ts';

/** An operator's hangup: answers once the call has stopped, `canceled` before dialing, `hung_up` in flight. */
export const hangupUpdate = defineUpdate<{ action: 'canceled' | 'hung_up' }>('hangup');
/** The campaign was canceled: stop this call as a hangup would. */
export const hangupSignal = defineSignal('hangup');
/** A carrier status callback (Twilio's `CallStatus`: ringing, in-progress, completed, busy, no-answer, failed, canceled). */
export const carrierStatusSignal = defineSignal<[string]>('carrierStatus');

// Every step that does not wait on the callee is a local activity: it runs in the workflow task that
// asked for it, so a call the carrier answers and ends at once (the sandbox with ring and talk
// times of 0) is one workflow task and no activity task (bench:campaigns: the Temporal server
// spends several ms of CPU on each task, which was most of a call's cost).
const acts = proxyLocalActivities<CampaignActivities>({
  startToCloseTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});
// What the carrier said at one instant, written at once; an answered call's conversation is opened
// by it (the agent's greeting: one runtime turn), and the step that ends the call evaluates its conversation
// (an LLM may take a while: the evaluation's own timeout). A failing evaluation is retried with the step,
// then given up (settleCall logs it): the call's end, written first, is never undone by it.
const { settleCall } = proxyLocalActivities<CampaignActivities>({
  startToCloseTimeout: '3 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});
// The sandbox callee's turns last the call's talk time: a normal activity, heartbeating (a worker that
// dies under it is noticed in seconds, not at its timeout, and the call, which waits for it, goes on).
const { playSandboxCallee } = proxyActivities<CampaignActivities>({
  startToCloseTimeout: '2 minutes', heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
});

type Step = { to: 'ringing' | 'in_progress' } | { end: TerminalCallStatus; reason: EndedReason };
const CARRIER_STEPS: Record<string, Step> = {
  ringing: { to: 'ringing' },
  'in-progress': { to: 'in_progress' },
  answered: { to: 'in_progress' },
  completed: { end: 'completed', reason: 'carrier' },
  busy: { end: 'busy', reason: 'carrier' },
  'no-answer': { end: 'no_answer', reason: 'carrier' },
  failed: { end: 'failed', reason: 'error' },
  canceled: { end: 'canceled', reason: 'carrier' },
};

/** The sandbox plays the callbacks a carrier would send, each after a delay (contract, "Sandbox carrier"). */
function sandboxScript(outcome: SandboxCallOutcome): { afterMs: number; status: string }[] {
  const ring = outcome.ringSeconds * 1000;
  switch (outcome.status) {
    case 'failed': return [{ afterMs: 0, status: 'failed' }];
    case 'busy': return [{ afterMs: 0, status: 'busy' }];
    case 'no_answer': return [{ afterMs: 0, status: 'ringing' }, { afterMs: ring, status: 'no-answer' }];
    default: return [{ afterMs: 0, status: 'ringing' }, { afterMs: ring, status: 'in-progress' }, { afterMs: outcome.talkSeconds * 1000, status: 'completed' }];
  }
}

export interface CampaignCallInput { callId: string; maxDurationSeconds: number }
export interface CampaignCallResult { status: CallStatus; ended_reason: EndedReason | null }

/**
 * One campaign call (`campaign-call:<call id>`): queued → claimed → dialing → initiated → ringing →
 * in_progress, then its end. The carrier's callbacks arrive as signals (the sandbox's are played
 * here on timers); once answered, a timer of `max_duration_seconds` hangs up with `max_duration`.
 * A hangup before dialing ends it `canceled`, in flight `completed`/`hangup`. Each change is
 * written by an activity. The call owns its answered conversation: it opens it, ends it with the
 * call and evaluates it (in the step that ends the call). Statuses due at the same instant (ring
 * time 0: ringing, then answered) are written once, as the last of them.
 */
export async function runCampaignCall(input: CampaignCallInput): Promise<CampaignCallResult> {
  const { callId } = input;
  let hangup = false;
  let result: CampaignCallResult | null = null;
  const heard: string[] = [];
  setHandler(hangupSignal, () => { hangup = true; });
  setHandler(carrierStatusSignal, (status) => { heard.push(status); });
  setHandler(hangupUpdate, async () => {
    hangup = true;
    await condition(() => result !== null);
    return { action: result!.status === 'canceled' ? 'canceled' as const : 'hung_up' as const };
  }, { validator: () => { if (result) throw new Error('this call has ended'); } });

  // An answered sandbox call's callee plays its turns beside the call's timers; the call ends after them.
  let conversing: Promise<unknown> | null = null;
  let answeredAt: number | null = null;
  // The call's conversation ended with it (`conversation.ended`) and was evaluated by the same step.
  const settled = (ended: EndedCall): CampaignCallResult => (result = { status: ended.status, ended_reason: ended.ended_reason });
  const end = async (status: TerminalCallStatus, reason: EndedReason): Promise<CampaignCallResult> => {
    if (conversing) await conversing;
    return settled((await settleCall({ callId, end: { status, reason } }))!);
  };

  if (hangup) return end('canceled', 'canceled');
  // Claimed, then dialed: do-not-call is checked in between, so a blocked callee never reaches the carrier.
  const dial = await acts.placeCall({ callId });
  // Ended before it was dialed, or back in the queue (its campaign was paused): the queue goes on without it.
  if (dial.state !== 'initiated') return (result = { status: dial.state === 'requeued' ? 'queued' : 'canceled', ended_reason: null });

  // In flight from here.
  const script = dial.sandbox ? sandboxScript(dial.sandbox) : [];
  let lastAt = Date.now();
  for (;;) {
    const dueScript = script.length ? lastAt + script[0]!.afterMs : Infinity;
    const dueCap = answeredAt !== null ? answeredAt + input.maxDurationSeconds * 1000 : Infinity;
    const due = Math.min(dueScript, dueCap);
    if (!hangup && heard.length === 0 && due > Date.now()) {
      await condition(() => hangup || heard.length > 0, due === Infinity ? undefined : due - Date.now());
    }
    if (hangup) {
      await acts.hangUpAtCarrier({ callId });
      return end('completed', 'hangup');
    }
    if (heard.length === 0 && Date.now() >= dueCap) {
      await acts.hangUpAtCarrier({ callId });
      return end('completed', 'max_duration');
    }
    // What the carrier says now: the callbacks heard, else the sandbox's steps due at this instant.
    let statuses: string[];
    if (heard.length) statuses = heard.splice(0);
    else {
      statuses = [script.shift()!.status];
      while (script[0]?.afterMs === 0) statuses.push(script.shift()!.status);
      lastAt = Date.now();
    }
    // Written by one activity, in order: the furthest in-flight status reached (ringing, or answered), then the end if it came too.
    let reached: 'ringing' | 'in_progress' | undefined;
    let ends: { status: TerminalCallStatus; reason: EndedReason } | undefined;
    for (const status of statuses) {
      const step = CARRIER_STEPS[status];
      if (!step) continue;
      if ('end' in step) { ends = { status: step.end, reason: step.reason }; break; }
      if (answeredAt === null && reached !== 'in_progress') reached = step.to;
    }
    if (!reached && !ends) continue;
    const answered = reached === 'in_progress';
    if (answered) answeredAt = Date.now();
    const heardAnswer = answered ? { answeredAt: answeredAt! } : {};
    // A live call's conversation is opened by the carrier's request for the answered call's TwiML.
    const openConversation = answered && dial.sandbox !== null;
    if (ends) {
      if (conversing) await conversing;
      return settled((await settleCall({ callId, reached, openConversation, ...heardAnswer, end: ends }))!);
    }
    await settleCall({ callId, reached, openConversation, ...heardAnswer });
    // With no talk time the callee hangs up on the greeting: no turns to play.
    const talkSeconds = dial.sandbox?.talkSeconds ?? 0;
    if (answered && talkSeconds > 0) conversing = playSandboxCallee({ callId, talkSeconds }).catch(() => undefined);
  }
}
