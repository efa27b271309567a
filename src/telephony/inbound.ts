import { createHash } from 'node:crypto';
import type { Db } from '../db/index.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import { notFound } from '../errors.ts';
import {
  claimCarrierReceipt, completeCarrierReceipt, findReceiptAnswer, releaseCarrierReceipt, type ReceiptChannel,
} from '../db/carrier-receipts.ts';
import { findAgent } from '../db/agents.ts';
import { queueBusinessNotification } from '../conversations/notify.ts';
import { recordCarrierOperation } from '../db/carrier-operations.ts';
import {
  endSession, findLiveSession, findSessionById, insertCarrierSession, markSessionTransferred, resumeTransferredSession, type CarrierSession,
} from '../db/carrier-sessions.ts';
import { findConversationRecord, insertMessages, listMessages } from '../db/conversations.ts';
import { findActiveNumberByE164, findPhoneNumberById, type PhoneNumberRecord } from '../db/phone-numbers.ts';
import { findSipTrunk, loadSipTrunkPassword } from '../db/sip-trunks.ts';
import { listTransferRules } from '../db/transfer-rules.ts';
import { findVoiceProfile } from '../db/voice-profiles.ts';
import {
  addSystemMessage, endConversation, runtimeAgent, sendVisitorMessage, startCallerConversation, type ConversationDeps,
} from '../conversations/lifecycle.ts';
import type { TranscriptMessage } from '../runtime/types.ts';
import { callClosed } from '../conversations/call-outcomes.ts';
import type { Agent } from '../schemas/agents.ts';
import type { TransferRule } from '../schemas/transfer-rules.ts';
import type { Carrier } from './carrier.ts';
import {
  connectStream, emptyVoiceResponse, hangupResponse, noAnswerTwiml, politeHangup, sayAndGather, sayAndHangup, turnTakingOf, smsReply, speechOf, transferTwiml, warmBriefTwiml, type Speech, type TransferPlan,
} from './twiml.ts';
import { CARRIER_WEBHOOK_PATHS, recordingStatusUrl, voiceStreamUrl, voiceTurnUrl } from './webhook-urls.ts';
import { issueStreamToken } from '../voice/stream-tokens.ts';
import { smsText } from './sms-text.ts';
import { callSettingsOf, callTimeIsUp, timeUpGoodbye, voiceModeOf } from './phone-settings.ts';

/**
 * What a call or a text to one of our numbers does (the carrier's webhooks, already verified):
 * a call becomes a `phone` conversation, a thread of texts an `sms` one, each on the existing
 * runtime and lifecycle workflow. Answers are TwiML.
 */

export interface InboundDeps extends ConversationDeps { carrier: Carrier; secrets: SecretBox }

/** Parameters the carrier posts (Twilio's names). */
export type CarrierParams = Record<string, string>;

const NOT_IN_SERVICE_CALL = 'Thank you for calling. This number is not taking calls at the moment. Goodbye.';
const PAUSED_GOODBYE = 'Thank you for calling. We cannot continue this call right now. Please call again later. Goodbye.';
const NOT_IN_SERVICE_SMS = 'Thank you for your message. This number is not taking messages at the moment.';

/** The agent that answers on `number` through `channel`, or null when the number, the channel or the agent is off. */
async function answeringAgent(db: Db, number: PhoneNumberRecord | null, channel: 'voice' | 'sms'): Promise<Agent | null> {
  if (!number || !number.widget_id || !number.enabled) return null;
  if (channel === 'voice' ? !number.voice_enabled : !number.sms_enabled) return null;
  const agent = await findAgent(db, number.orgId, number.widget_id);
  return agent && agent.status !== 'paused' ? agent : null;
}

/**
 * How the agent sounds: its voice profile's base voice, else its own voice, as a carrier voice of the conversation's
 * language (the region from the agent's default_language or the profile's accent), with the profile's delivery.
 */
export async function speechFor(db: Db, orgId: string, agent: Agent, language: string | null): Promise<Speech> {
  const profile = agent.voice_profile_id ? await findVoiceProfile(db, orgId, agent.voice_profile_id) : null;
  return speechOf(profile?.base_voice ?? agent.voice ?? null, language ?? agent.default_language ?? 'en', turnTakingOf(agent),
    { delivery: profile, agentLanguage: agent.default_language, recognition: callSettingsOf(agent).recognition });
}

