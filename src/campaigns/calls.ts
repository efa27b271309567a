import type { Db } from '../db/index.ts';
import { findAgent, findAgentToRunAndCallee } from '../db/agents.ts';
import {
  advanceCall, advanceCallReading, callIsBlocked, campaignAgentPaused, endCallAndConversation, endCallRowWithCampaign, expireQueuedCalls, findCallById, findCampaignById, findCampaignForTurn, insertRetryCall, linkOpenCallConversation, markCampaignCompleted,
  callOutcomeCounts, queuedByZone, readyCalls, toCall, toCampaign, type CallCampaign, type CallRecord, type CampaignState,
} from '../db/campaigns.ts';
import { findCallConversationToEvaluate, findConversationRecord } from '../db/conversations.ts';
import { findContact, matchContact, type CalleeLookup } from '../db/contacts.ts';
import {
  endConversation, evaluateConversation, markConversationEnded, runtimeAgent, sendVisitorMessage, startCallerConversation, type ConversationDeps,
} from '../conversations/lifecycle.ts';
import { endSession, findLiveSession, insertCarrierSession } from '../db/carrier-sessions.ts';
import { findActiveNumberByE164 } from '../db/phone-numbers.ts';
import type { Agent } from '../schemas/agents.ts';
import type { Contact } from '../schemas/contacts.ts';
import type { KnownRedaction } from '../db/redaction-cache.ts';
import type { ToolSender } from '../tools/send.ts';
import { secondsUntilOpen } from '../domain/calling-window.ts';
import { checkWrittenEvent, emitEvent, sqlWrittenEvent } from '../events/emit.ts';
import { knownAgentOfCall } from '../db/redaction-cache.ts';
import { notFound } from '../errors.ts';
import { createScriptedCaller } from '../runtime/caller.ts';
import type { CallStatus, EndedReason, TerminalCallStatus } from '../schemas/campaigns.ts';
import { CarrierError, type Carrier } from '../telephony/carrier.ts';
import { SANDBOX_CALLEES, SANDBOX_MACHINE, sandboxCallOutcome, type SandboxCallOutcome } from '../telephony/sandbox.ts';
import { callClosed } from '../conversations/call-outcomes.ts';
import { CARRIER_WEBHOOK_PATHS, publicBaseUrl, recordingStatusUrl, voiceStreamUrl, voiceTurnUrl } from '../telephony/webhook-urls.ts';
import { continueCall, playOnce, speechFor, type CarrierParams, type InboundDeps } from '../telephony/inbound.ts';
import { connectStream, emptyVoiceResponse, politeHangup, sayAndGather, sayAndHangup } from '../telephony/twiml.ts';
import { callSettingsOf, voiceModeOf } from '../telephony/phone-settings.ts';
import { issueStreamToken } from '../voice/stream-tokens.ts';
import { voicemailMessage } from '../runtime/outbound.ts';
import { recordCallOutcome } from '../db/campaigns.ts';
import { insertMessages } from '../db/conversations.ts';
import { readAfterCommit } from '../db/commit-gate.ts';
import { workflowIds } from '../temporal/ids.ts';

/**
 * The steps of one campaign call, each run by an activity of its workflow (`campaign-call:<id>`),
 * and the campaign queue's reads. Every step is idempotent: a row moves only forward, and a call
 * ends once (endCallRow), so a retried activity or a replayed workflow changes nothing twice.
 */

export interface CallDeps extends ConversationDeps { carrier: Carrier }

/** `campaign_call.ended`, in the transaction that ended the call. */
export async function emitCallEnded(tx: Db, agentId: string, call: CallRecord): Promise<void> {
  await emitEvent(tx, { orgId: call.orgId, agentId, type: 'campaign_call.ended', data: { call: toCall(call) } });
}

/**
 * Ends a call (once): status, reason, `campaign_call.ended`, its conversation, and a retry when the campaign's `retry` says so.
 * The call's workflow owns its conversation: there is no lifecycle workflow to tell.
 */
