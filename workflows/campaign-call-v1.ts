import { condition, patched, proxyActivities, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { CampaignActivities } from '../activities/campaigns.ts';
import type { EndedReason, TerminalCallStatus } from '../src/schemas/campaigns.ts';
import {
  CARRIER_STEPS, carrierStatusSignal, hangupSignal, hangupUpdate, isEnd, sandboxScript, type CampaignCallInput, type CampaignCallResult,
} from './campaign-call.ts';

/**
 * The first campaign call workflow (type `runCampaignCall`), kept for the runs started before
 * `runCampaignCallV2` (workflows/campaign-call.ts) replaced it: they replay on this code until they
 * end. Delete it once no `runCampaignCall` run is open. Do not change it.
 */

// Short, idempotent steps (a row update, one carrier request): local activities, so a call costs the
// server no activity tasks (bench:campaigns measured a third of a call's CPU in the Temporal server).
const acts = proxyLocalActivities<CampaignActivities>({
  startToCloseTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});
// The sandbox callee's conversation runs the agent for a few turns.
const { converseSandboxCall } = proxyActivities<CampaignActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
});
// They heartbeat while they run: a worker that dies under one is noticed in seconds, not at its timeout,
// and the call (which waits for them) ends as soon as another worker has run it again.
const HEARTBEAT_TIMEOUT = '20 seconds';
const { playSandboxCallee } = proxyActivities<CampaignActivities>({
  startToCloseTimeout: '2 minutes', heartbeatTimeout: HEARTBEAT_TIMEOUT,
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
});
// Opening an answered call's conversation: the agent's greeting (one runtime turn), then a row or two.
const { openCallConversation } = proxyLocalActivities<CampaignActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
});
// The call's conversation's evaluation, as the conversation workflow's evaluation child runs it (an LLM can take a while).
const { evaluateCallConversation } = proxyActivities<CampaignActivities>({
  startToCloseTimeout: '3 minutes', heartbeatTimeout: HEARTBEAT_TIMEOUT,
  retry: { initialInterval: '5 seconds', maximumInterval: '5 minutes', maximumAttempts: 10 },
});

/**
 * Runs started before it (no marker in their history) keep the earlier steps: the conversation's
 * own lifecycle and evaluation workflows, a write per carrier status. Runs with it own their
 * conversation (opened, ended and evaluated by this workflow's activities) and write statuses due
 * at the same instant once.
 */
const OWNS_CONVERSATION = 'campaign-call-owns-conversation';

/**
 * One campaign call (`campaign-call:<call id>`): queued → claimed → dialing → initiated → ringing →
 * in_progress, then its end. The carrier's callbacks arrive as signals (the sandbox's are played
 * here on timers); once answered, a timer of `max_duration_seconds` hangs up with `max_duration`.
 * A hangup before dialing ends it `canceled`, in flight `completed`/`hangup`. Each change is
 * written by an activity.
 */
export async function runCampaignCall(input: CampaignCallInput): Promise<CampaignCallResult> {
  const { callId } = input;
  const owns = patched(OWNS_CONVERSATION);
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

  // An answered sandbox call's conversation runs beside the call's timers; the call ends after it.
  let conversing: Promise<unknown> | null = null;
  let answeredAt: number | null = null;
  const end = async (status: TerminalCallStatus, reason: EndedReason): Promise<CampaignCallResult> => {
    if (conversing) await conversing;
    const ended = await acts.endCall(owns ? { callId, status, reason, ownsConversation: true } : { callId, status, reason });
    result = { status: ended.status, ended_reason: ended.ended_reason };
    // The call's conversation ended with it (`conversation.ended`); its evaluation follows here.
    if (owns && ended.conversation) await evaluateCallConversation({ callId });
    return result;
  };

  if ((await acts.claimCall({ callId })).state === 'ended') return (result = { status: 'canceled', ended_reason: null });
  if (hangup) return end('canceled', 'canceled');
  const dial = await acts.dialCall({ callId });
  if (dial.state === 'ended') return (result = { status: 'canceled', ended_reason: null });

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
    let status: string;
    if (heard.length) status = heard.shift()!;
    else if (Date.now() >= dueCap) {
      await acts.hangUpAtCarrier({ callId });
      return end('completed', 'max_duration');
    } else {
      status = script.shift()!.status;
      lastAt = Date.now();
      // Steps due at the same instant (ring time 0: ringing, then answered) are written once, as the last of them.
      while (owns && script[0]?.afterMs === 0 && !isEnd(status) && !isEnd(script[0].status)) status = script.shift()!.status;
    }
    const step = CARRIER_STEPS[status];
    if (!step) continue;
    if ('end' in step) return end(step.end, step.reason);
    if (step.to === 'ringing') {
      await acts.markCall({ callId, status: 'ringing' });
    } else if (answeredAt === null) {
      await acts.markCall({ callId, status: 'in_progress' });
      answeredAt = Date.now();
      if (!owns) {
        if (dial.sandbox) conversing = converseSandboxCall({ callId }).catch(() => undefined);
      } else if (dial.sandbox) {
        // A live call's conversation is opened by the carrier's request for the answered call's TwiML.
        const talkSeconds = dial.sandbox.talkSeconds;
        conversing = openCallConversation({ callId })
          .then(() => playSandboxCallee({ callId, talkSeconds }))
          .catch(() => undefined);
      }
    }
  }
}