/**
 * Plays a carrier webhook once (issue 40, D19): the first request with `key` runs `play` and its
 * answer is kept (sealed) with the key; a retried or replayed one gets that answer again and plays
 * nothing (no message, no agent turn, no event), or `empty` while the first is still being played
 * or once its answer was pruned. A `play` that fails frees the key for the carrier's retry.
 */
export async function playOnce(deps: Pick<InboundDeps, 'sql' | 'secrets'>, receipt: { channel: ReceiptChannel; key: string; orgId: string },
  play: () => Promise<string>, empty: () => string): Promise<string> {
  if (!await claimCarrierReceipt(deps.sql, receipt)) return answerPlayed(deps, receipt.channel, receipt.key, empty);
  let answer: string;
  try {
    answer = await play();
  } catch (err) {
    await releaseCarrierReceipt(deps.sql, receipt.channel, receipt.key).catch(() => {});
    throw err;
  }
  await completeCarrierReceipt(deps.sql, receipt.channel, receipt.key, deps.secrets.seal(answer, receiptContext(receipt.channel, receipt.key)));
  return answer;
}

const receiptContext = (channel: ReceiptChannel, key: string) => `carrier_webhook_receipts:${channel}:${key}`;

/** The answer a played webhook got, or `empty`. */
async function answerPlayed(deps: Pick<InboundDeps, 'sql' | 'secrets'>, channel: ReceiptChannel, key: string, empty: () => string): Promise<string> {
  const { answer } = await findReceiptAnswer(deps.sql, channel, key);
  if (!answer) return empty();
  try {
    return deps.secrets.open(answer, receiptContext(channel, key));
  } catch {
    return empty(); // sealed with a key this service no longer holds
  }
}

/**
 * Which request of a call this is. The service numbers the `<Gather>` action URLs it hands out
 * (`?turn=N`, covered by the carrier's signature like the rest of the URL); the call's first request
 * (the number's voice URL, or a campaign call's) has none and is turn 0. A turn posted without a
 * number (an action URL handed out before turns were numbered, or a hand-made request) is known by
 * what the caller said. `next` is the turn the answer's `<Gather>` posts.
 */
export function voiceRequest(params: CarrierParams, turnParam: string | undefined): { key: string; first: boolean; next: number } {
  const callSid = params.CallSid ?? '';
  const turn = turnParam !== undefined && /^[1-9][0-9]{0,5}$/.test(turnParam) ? Number(turnParam) : null;
  if (turn !== null) return { key: `${callSid}#${turn}`, first: false, next: turn + 1 };
  if (params.SpeechResult === undefined) return { key: `${callSid}#0`, first: true, next: 1 };
  const said = createHash('sha256').update(params.SpeechResult).digest('base64url').slice(0, 22);
  return { key: `${callSid}#said:${said}`, first: false, next: 1 };
}

/**
 * A request about a live call must come for the call's own number (issue 40, I11): ours is `To`
 * on an inbound call and `From` on one we placed. A CallSid with another number is refused (404)
 * and changes nothing, so one organization's number cannot drive another's call.
 */
async function assertCallOfNumber(db: Db, session: CarrierSession, params: CarrierParams): Promise<void> {
  const number = await findPhoneNumberById(db, session.phoneNumberId);
  if (!number || (params.To !== number.phone_number && params.From !== number.phone_number)) throw notFound('call of this number');
}