async function endCall(deps: Omit<ConversationDeps, 'runtime'>, input: {
  callId: string; status: TerminalCallStatus; reason: EndedReason;
  /** False when no carrier session can exist for it (the sandbox placed it): not looked up. */
  carrierSession?: boolean;
}):
  Promise<{ status: CallStatus; ended_reason: EndedReason | null; conversation?: boolean }> {
  const ended = await endCallInOneStatement(deps, input) ?? await deps.sql.begin(async (tx) => {
    // The call's agent and its redaction as this process knows them: the event is written by the statement that ends
    // the call when the redaction leaves its payload as it is (issue 48), else emitted after it, as before.
    const event = sqlWrittenEvent(knownAgentOfCall(input.callId));
    const ended = await endCallRowWithCampaign(tx, input.callId, input.status, input.reason, event);
    if (!ended) return null;
    const { call: row, campaign } = ended;
    if (campaign) {
      if (ended.event) checkWrittenEvent('campaign_call.ended', ended.event, { call: toCall(row) });
      else await emitCallEnded(tx, campaign.widget_id, row);
      const retry = campaign.retry;
      const retried = (row.status === 'busy' || row.status === 'no_answer') && retry?.on.includes(row.status);
      const active = campaign.status === 'running' || campaign.status === 'paused';
      if (row.outcome === 'callback_requested' && row.callback_at && active && row.attempt < MAX_CALLBACK_ATTEMPT) {
        // The callee asked to be called back: the next attempt waits until then, and the queue dials it inside the calling window.
        await insertRetryCall(tx, row, Math.max(0, Math.ceil((Date.parse(row.callback_at) - Date.now()) / 1000)));
      } else if (retry && retried && row.attempt < retry.max_attempts && active) {
        await insertRetryCall(tx, row, retry.backoff_seconds);
      }
    }
    // The call's conversation ends with the call, in its transaction (`conversation.ended` after `campaign_call.ended`).
    if (row.conversation_id) await markConversationEnded(tx, row.conversation_id, 'visitor');
    return row;
  });
  const now = ended ?? await findCallById(deps.sql, input.callId);
  // After the row: a conversation opened meanwhile was linked under its lock, so it is seen here and ends too.
  if (now?.conversation_id) {
    // Ended above with the row, unless an earlier run of this step ended the row (then it is ended here, once).
    if (!ended) await endConversation(deps, now.conversation_id, 'visitor', { lifecycle: false });
    const session = now.call_sid && input.carrierSession !== false ? await findLiveSession(deps.sql, 'voice', now.call_sid) : null;
    if (session) await endSession(deps.sql, session.id);
  }
  return { status: now?.status ?? input.status, ended_reason: now?.ended_reason ?? input.reason, conversation: Boolean(now?.conversation_id) };
}

/**
 * The call and its conversation ended by one statement (endCallAndConversation), when this process knows the call's agent
 * and its redaction leaves webhook payloads as they are, and the end cannot queue a retry (busy and unanswered calls may:
 * the transaction rules on it; a callback asked for is ruled out by the statement). Null when it wrote nothing: the
 * transaction's path then runs, as before (issue 48: 4 statements a call become 1; what is written is the same).
 */
async function endCallInOneStatement(deps: Pick<ConversationDeps, 'sql'>, input: { callId: string; status: TerminalCallStatus; reason: EndedReason }): Promise<CallRecord | null> {
  if (input.status === 'busy' || input.status === 'no_answer') return null;
  const event = sqlWrittenEvent(knownAgentOfCall(input.callId));
  const conversationEvent = event && sqlWrittenEvent(event.agentId);
  if (!event || !conversationEvent) return null;
  const ended = await endCallAndConversation(deps.sql, input.callId, input.status, input.reason, { ...event, conversationEventId: conversationEvent.id });
  if (!ended) return null;
  checkWrittenEvent('campaign_call.ended', ended.event, { call: toCall(ended.call) });
  if (ended.conversationEvent) checkWrittenEvent('conversation.ended', ended.conversationEvent, { conversation: ended.conversation });
  // As the transaction's path leaves it: a conversation ended with the call was active, so the statement ended it.
  return ended.call;
}

/** A callee asking to be called back is called again, up to this attempt. */
const MAX_CALLBACK_ATTEMPT = 10;

/** placeCall's: `requeued` when the campaign was paused before the call was dialed. */
export type PlaceResult = { state: 'ended' } | { state: 'initiated'; sandbox: SandboxCallOutcome | null } | { state: 'requeued' };

/**
 * queued → claimed → dialing → initiated in one step (the call workflow's first activity): claimed,
 * do-not-call checked (when queued, and again now: a blocked callee ends `canceled`/`blocked` and never
 * reaches the carrier), then the carrier places the call, only while the campaign runs: a call whose
 * campaign was paused meanwhile goes back to the queue (`requeued`), one whose campaign was canceled
 * ends `canceled`. A carrier refusal ends it `failed`/`error`. Run again (its workflow task was lost
 * with its worker), it goes on from where the row is.
 */
export async function placeCall(deps: CallDeps, callId: string): Promise<PlaceResult> {
  // The claim reads the campaign's number and the do-not-call list with it (one statement).
  const claimed = await advanceCallReading(deps.sql, callId, ['queued'], 'claimed', {}, { campaign: true, blocked: true });
  const call = claimed?.call ?? await findCallById(deps.sql, callId);
  if (!call || call.ended_at) return { state: 'ended' };
  return dialClaimed(deps, call, true, claimed ?? undefined);
}

async function dialClaimed(deps: CallDeps, call: CallRecord, whileRunning: boolean,
  /** The campaign and the do-not-call check as read with the claim of this call, just now. */
  claimed?: { campaign: CallCampaign | null; blocked: boolean }): Promise<PlaceResult> {
  const callId = call.id;
  const campaign = claimed ? claimed.campaign : await findCampaignById(deps.sql, call.campaign_id);
  if (!campaign?.from_number) {
    await endCall(deps, { callId, status: 'failed', reason: 'error' });
    return { state: 'ended' };
  }
  const outcome = deps.carrier.name === 'sandbox' ? sandboxCallOutcome(call.to_number, deps.config) : null;
  if (call.call_sid) return { state: 'initiated', sandbox: outcome }; // placed by an earlier attempt of this activity
  if (call.status === 'claimed' && (claimed ? claimed.blocked : await callIsBlocked(deps.sql, call.orgId, call))) {
    await endCall(deps, { callId, status: 'canceled', reason: 'blocked' });
    return { state: 'ended' };
  }
  // `dialing` with its start time is the attempt's key, recorded before the carrier is asked: a
  // retry that finds it (the last attempt died between placing the call and recording its id)
  // looks the call up at the carrier first, so one call row is one call at the carrier.
  const dialing = await advanceCall(deps.sql, callId, ['claimed', 'dialing'], 'dialing', { started: true, whileRunning: whileRunning && call.status === 'claimed' });
  if (!dialing) return whileRunning ? notDialed(deps, call) : { state: 'ended' };
  const base = publicBaseUrl(deps.config);
  const request = {
    from: campaign.from_number, to: call.to_number,
    url: `${base}${CARRIER_WEBHOOK_PATHS.voice}?campaign_call=${callId}`,
    statusUrl: `${base}${CARRIER_WEBHOOK_PATHS.voiceStatus}?campaign_call=${callId}`,
    amdStatusUrl: `${base}${CARRIER_WEBHOOK_PATHS.voiceAmd}?campaign_call=${callId}`,
  };
  // A lookup that fails is retried with the activity (never taken for "no call"), so no second call is placed blind.
  const earlier = call.status === 'dialing' ? await deps.carrier.findPlacedCall({ ...request, since: new Date(dialing.started_at!) })
    .catch((err: unknown) => { throw new Error(`could not look up an earlier attempt's call: ${(err as Error).message}`); }) : null;
  let sid: string;
  try {
    if (earlier) deps.log.info({ call_id: callId, call_sid: earlier.sid }, 'a retried dial found the call placed by the attempt before it');
    ({ sid } = earlier ?? await deps.carrier.placeCall(request));
  } catch (err) {
    if (!(err instanceof CarrierError)) throw err;
    deps.log.warn({ err, call_id: callId }, 'the carrier refused a campaign call');
    await endCall(deps, { callId, status: 'failed', reason: 'error' });
    return { state: 'ended' };
  }
  await advanceCall(deps.sql, callId, ['dialing'], 'initiated', { call_sid: sid });
  return { state: 'initiated', sandbox: outcome };
}

/**
 * A claimed call whose campaign was not running when it was to be dialed: back to the queue while
 * paused, dialed after all when the campaign was resumed in between, else (canceled) `canceled`.
 */
async function notDialed(deps: CallDeps, call: CallRecord): Promise<PlaceResult> {
  const campaign = await findCampaignById(deps.sql, call.campaign_id);
  // A paused agent holds its running campaign's calls as a paused campaign does (issue 43).
  const held = campaign?.status === 'paused' || (campaign?.status === 'running' && await campaignAgentPaused(deps.sql, campaign.id));
  if (held && await advanceCall(deps.sql, call.id, ['claimed'], 'queued')) return { state: 'requeued' };
  const now = await findCallById(deps.sql, call.id);
  if (!now || now.ended_at) return { state: 'ended' };
  if (now.status === 'queued') return { state: 'requeued' };
  // Dialed meanwhile by an earlier attempt of this step: go on with it.
  if (now.status !== 'claimed') return dialClaimed(deps, now, false);
  // Paused and resumed between the dial's check and this read: dial it now (a new pause is checked again).
  if (campaign?.status === 'running' && !held) return dialClaimed(deps, now, true);
  await endCall(deps, { callId: call.id, status: 'canceled', reason: 'canceled' });
  return { state: 'ended' };
}