/** A call's webhook: the greeting on the first request, then one turn per recognized utterance, or the transfer; each played once. */
export async function answerVoice(deps: InboundDeps, params: CarrierParams, baseUrl: string, turnParam?: string): Promise<string> {
  const callSid = params.CallSid ?? '';
  const request = voiceRequest(params, turnParam);
  const action = voiceTurnUrl(baseUrl, request.next);
  const session = callSid ? await findLiveSession(deps.sql, 'voice', callSid) : null;
  if (!session) {
    // A turn of a call that is not live (ended, or never ours): the answer it got, if any; else the line is closed.
    if (callSid && !request.first) return answerPlayed(deps, 'voice', request.key, hangupResponse);
    const number = await findActiveNumberByE164(deps.sql, params.To ?? '');
    const agent = await answeringAgent(deps.sql, number, 'voice');
    if (!agent || !callSid) return politeHangup(NOT_IN_SERVICE_CALL);
    return playOnce(deps, { channel: 'voice', key: request.key, orgId: number!.orgId }, async () => {
      const { conversation, greeting } = await startCallerConversation(deps, number!.orgId, agent, { surface: 'phone', caller: params.From ?? '' },
        async (tx, conversationId) => {
          await insertCarrierSession(tx, {
            orgId: number!.orgId, agentId: agent.id, phoneNumberId: number!.id, conversationId, channel: 'voice', sessionKey: callSid, caller: params.From ?? '',
          });
        });
      const settings = callSettingsOf(agent);
      if (voiceModeOf(settings, number) === 'stream') {
        const token = await issueStreamToken(deps.sql, deps.secrets, { orgId: number!.orgId, conversationId: conversation.id, callSid });
        return connectStream(voiceStreamUrl(baseUrl, token), { pauseSeconds: settings.answerDelaySeconds });
      }
      return sayAndGather([greeting], await speechFor(deps.sql, number!.orgId, agent, conversation.language), action,
        { record: settings.record, pauseSeconds: settings.answerDelaySeconds, recordingStatusCallback: recordingStatusUrl(baseUrl, conversation.id) });
    }, emptyVoiceResponse);
  }
  await assertCallOfNumber(deps.sql, session, params);
  return playOnce(deps, { channel: 'voice', key: request.key, orgId: session.orgId }, () => continueCall(deps, session, params, baseUrl, action), emptyVoiceResponse);
}

/** The next turn of a live call: what the caller said (`SpeechResult`), the agent's answer or a transfer. */
export async function continueCall(deps: InboundDeps, session: CarrierSession, params: CarrierParams, baseUrl: string, action: string): Promise<string> {
  const conversation = session.conversationId ? await findConversationRecord(deps.sql, session.conversationId) : null;
  const agent = await findAgent(deps.sql, session.orgId, session.agentId);
  if (!conversation || !agent || conversation.status === 'ended' || session.status !== 'active') return emptyVoiceResponse();
  // Paused during the call: the agent answers nothing more, and the caller hears a goodbye, not a refusal (issue 43).
  if (agent.status === 'paused') return politeHangup(PAUSED_GOODBYE);
  const settings = callSettingsOf(agent);
  if (callTimeIsUp(settings, conversation.startedAt)) return endAtTimeLimit(deps, agent, conversation, params.SpeechResult ?? '', settings.maxMinutes!);
  const turn = await voiceTurn(deps, {
    orgId: session.orgId, agent, conversationId: conversation.id, language: conversation.language, said: params.SpeechResult ?? '', action, ourNumber: params.To ?? '',
    answer: async (said) => (await sendVisitorMessage(deps, agent, conversation, said, { role: 'caller' })).map((m) => m.text),
    closes: () => callClosed(deps.sql, conversation.id),
    handOver: (rule, said, announcement) => transferCall(deps, { session, rule, said, announcement, ourNumber: params.To ?? '', baseUrl, action }),
  });
  return turn.twiml;
}

/** phone_settings.max_call_minutes reached: the caller's words and the goodbye join the transcript, with a note; the line is hung up. */
async function endAtTimeLimit(deps: InboundDeps, agent: Agent, conversation: { id: string; orgId: string; language: string | null },
  said: string, minutes: number): Promise<string> {
  const goodbye = timeUpGoodbye(conversation.language);
  await deps.sql.begin(async (tx) => {
    await insertMessages(tx, conversation.id, [...(said.trim() ? [{ role: 'caller' as const, text: said }] : []), { role: 'agent', text: goodbye }]);
    await addSystemMessage(tx, conversation.id, `Call ended at its ${minutes}-minute limit (phone_settings.max_call_minutes)`);
  });
  return sayAndHangup([goodbye], await speechFor(deps.sql, conversation.orgId, agent, conversation.language));
}