export type EndedCall = Awaited<ReturnType<typeof endCall>>;

/**
 * What a call's workflow writes at one instant: the in-flight status the carrier has reached
 * (ringing, or answered: then the sandbox callee's conversation is opened with the agent's greeting),
 * then its end when that came at the same instant (a sandbox callee who hangs up at once, a busy
 * line), and the evaluation of the ended call's conversation, once. Null when it has not ended.
 */
export async function settleCall(deps: CallDeps, input: {
  callId: string; reached?: 'ringing' | 'in_progress'; openConversation?: boolean; end?: { status: TerminalCallStatus; reason: EndedReason };
  /**
   * When the workflow heard the answer (ms since the epoch): `answered_at`, from which its cap's timer and the call's
   * `duration_seconds` both run, so a call cut off at `max_duration_seconds` lasts at least that long however late this
   * step runs. Now when absent.
   */
  answeredAt?: number;
  /** The activity's attempt: opening the conversation is retried a few times, then given up; evaluating it too. */
  attempt: number;
}): Promise<EndedCall | null> {
  const { callId } = input;
  // The row as answered (null when an earlier run of this step answered it): the conversation's opening reads it no more.
  const answered = input.reached === 'in_progress'
    ? await advanceCallReading(deps.sql, callId, ['initiated', 'ringing'], 'in_progress',
      { answered: input.answeredAt !== undefined ? new Date(input.answeredAt) : true }, { campaign: input.openConversation === true }) : null;
  if (input.reached === 'ringing') await advanceCall(deps.sql, callId, ['initiated'], 'ringing');
  let opened: OpenedConversation | null = null;
  if (input.reached === 'in_progress' && input.openConversation) {
    try {
      opened = await openCallConversation(deps, callId, undefined, answered ?? undefined);
    } catch (err) {
      // Retried a few times (a database blip); after that the call goes on without its conversation.
      if (input.attempt < 5) throw err;
      deps.log.error({ err, call_id: callId }, 'could not open the conversation of an answered campaign call');
    }
  }
  if (!input.end) return null;
  const ended = await endCall(deps, { callId, ...input.end, carrierSession: deps.carrier.name !== 'sandbox' });
  if (ended.conversation) {
    try {
      await evaluateCallConversation(deps, callId, opened ?? undefined);
    } catch (err) {
      // Retried with this step (the call's end above is written once and not undone), then given up: the call has ended.
      if (input.attempt < EVALUATION_ATTEMPTS) throw err;
      deps.log.error({ err, call_id: callId }, 'could not evaluate the conversation of an ended campaign call');
    }
  }
  return ended;
}

/** Attempts of the step that ends a call at evaluating its conversation (about 4 minutes at its backoff), as the evaluation's own step had. */
const EVALUATION_ATTEMPTS = 10;

/** What the scripted callee of a sandbox call says first. */
const CALLEE_GOAL = 'Hello? Who is calling, and what can you do for me?';

/** The conversation of this call was not opened: the call ended, or its agent is gone. */
class NotOpened extends Error {}

/**
 * Opens an answered call's conversation (surface `phone`, linked by `conversation_id`, its greeting
 * and `conversation.started`), once. The call's workflow owns it: no lifecycle workflow, the call
 * bounds it, and the workflow ends and evaluates it. A live call (`carrierCall`: its CallSid) gets
 * a carrier session, so the carrier's next requests play voice turns as an inbound call's do.
 * Null when the call has ended or its agent is gone.
 */
export async function openCallConversation(deps: ConversationDeps, callId: string, carrierCall?: { callSid: string },
  /** The call's row as the caller just wrote it, with its campaign as read in the same statement (neither is read again). */
  known?: { call: CallRecord; campaign: CallCampaign | null }): Promise<OpenedConversation | null> {
  const call = known?.call ?? await findCallById(deps.sql, callId);
  if (!call || call.ended_at) return null;
  const campaign = known ? known.campaign : await findCampaignById(deps.sql, call.campaign_id);
  // The agent, and the callee's contact (the call's own, else the one its number matches) in the same statement.
  const found = campaign ? await findAgentToRunAndCallee(deps.sql, call.orgId, campaign.widget_id, calleeOf(call)) : null;
  if (!campaign || !found) return null;
  const { agent, transfers, redaction, callee } = found;
  if (call.conversation_id) return { conversationId: call.conversation_id, greeting: null, agent, language: null, transfers, redaction };
  const number = carrierCall && campaign.from_number ? await findActiveNumberByE164(deps.sql, campaign.from_number) : null;
  try {
    const outbound = { call: { objective: campaign.objective, opening_line: campaign.opening_line, voicemail_message: campaign.voicemail_message }, callee: factsOf(callee) };
    // Matched by its number, as the conversation would match it: linked without matching again.
    const { conversation, greeting } = await startCallerConversation(deps, call.orgId, agent,
      { surface: 'phone', caller: call.to_number, lifecycle: false, transfers, redaction, outbound, ...(call.contact_id ? {} : { matched: callee }) },
      async (tx, conversationId) => {
        if (!await linkOpenCallConversation(tx, callId, conversationId)) throw new NotOpened();
        if (carrierCall && number) {
          await insertCarrierSession(tx, {
            orgId: call.orgId, agentId: agent.id, phoneNumberId: number.id, conversationId, channel: 'voice', sessionKey: carrierCall.callSid, caller: call.to_number,
          });
        }
      });
    return { conversationId: conversation.id, greeting, agent, language: conversation.language, transfers, redaction };
  } catch (err) {
    if (!(err instanceof NotOpened)) throw err;
    const now = await findCallById(deps.sql, callId);
    return now?.conversation_id && !now.ended_at ? { conversationId: now.conversation_id, greeting: null, agent, language: null, transfers, redaction } : null;
  }
}

/** What is known of the callee for the opening line's `{{variables}}`: the contact's names and facts. */
async function calleeFacts(db: Db, call: CallRecord): Promise<Record<string, unknown>> {
  return factsOf((await findCallee(db, call)).contact);
}

/** The callee's contact: the call's own, else the one its number matches (as the conversation would match it). */
async function findCallee(db: Db, call: CallRecord): Promise<{ contact: Contact | null; byNumber: boolean }> {
  if (call.contact_id) return { contact: await findContact(db, call.orgId, call.contact_id), byNumber: false };
  return { contact: await matchContact(db, call.orgId, { phone: call.to_number }), byNumber: true };
}

/** How the callee's contact is found (findCallee's choice, for a statement that reads it beside the agent). */
const calleeOf = (call: CallRecord): CalleeLookup => (call.contact_id ? { contactId: call.contact_id } : { phone: call.to_number });

function factsOf(contact: Contact | null): Record<string, unknown> {
  if (!contact) return {};
  return { ...contact.facts, ...(contact.first_name ? { first_name: contact.first_name } : {}), ...(contact.last_name ? { last_name: contact.last_name } : {}) };
}

export interface OpenedConversation {
  conversationId: string; greeting: string | null; agent: Agent; language: string | null;
  /** Whether the agent has an enabled transfer rule, as read with it. */
  transfers: boolean;
  /** The agent's redaction settings, as read with it. */
  redaction: KnownRedaction;
}

/**
 * The sandbox callee's side of an answered call's conversation: the built-in scripted caller, for
 * as long as the call lasts. A call with no talk time (SANDBOX_CALL_SECONDS=0) has no turns: the
 * callee hangs up on the greeting. Otherwise it says its opening line, then answers the agent while
 * the call's talk time (from `answered_at`) runs, at most three turns.
 */
export async function playSandboxCallee(deps: CallDeps & { sendTool?: ToolSender }, input: { callId: string; talkSeconds: number }): Promise<void> {
  if (input.talkSeconds <= 0) return;
  const call = await findCallById(deps.sql, input.callId);
  if (!call?.conversation_id || call.ended_at) return;
  const campaign = await findCampaignById(deps.sql, call.campaign_id);
  const agent = campaign ? await findAgent(deps.sql, call.orgId, campaign.widget_id) : null;
  if (!agent) return;
  const hangsUpAt = Date.parse(call.answered_at ?? new Date().toISOString()) + input.talkSeconds * 1000;
  // A machine answers: its detection says so once its greeting ends (the beep).
  if (call.to_number === SANDBOX_MACHINE) return void await answerMachine(deps, call.id, 'machine_end_beep');
  const lines = SANDBOX_CALLEES[call.to_number];
  const caller = lines
    ? { opening: () => lines[0]!, reply: (_agentText: string, turn: number) => lines[turn] ?? null }
    : createScriptedCaller({ goal: CALLEE_GOAL, maxTurns: 3 });
  let line: string | null = caller.opening();
  for (let turn = 1; line !== null && (turn === 1 || Date.now() < hangsUpAt); turn++) {
    const current = await findConversationRecord(deps.sql, call.conversation_id);
    if (!current || current.status === 'ended') return;
    // An agent paused during the call answers nothing more: the callee hears no further turn (issue 43).
    const now = turn === 1 ? agent : await findAgent(deps.sql, call.orgId, agent.id);
    if (!now || now.status === 'paused') return;
    const replies = await sendVisitorMessage(deps, now, current, line, { role: 'caller' });
    // The agent said goodbye (not interested, do-not-call, a callback): the callee hangs up too.
    if (await callClosed(deps.sql, call.conversation_id)) return;
    line = caller.reply(replies.map((m) => m.text).join(' '), turn);
  }
}