/** One recognized utterance of a call, as `voiceTurn` plays it. */
export interface VoiceTurnInput {
  orgId: string; agent: Agent; conversationId: string; language: string | null;
  /** What the caller said (the carrier's `SpeechResult`). */
  said: string;
  /** Where the carrier posts the caller's next words. */
  action: string;
  /** Our number, the caller id of a cold transfer. */
  ourNumber: string;
  /** The agent's words for `said`, stored: the conversation's runtime turn on a call, the run's own turn in a simulated call. */
  answer: (said: string) => Promise<string[]>;
  /**
   * A real call's hand-over by `rule` (the transcript, the carrier session, the warm destination's call),
   * answering its plan. Absent in a simulated call: nothing is stored and no carrier call is placed.
   */
  handOver?: (rule: TransferRule, said: string, announcement: string) => Promise<TransferPlan>;
  /** Whether the turn just played closed the call (a campaign callee not interested, or asking not to be called): then the line is hung up. */
  closes?: () => Promise<boolean>;
}

/**
 * One turn of a call, after its greeting: the TwiML the carrier gets for the caller's utterance
 * (the agent's words in `<Say>` inside `<Gather>`, or a transfer's announcement and `<Dial>`), and
 * the transfer rule that matched, if any. The inbound webhook and simulated phone runs both play it.
 */
export async function voiceTurn(deps: ConversationDeps, input: VoiceTurnInput): Promise<{ twiml: string; transfer: TransferRule | null }> {
  const { agent } = input;
  const said = input.said.trim();
  // What the turn reads, read at once rather than one after another (a streamed call's turn waits for each, issue 44).
  const [speech, told, history, rules] = await Promise.all([
    speechFor(deps.sql, input.orgId, agent, input.language),
    said ? runtimeAgent(deps.sql, agent) : null,
    said ? listMessages(deps.sql, input.conversationId) : null,
    said ? listTransferRules(deps.sql, input.orgId, agent.id) : null,
  ]);
  if (!said || !told || !history || !rules) return { twiml: sayAndGather([input.language === 'fr' ? 'Je vous écoute.' : 'I am listening.'], speech, input.action), transfer: null };

  // The runtime weighs the rules (the model under the LLM runtime) against what was just said, in context.
  const heard: TranscriptMessage = { id: 'heard', role: 'caller', text: said, ts: new Date().toISOString() };
  const rule = await deps.runtime.chooseTransferRule({ agent: told, messages: [...history, heard], rules });
  if (rule) {
    const announcement = transferAnnouncement(rule, speech);
    const plan = input.handOver ? await input.handOver(rule, said, announcement) : simulatedPlan(rule, input.ourNumber);
    return { twiml: transferTwiml(plan, announcement, speech), transfer: rule };
  }
  const lines = await input.answer(said);
  if (input.closes && await input.closes()) return { twiml: sayAndHangup(lines, speech), transfer: null };
  return { twiml: sayAndGather(lines, speech, input.action), transfer: null };
}

/** What the agent says when `rule` hands the caller over. */
function transferAnnouncement(rule: TransferRule, speech: Speech): string {
  const who = rule.destination_label ?? rule.name;
  return speech.listen.startsWith('fr') ? `Je vous mets en relation avec ${who}. Merci de patienter.` : `Let me connect you with ${who}. Please hold.`;
}

/** The transcript's note of a transfer by `rule`. */
export const transferNote = (rule: TransferRule) => `Transferred by rule "${rule.name}" (${rule.transfer_type}) to ${destinationOf(rule)}`;

/** A simulated call's hand-over: the same TwiML shape, with no session, conference or trunk credential behind it. */
function simulatedPlan(rule: TransferRule, ourNumber: string): TransferPlan {
  if (rule.transfer_type === 'warm') return { type: 'warm', rule, conference: 'transfer-simulated' };
  if (rule.transfer_type === 'sip_refer') return { type: 'sip_refer', rule, sipUri: rule.destination_sip_uri ?? `sip:${rule.destination_phone ?? ''}`, username: '', password: '' };
  return { type: 'cold', rule, callerId: ourNumber };
}

async function transferPlan(deps: InboundDeps, session: CarrierSession, rule: TransferRule, ourNumber: string, noAnswerUrl: string): Promise<TransferPlan> {
  if (rule.transfer_type === 'warm') return { type: 'warm', rule, conference: `transfer-${session.id}` };
  if (rule.transfer_type === 'sip_refer') {
    const trunk = rule.sip_trunk_id ? await findSipTrunk(deps.sql, session.orgId, rule.sip_trunk_id) : null;
    // The trunk's credential is unsealed here, for this one TwiML answer, and never stored or logged.
    const password = trunk ? await loadSipTrunkPassword(deps.sql, deps.secrets, session.orgId, trunk.id) : null;
    const sipUri = rule.destination_sip_uri ?? `sip:${rule.destination_phone ?? ''}@${trunk?.sip_host ?? ''}`;
    return { type: 'sip_refer', rule, sipUri, username: trunk?.sip_username ?? '', password: password ?? '', noAnswerUrl };
  }
  return { type: 'cold', rule, callerId: ourNumber, noAnswerUrl };
}

const destinationOf = (rule: TransferRule) => rule.destination_sip_uri ?? rule.destination_phone ?? '';

/** Hands the caller over by `rule`: recorded in the transcript (a `system` message naming the rule), the plan of its TwiML. */
export async function transferCall(deps: InboundDeps, input: {
  session: CarrierSession; rule: TransferRule; said: string; announcement: string; ourNumber: string; baseUrl: string;
  /** Where the caller's next words go, should the destination not answer and the agent take the call back. */
  action: string;
}): Promise<TransferPlan> {
  const { session, rule } = input;
  // The turn the agent resumes at, when the caller comes back to it: signed with the URL as every turn is.
  const turn = new URL(input.action).searchParams.get('turn') ?? '1';
  const noAnswerUrl = `${input.baseUrl}${CARRIER_WEBHOOK_PATHS.voiceTransfer}?session=${session.id}&turn=${turn}`;
  const plan = await transferPlan(deps, session, rule, input.ourNumber, noAnswerUrl);
  await deps.sql.begin(async (tx) => {
    await insertMessages(tx, session.conversationId!, [{ role: 'caller', text: input.said }, { role: 'agent', text: input.announcement }]);
    await addSystemMessage(tx, session.conversationId!, transferNote(rule));
    await markSessionTransferred(tx, session.id, rule.id);
    if (deps.carrier.name === 'sandbox') {
      await recordCarrierOperation(tx, {
        carrier: 'sandbox', operation: 'transfer', phoneNumber: input.ourNumber, target: destinationOf(rule),
        details: { sid: session.sessionKey, rule_id: rule.id, rule_name: rule.name, transfer_type: rule.transfer_type, ring_timeout_seconds: rule.ring_timeout_seconds },
      });
    }
  });
  if (plan.type === 'warm') {
    // The destination is called first: it hears the brief, then joins the conference the caller waits in.
    await deps.carrier.placeCall({
      from: input.ourNumber, to: rule.destination_phone ?? '',
      url: `${input.baseUrl}${CARRIER_WEBHOOK_PATHS.voice}/warm?session=${session.id}`,
      // The destination leg rings ring_timeout_seconds; its status tells whether the caller gets the rule's on_no_answer.
      statusUrl: `${input.baseUrl}${CARRIER_WEBHOOK_PATHS.voiceStatus}?transfer=${session.id}&turn=${turn}`, timeout: rule.ring_timeout_seconds,
    }).catch(async (err: unknown) => {
      deps.log.error({ err, session_id: session.id }, 'could not call the warm transfer destination');
      // The business hears of it (notification_email, notification_phone).
      const agent = await findAgent(deps.sql, session.orgId, session.agentId);
      if (agent && session.conversationId) {
        await queueBusinessNotification(deps, agent, { id: session.conversationId, orgId: session.orgId, agentId: session.agentId, isSimulated: false }, 'transfer_failed');
      }
    });
  }
  return plan;
}

/** The warm transfer destination's call: the brief, then the conference. */
export async function answerWarmDestination(deps: InboundDeps, sessionId: string): Promise<string> {
  const session = /^[0-9a-f-]{36}$/i.test(sessionId) ? await findSessionById(deps.sql, sessionId) : null;
  if (!session || session.status !== 'transferred' || !session.transferRuleId) return politeHangup('This transfer is no longer waiting. Goodbye.');
  const rule = (await listTransferRules(deps.sql, session.orgId, session.agentId)).find((r) => r.id === session.transferRuleId);
  const agent = await findAgent(deps.sql, session.orgId, session.agentId);
  const speech = agent ? await speechFor(deps.sql, session.orgId, agent, null) : speechOf(null, 'en');
  return warmBriefTwiml(rule?.warm_brief ?? 'You have an incoming transfer.', `transfer-${session.id}`, speech);
}