/**
 * Answering-machine detection's result for a call (Twilio's `AnsweredBy`; the sandbox's machine number): a
 * person (`human`, `unknown`) changes nothing. A machine gets the campaign's `voicemail_behavior` (else the
 * agent's): `leave_message` plays the voicemail message (a template) after the beep, then hangs up
 * (`voicemail_left`, the message in the transcript); `hang_up` hangs up (`voicemail_hung_up`). Once per call:
 * a retried callback finds the outcome recorded and does nothing.
 */
export async function answerMachine(deps: CallDeps, callId: string, answeredBy: string): Promise<void> {
  if (!/^(machine|fax)/.test(answeredBy)) return;
  const call = await findCallById(deps.sql, callId);
  if (!call || call.ended_at || !call.call_sid) return;
  const campaign = await findCampaignById(deps.sql, call.campaign_id);
  const agent = campaign ? await findAgent(deps.sql, call.orgId, campaign.widget_id) : null;
  if (!campaign || !agent) return;
  const behavior = campaign.voicemail_behavior ?? agent.voicemail_behavior ?? 'leave_message';
  if (behavior === 'hang_up') {
    if (await recordCallOutcome(deps.sql, callId, 'voicemail_hung_up')) await deps.carrier.hangUp(call.call_sid);
    return;
  }
  const language = agent.default_language ?? 'en';
  const outbound = { objective: campaign.objective, opening_line: campaign.opening_line, voicemail_message: campaign.voicemail_message };
  const message = voicemailMessage(await runtimeAgent(deps.sql, agent), outbound, language, await calleeFacts(deps.sql, call));
  const recorded = await deps.sql.begin(async (tx) => {
    const row = await recordCallOutcome(tx, callId, 'voicemail_left');
    if (row?.conversation_id) await insertMessages(tx, row.conversation_id, [{ role: 'agent', text: message }]);
    return row;
  });
  if (!recorded) return;
  await deps.carrier.playOnCall(call.call_sid, sayAndHangup([message], await speechFor(deps.sql, call.orgId, agent, language.split('-')[0]!)));
}

/**
 * Evaluates an ended call's conversation (`conversation.evaluated`), once: nothing for a call that had
 * none, or whose conversation an earlier run of this step evaluated (its workflow task was lost).
 */
async function evaluateCallConversation(deps: ConversationDeps, callId: string,
  /** The conversation as this step opened it (its agent is not read again). */
  opened?: OpenedConversation): Promise<boolean> {
  const found = await findCallConversationToEvaluate(deps.sql, callId);
  return found ? evaluateConversation(deps, found.conversation.id, {
    ...found, ...(opened ? { agent: { agent: opened.agent, transfers: opened.transfers, redaction: opened.redaction } } : {}),
  }) : false;
}

/**
 * The carrier's request for an answered campaign call's TwiML (its `url` names the call): the
 * agent's greeting in `<Gather>`, or `<Connect><Stream>` when the call is streamed (`voice_mode: stream`, the
 * campaign number's or the agent's), its conversation opened and owned by the call's workflow. The
 * carrier session opened with it answers the next requests (`answerVoice`), turn by turn, as an
 * inbound call's. A call that has ended, or whose agent is gone, is hung up politely.
 */
export async function answerCampaignCall(deps: InboundDeps, callId: string, params: CarrierParams, baseUrl: string): Promise<string> {
  const callSid = params.CallSid ?? '';
  const call = callSid ? await findCallById(deps.sql, callId) : null;
  if (!call) return politeHangup('Thank you. Goodbye.');
  await assertCampaignCallRequest(deps.sql, call, params);
  // Played once per call (issue 40, D19): a retried answer webhook gets the same greeting and opens nothing.
  return playOnce(deps, { channel: 'voice', key: `${callSid}#0`, orgId: call.orgId }, async () => {
    const opened = await openCallConversation(deps, callId, { callSid });
    if (!opened) return politeHangup('Thank you. Goodbye.');
    const action = voiceTurnUrl(baseUrl, 1);
    // Opened by an earlier request whose answer was lost: answered as the call's next turn.
    if (opened.greeting === null) {
      const session = await findLiveSession(deps.sql, 'voice', callSid);
      return session ? continueCall(deps, session, params, baseUrl, action) : politeHangup('Thank you. Goodbye.');
    }
    // Streamed (the campaign number's voice_mode, else the agent's): the stream speaks the greeting (src/voice/call-stream.ts).
    const settings = callSettingsOf(opened.agent);
    const from = (await findCampaignById(deps.sql, call.campaign_id))?.from_number;
    if (voiceModeOf(settings, from ? await findActiveNumberByE164(deps.sql, from) : null) === 'stream') {
      const token = await issueStreamToken(deps.sql, deps.secrets, { orgId: call.orgId, conversationId: opened.conversationId, callSid });
      return connectStream(voiceStreamUrl(baseUrl, token));
    }
    const speech = await speechFor(deps.sql, call.orgId, opened.agent, opened.language);
    // phone_settings.record_calls records a placed call too; answer_delay_seconds is for calls the agent answers.
    return sayAndGather([opened.greeting], speech, action, {
      record: settings.record, pauseSeconds: 0, recordingStatusCallback: recordingStatusUrl(baseUrl, opened.conversationId),
    });
  }, emptyVoiceResponse);
}

/**
 * A carrier request about a campaign call (its URL names the call) must be about that call
 * (issue 40, I11): from the campaign's number, and with the call's CallSid once it is known.
 * Otherwise 404, and nothing changes. A call that is gone passes: there is nothing to change.
 */
export async function assertCampaignCallRequest(db: Db, call: CallRecord | string, params: CarrierParams): Promise<void> {
  const row = typeof call === 'string' ? await findCallById(db, call) : call;
  if (!row) return; // gone: nothing it could change
  const ours = (await findCampaignById(db, row.campaign_id))?.from_number;
  if (!ours || (params.From !== ours && params.To !== ours) || (row.call_sid && params.CallSid !== row.call_sid)) throw notFound('campaign call');
}

/** Asks the carrier to hang up a placed call (nothing to do before it was placed). */
export async function hangUpAtCarrier(deps: Pick<CallDeps, 'sql' | 'carrier'>, callId: string): Promise<void> {
  const call = await findCallById(deps.sql, callId);
  if (call?.call_sid) await deps.carrier.hangUp(call.call_sid);
}

/** The next turn of a campaign's queue. */
export interface QueueTurn {
  /** The campaign's status now (`gone` when deleted). */
  status: string;
  /** Calls to start now (at most `limit`), in queue order. */
  ready: string[];
  /**
   * Each ready call's run summary for the Temporal Web UI ("Campaign 'Spring renewals': call 3 of 120 to +1…4567"),
   * with no message text and the number masked.
   */
  summaries: Record<string, string>;
  /** Seconds until a queued call not ready now may be (a calling window opens, a retry's backoff ends); null when none waits. */
  waitSeconds: number | null;
  /** Queued calls, ready or not. */
  queued: number;
  concurrency: number;
  maxDurationSeconds: number;
}

/**
 * What the campaign workflow does next: the queued calls that may start now, honouring each
 * callee's calling window (read on the clock plus CAMPAIGN_CLOCK_OFFSET_SECONDS) and retry backoffs.
 */