/** How a destination leg ends when nobody took the call: the rule's `on_no_answer` plays. */
const NOT_ANSWERED = new Set(['no-answer', 'busy', 'failed', 'canceled']);

const NO_ANSWER_WORDS = {
  en: {
    back: (who: string) => `Sorry, ${who} is not available right now. I'm back with you: how else can I help?`,
    voicemail: (who: string) => `Sorry, ${who} is not available right now. Please leave a message after the tone.`,
    goodbye: 'Thank you. Goodbye.',
    recorded: 'Thank you, your message has been recorded. Goodbye.',
  },
  fr: {
    back: (who: string) => `Désolé, ${who} n'est pas disponible pour le moment. Je reste avec vous : que puis-je faire d'autre pour vous ?`,
    voicemail: (who: string) => `Désolé, ${who} n'est pas disponible pour le moment. Merci de laisser un message après le bip.`,
    goodbye: 'Merci. Au revoir.',
    recorded: 'Merci, votre message a bien été enregistré. Au revoir.',
  },
};

/** The transferred call of `sessionId`, its rule, agent and conversation language; null when it is no longer waiting on a transfer. */
async function waitingTransfer(deps: InboundDeps, sessionId: string) {
  const session = /^[0-9a-f-]{36}$/i.test(sessionId) ? await findSessionById(deps.sql, sessionId) : null;
  if (!session || session.status === 'ended' || !session.transferRuleId || !session.conversationId) return null;
  const rule = (await listTransferRules(deps.sql, session.orgId, session.agentId)).find((r) => r.id === session.transferRuleId);
  const agent = await findAgent(deps.sql, session.orgId, session.agentId);
  const conversation = await findConversationRecord(deps.sql, session.conversationId);
  if (!rule || !agent || !conversation) return null;
  const words = conversation.language === 'fr' ? NO_ANSWER_WORDS.fr : NO_ANSWER_WORDS.en;
  return { session, rule, agent, words, speech: await speechFor(deps.sql, session.orgId, agent, conversation.language) };
}

/**
 * A transfer's destination did not answer (issue 43): `how` is the carrier's status of the destination leg (the cold or
 * SIP `<Dial action>`'s `DialCallStatus`, the warm destination call's `CallStatus`). Not answered, the rule's
 * `on_no_answer` plays, once per transfer: `return_to_agent` takes the call back (the agent says so and listens at
 * `turn`), `voicemail` records a message. Both are in the transcript. Null when the leg was answered or the transfer
 * is no longer waiting; `played` says whether this request played it (a retry gets the same TwiML, played=false).
 */
export async function transferNotAnswered(deps: InboundDeps, input: { sessionId: string; how: string; turn: string; baseUrl: string; params: CarrierParams }):
  Promise<{ twiml: string; played: boolean; callSid: string } | null> {
  if (!NOT_ANSWERED.has(input.how)) return null;
  const waiting = await waitingTransfer(deps, input.sessionId);
  if (!waiting || waiting.session.status !== 'transferred') return null;
  const { session, rule, words, speech } = waiting;
  await assertCallOfNumber(deps.sql, session, input.params);
  const turn = /^[1-9][0-9]{0,5}$/.test(input.turn) ? Number(input.turn) : 1;
  const who = rule.destination_label ?? rule.name;
  let played = false;
  const twiml = await playOnce(deps, { channel: 'voice', key: `${session.sessionKey}#no-answer-${turn}`, orgId: session.orgId }, async () => {
    played = true;
    const message = rule.on_no_answer === 'voicemail' ? words.voicemail(who) : words.back(who);
    await deps.sql.begin(async (tx) => {
      if (rule.on_no_answer === 'return_to_agent') await resumeTransferredSession(tx, session.id);
      await addSystemMessage(tx, session.conversationId!, `No answer from ${destinationOf(rule)} (${input.how}): ${rule.on_no_answer === 'voicemail' ? 'voicemail' : 'back to the agent'}`);
      await insertMessages(tx, session.conversationId!, [{ role: 'agent', text: message }]);
    });
    return noAnswerTwiml({
      onNoAnswer: rule.on_no_answer, message, goodbye: words.goodbye, action: voiceTurnUrl(input.baseUrl, turn),
      recordAction: `${input.baseUrl}${CARRIER_WEBHOOK_PATHS.voiceTransfer}?session=${session.id}&turn=${turn}&voicemail=1`,
    }, speech);
  }, emptyVoiceResponse);
  return { twiml, played, callSid: session.sessionKey };
}

/** The caller's voicemail after a transfer nobody answered: noted in the transcript (its recording and length), then goodbye. Once. */
export async function recordTransferVoicemail(deps: InboundDeps, sessionId: string, params: CarrierParams): Promise<string> {
  const waiting = await waitingTransfer(deps, sessionId);
  if (!waiting || params.CallSid !== waiting.session.sessionKey) return hangupResponse();
  const { session, rule, words, speech } = waiting;
  await assertCallOfNumber(deps.sql, session, params);
  return playOnce(deps, { channel: 'voice', key: `${session.sessionKey}#voicemail`, orgId: session.orgId }, async () => {
    const seconds = Number(params.RecordingDuration ?? 0) || 0;
    await addSystemMessage(deps.sql, session.conversationId!,
      `Voicemail left for ${rule.destination_label ?? rule.name} by rule "${rule.name}" (${seconds} s)${params.RecordingUrl ? `: ${params.RecordingUrl}` : ''}`);
    return sayAndHangup([words.recorded], speech);
  }, emptyVoiceResponse);
}

const FINAL_CALL_STATUSES = new Set(['completed', 'busy', 'failed', 'no-answer', 'canceled']);

/** A call's status callback: a finished call ends its conversation (then evaluated by its workflow). Another number's: 404. */
export async function recordCallStatus(deps: InboundDeps, params: CarrierParams): Promise<void> {
  const session = await findLiveSession(deps.sql, 'voice', params.CallSid ?? '');
  if (!session) return;
  await assertCallOfNumber(deps.sql, session, params);
  if (!FINAL_CALL_STATUSES.has(params.CallStatus ?? '')) return;
  await endSession(deps.sql, session.id);
  if (session.conversationId) await endConversation(deps, session.conversationId, 'visitor');
}

/**
 * A text: the thread's conversation (started on the first text, or after the last one ended), the
 * agent's reply in `<Message>`. Played once per `MessageSid`: a retried or replayed text gets the
 * first reply again and adds nothing.
 */
export async function answerSms(deps: InboundDeps, params: CarrierParams): Promise<string> {
  const from = params.From ?? '';
  const to = params.To ?? '';
  const body = (params.Body ?? '').trim();
  const key = `${from}|${to}`;
  const number = await findActiveNumberByE164(deps.sql, to);
  let session = await findLiveSession(deps.sql, 'sms', key);
  let conversation = session?.conversationId ? await findConversationRecord(deps.sql, session.conversationId) : null;
  // A thread lives on while its conversation does, and while the number it texted is still that number (I11:
  // a number released and taken by another organization starts that organization's own thread).
  const stale = session && (!conversation || conversation.status === 'ended' || session.phoneNumberId !== number?.id);
  const agent = !session || stale ? await answeringAgent(deps.sql, number, 'sms') : await findAgent(deps.sql, session.orgId, session.agentId);
  if (!agent || agent.status === 'paused' || !from) return smsReply([NOT_IN_SERVICE_SMS]);
  const orgId = number!.orgId;
  const play = async () => {
    const replies: string[] = [];
    if (session && stale) {
      await endSession(deps.sql, session.id);
      session = null;
    }
    if (!session) {
      const started = await startCallerConversation(deps, orgId, agent, { surface: 'sms', caller: from }, async (tx, conversationId) => {
        await insertCarrierSession(tx, { orgId, agentId: agent.id, phoneNumberId: number!.id, conversationId, channel: 'sms', sessionKey: key, caller: from });
      });
      conversation = started.conversation;
      replies.push(started.greeting);
    }
    if (body) replies.push(...(await sendVisitorMessage(deps, agent, conversation!, body, { role: 'caller' })).map((m) => m.text));
    // Texted as a person would (issue 43): the greeting once, a few segments at most. The transcript keeps the agent's words.
    return smsReply(replies.length ? [smsText(replies)] : []);
  };
  // Twilio names every message; a request without a MessageSid (hand-made, signed with the key) is played as it comes.
  const messageSid = params.MessageSid ?? params.SmsSid ?? '';
  return messageSid ? playOnce(deps, { channel: 'sms', key: messageSid, orgId }, play, () => smsReply([])) : play();
}