export async function nextCalls(deps: Pick<CallDeps, 'sql' | 'config' | 'log'>, input: { campaignId: string; exclude: string[] }): Promise<QueueTurn> {
  // The start's transaction starts the workflow before it commits: the commit gate waits for it (a rolled-back start reads
  // `draft`). Only a campaign read as `draft` (or not at all) can be one whose start has not committed yet: it is read
  // again through the gate. Any other status was written by the start's commit or after it (issue 48: every turn but
  // the first reads the campaign in one statement, where the gate's transaction and lock made it four).
  // Whether its agent is paused, and its queue by zone, are read with it.
  const seen = await findCampaignForTurn(deps.sql, input.campaignId);
  const read = seen && seen.campaign.status !== 'draft' ? seen
    : await readAfterCommit(deps.sql, workflowIds.campaign(input.campaignId), (tx) => findCampaignForTurn(tx, input.campaignId));
  if (!read) return { status: 'gone', ready: [], summaries: {}, waitSeconds: null, queued: 0, concurrency: 0, maxDurationSeconds: 0 };
  const { campaign } = read;
  // A running campaign of a paused agent holds its calls as a paused campaign does; resuming the agent wakes it (issue 43).
  const held = campaign.status === 'paused' || (campaign.status === 'running' && read.agentPaused);
  const expiry = deps.config.CAMPAIGN_QUEUED_EXPIRY_SECONDS;
  let zones = read.zones;
  // Only when a queued call has waited that long (most turns write nothing here).
  if ((campaign.status === 'running' || campaign.status === 'paused') && zones.some((z) => z.due_seconds >= expiry)) {
    await expireCalls(deps, campaign, expiry);
    zones = await queuedByZone(deps.sql, input.campaignId);
  }
  // `exclude` is what the workflow runs now: at most `concurrency` in all.
  const limit = Math.max(0, campaign.concurrency - input.exclude.length);
  const now = new Date(Date.now() + deps.config.CAMPAIGN_CLOCK_OFFSET_SECONDS * 1000);
  const open: string[] = [];
  let waitSeconds: number | null = null;
  for (const zone of zones) {
    const untilOpen = secondsUntilOpen(campaign.calling_window, zone.timezone, now);
    if (untilOpen === 0) open.push(zone.timezone);
    let wait = Math.max(untilOpen, zone.wait_seconds);
    // A zone that cannot be dialed now (window closed, backoff, paused) wakes the queue when its longest-due call expires too;
    // an open one is woken by its calls ending.
    if (wait > 0 || held) wait = Math.min(wait || Infinity, Math.max(1, expiry - zone.due_seconds));
    if (wait > 0) waitSeconds = waitSeconds === null ? wait : Math.min(waitSeconds, wait);
  }
  const ready = campaign.status === 'running' && !held ? await readyCalls(deps.sql, input.campaignId, open, input.exclude, limit) : [];
  const summaries = Object.fromEntries(ready.map((c) => [c.id, callSummary(campaign.name, c)]));
  return {
    status: campaign.status, ready: ready.map((c) => c.id), summaries, waitSeconds, queued: zones.reduce((n, z) => n + z.queued, 0),
    concurrency: campaign.concurrency, maxDurationSeconds: campaign.max_duration_seconds,
  };
}

/** A call run's one-line summary: the campaign's name, the call's place in the queue, the callee's number masked to its last four digits. */
export function callSummary(campaignName: string, call: { position: number; total: number; to_number: string; attempt: number }): string {
  const number = call.to_number.length > 6 ? `${call.to_number.slice(0, 2)}…${call.to_number.slice(-4)}` : '…';
  const name = campaignName.length > 60 ? `${campaignName.slice(0, 59)}…` : campaignName;
  return `Campaign '${name}': call ${call.position} of ${call.total} to ${number}${call.attempt > 1 ? ` (attempt ${call.attempt})` : ''}`;
}

/** What a campaign run returns: how it ended, and how many of its calls ended each way. */
export interface CampaignOutcome { status: 'completed' | 'canceled'; calls: Record<string, number> }

/** The outcome of a canceled campaign's run, once its calls in flight have ended. */
export async function campaignOutcome(deps: Pick<CallDeps, 'sql'>, campaignId: string): Promise<CampaignOutcome> {
  return { status: 'canceled', calls: await callOutcomeCounts(deps.sql, campaignId) };
}

/** Queued calls due for longer than `seconds` end `expired`/`expired`, each with `campaign_call.ended` (no retry follows). */
async function expireCalls(deps: Pick<CallDeps, 'sql' | 'log'>, campaign: CampaignState, seconds: number): Promise<void> {
  const expired = await deps.sql.begin(async (tx) => {
    const rows = await expireQueuedCalls(tx, campaign.id, seconds);
    for (const row of rows) await emitCallEnded(tx, campaign.widget_id, row);
    return rows.length;
  });
  if (expired) deps.log.info({ campaign_id: campaign.id, expired }, 'queued campaign calls expired');
}

/** Every call has ended: a running or paused campaign becomes `completed` (`campaign.completed`); a canceled one stays so. */
export async function finishCampaign(deps: Pick<CallDeps, 'sql'>, campaignId: string): Promise<CampaignOutcome> {
  await deps.sql.begin(async (tx) => {
    const done = await markCampaignCompleted(tx, campaignId);
    if (done) await emitEvent(tx, { orgId: done.orgId, agentId: done.widget_id, type: 'campaign.completed', data: { campaign: toCampaign(done) } });
  });
  return { status: 'completed', calls: await callOutcomeCounts(deps.sql, campaignId) };
}
