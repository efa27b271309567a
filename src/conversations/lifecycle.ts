import { agentRedactionPolicy, loadAgentRedaction } from '../db/governance.ts';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { deleteConversationRecording } from '../voice/recordings.ts';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { SecretBox } from '../crypto/secret-box.ts';
import type { Db, Sql } from '../db/index.ts';
import { AppError } from '../errors.ts';
import { findAgentToRun, type AgentToRun } from '../db/agents.ts';
import { contactFacts, mergeContactFacts, namesSomeone, recordContactConversation } from '../db/contacts.ts';
import { hasEnabledTransferRules } from '../db/transfer-rules.ts';
import { findVoiceStyle } from '../db/voice-profiles.ts';
import { checkWrittenEvent, emitEvent, newEventId, sqlWrittenEvent } from '../events/emit.ts';
import { knowledgeWords, retrievePassages, searchKnowledge } from '../answers/retrieval.ts';
import { warmAnswerEngine } from '../answers/warm.ts';
import { matchTrainingNotes } from '../knowledge/notes.ts';
import { answerFromRows } from '../knowledge/rows.ts';
import type { Agent } from '../schemas/agents.ts';
import type { Contact } from '../schemas/contacts.ts';
import { knownAgentOf, knownRedaction, policyAt, type KnownRedaction } from '../db/redaction-cache.ts';
import type { AgentRuntime, ReplyStream, RuntimeAgent, RuntimeTools, ToolCall, TranscriptMessage, TurnResult } from '../runtime/types.ts';
import { workflowIds } from '../temporal/ids.ts';
import type { EventType } from '../schemas/events.ts';
import { SHAPE_CHECKS } from '../validation.ts';
import { activitySignal, conversationLifecycleKind, endedSignal, handBackSignal, takeOverSignal } from '../../workflows/conversation.ts';
import { queueBusinessNotification } from './notify.ts';
import { startWorkflow, stopWorkflow } from '../temporal/start.ts';
import { HANDOFF_OFFER, HANDOFF_REQUEST } from '../runtime/signals.ts';
import { pokeAssignment, pokeWaitingConversations, requestPerson } from '../assignments/index.ts';
import { conversationAssignee } from '../db/assignments.ts';
import { flagNeedsHuman, inboxStaffed, touchVisitor, TEXT_SURFACES } from '../db/live-inbox.ts';
import { listTransferRules } from '../db/transfer-rules.ts';
import { handoffReply, pageLanguage } from '../answers/phrases.ts';
import { openingLine, outboundIntent, outboundReply, replyLanguage } from '../runtime/outbound.ts';
import { replyLanguageOf, runtimeFor } from './agent-runtime.ts';
import { spokenText } from '../runtime/voice.ts';
import { campaignCallOf, closeCall, outboundOf } from './call-outcomes.ts';
import type { OutboundCall } from '../runtime/types.ts';
import { simulationCriteriaOf } from '../db/simulations.ts';
import { callAgentTool, callDataCapturedTools, dataSchemaComplete, enabledTools } from '../tools/calls.ts';
import {
  deleteConversation, findConversationRow, findConversationRecord, insertConversation, insertMessages, listMessages, markEnded, openCaptured, recordEvaluation,
  insertConversationEvent, recordEvaluationWithEvent, recordTurn,
  type ConversationRecord,
} from '../db/conversations.ts';
import type { FamilyDeps } from '../deps.ts';
import { chunkStore } from '../knowledge/chunk-store.ts';

/**
 * A conversation from its start to its evaluation: the public endpoints start it and add turns;
 * its workflow (`conversation:<id>`) ends it after inactivity, or when the visitor ends it, then
 * evaluates it. Each step writes its event in the same transaction as its change.
 */

/** `secrets` seals what a tool call carries through Temporal (its arguments and answer). */
export type ConversationDeps = FamilyDeps & { runtime: AgentRuntime; secrets: SecretBox };

const hashToken = (token: string) => createHash('sha256').update(token).digest();

/** True when `token` is this conversation's visitor token (constant-time). */
export function visitorTokenMatches(conversation: ConversationRecord, token: string): boolean {
  if (!conversation.tokenHash || !token) return false;
  const given = hashToken(token);
  return given.length === conversation.tokenHash.length && timingSafeEqual(given, conversation.tokenHash);
}

/**
 * What the runtime is told of the agent. A person can take over when the agent has an enabled
 * transfer rule or live chat alerts, or, for a conversation the live inbox of `liveInboxOrgId`
 * shows (a real one on a text surface), when a member looked at that inbox recently: then the agent
 * promises a person.
 */
export async function runtimeAgent(db: Db, agent: Agent, opts: {
  liveInboxOrgId?: string | null;
  /** Whether it has an enabled transfer rule, when the caller read it with the agent (findAgentToRun). */
  transfers?: boolean;
  /** Its redaction settings, when the caller read them with the agent (findAgentToRun): not read again. */
  redaction?: KnownRedaction;
} = {}): Promise<RuntimeAgent> {
  const transfers = opts.transfers ?? await hasEnabledTransferRules(db, agent.id);
  const staffed = !transfers && !agent.live_chat_alerts && !!opts.liveInboxOrgId && await inboxStaffed(db, opts.liveInboxOrgId);
  return {
    id: agent.id, name: agent.name, persona: agent.persona, greeting: agent.greeting, guardrails: agent.guardrails,
    goals: agent.goals, acceptance_criteria: agent.acceptance_criteria,
    data_schema: agent.data_schema as RuntimeAgent['data_schema'], default_language: agent.default_language,
    config_variables: agent.config_variables, can_transfer: transfers || agent.live_chat_alerts || staffed,
    prompt_modules: agent.prompt_modules, tracking_rules: agent.tracking_rules,
    style: agent.voice_profile_id ? await findVoiceStyle(db, agent.id, agent.voice_profile_id) : null,
    redaction: opts.redaction ? policyAt(opts.redaction.settings, 'llm') : await agentRedactionPolicy(db, agent.id, 'llm'),
  };
}

/** A conversation the live inbox shows, where a member can step in: real, on a text surface. */
const inLiveInbox = (conversation: ConversationRecord) =>
  !conversation.isSimulated && (TEXT_SURFACES as readonly string[]).includes(conversation.surface);

/** The conversation as its events carry it: as the conversations list shows it. */
export async function conversationEventData(db: Db, id: string): Promise<Record<string, unknown>> {
  return { conversation: (await findConversationRow(db, id)) ?? { id } };
}

/**
 * Emits an event of a conversation carrying it as it reads now (conversationEventData), in one statement when its agent's
 * redaction leaves the payload as it is (the row is not read first). Answers the event's id.
 */
export async function emitConversationEvent(tx: Db, input: { orgId: string; agentId: string; type: EventType; conversationId: string }): Promise<string> {
  const known = knownRedaction(input.agentId) ?? await loadAgentRedaction(tx, input.agentId);
  if (!policyAt(known.settings, 'webhooks')) {
    const id = newEventId();
    const data = await insertConversationEvent(tx, input.conversationId, { ...input, id, redactionVersion: known.version });
    if (data) {
      if (SHAPE_CHECKS) checkWrittenEvent(input.type, data, await conversationEventData(tx, input.conversationId));
      return id;
    }
  }
  return emitEvent(tx, { orgId: input.orgId, agentId: input.agentId, type: input.type, data: await conversationEventData(tx, input.conversationId) });
}

/** The phone and email a conversation's data names (fields typed `phone` and `email` in the agent's data_schema). */
function identityOf(agent: Agent, data: Record<string, unknown>): { phone: string | null; email: string | null } {
  const valueOf = (type: string) => {
    const field = (agent.data_schema ?? []).find((f) => f.type === type && typeof data[f.name] === 'string');
    return field ? (data[field.name] as string) : null;
  };
  return { phone: valueOf('phone'), email: valueOf('email') };
}

/** What earlier conversations taught about this visitor, when the agent may use it (cross_channel_memory). */
async function memoryOf(db: Db, orgId: string, agent: Agent, visitorId: string | null): Promise<Record<string, unknown>> {
  return agent.cross_channel_memory && visitorId ? contactFacts(db, orgId, { visitorId }) : {};
}

const languageOf = (requested: string | undefined, agent: Agent) =>
  (requested ?? agent.default_language ?? 'en').toLowerCase().split('-')[0]!;

export async function startLifecycle(deps: ConversationDeps, conversation: ConversationRecord, agent: Agent): Promise<void> {
  await startWorkflow(deps, conversationLifecycleKind, conversationLifecycleKind.id(conversation.id),
    [{ conversationId: conversation.id, inactivitySeconds: deps.config.CONVERSATION_INACTIVITY_SECONDS, humanInactivitySeconds: deps.config.HUMAN_INACTIVITY_SECONDS }],
    { orgId: conversation.orgId, agentId: conversation.agentId, summary: `Conversation ${conversation.id} (${conversation.surface}) with agent ${agent.name}` });
}

/** The conversation workflow's signals, by what happened (the names callers pass around). */
const LIFECYCLE_SIGNALS = { activity: activitySignal, ended: endedSignal, takeOver: takeOverSignal, handBack: handBackSignal };

/** Tells the conversation's workflow something happened; its own timer covers a lost signal. */
export async function signalLifecycle(deps: Pick<ConversationDeps, 'temporal' | 'log'>, id: string, signal: keyof typeof LIFECYCLE_SIGNALS): Promise<void> {
  try {
    await deps.temporal.workflow.getHandle(workflowIds.conversation(id)).signal(LIFECYCLE_SIGNALS[signal]);
  } catch (err) {
    // A campaign call's conversation has no lifecycle workflow: its call's workflow bounds it.
    if (err instanceof WorkflowNotFoundError) return;
    deps.log.warn({ err, conversation_id: id, signal }, 'could not signal the conversation workflow');
  }
}

/** Starts a web conversation: the greeting, the `conversation.started` event and the lifecycle workflow. */
export async function startConversation(deps: ConversationDeps, orgId: string, agent: Agent, input: {
  page_url: string; language?: string | undefined; visitor_id?: string | undefined; surface?: string;
  /** Started by a web simulation's browser (its verified marker): simulated from its first event. */
  simulated?: boolean;
}): Promise<{ conversation_id: string; visitor_id: string; visitor_token: string; messages: TranscriptMessage[] }> {
  if (agent.status === 'paused') throw new AppError(409, 'agent_paused', 'this agent is paused and does not take conversations');
  const visitorId = input.visitor_id ?? `v_${randomBytes(12).toString('base64url')}`;
  const token = `vt_${randomBytes(24).toString('base64url')}`;
  const language = languageOf(input.language, agent);
  const memory = await memoryOf(deps.sql, orgId, agent, visitorId);
  const greeting = await deps.runtime.greet(await runtimeAgent(deps.sql, agent), { language, contactFacts: memory });
  const result = await deps.sql.begin(async (tx) => {
    const conversation = await insertConversation(tx, {
      orgId, agentId: agent.id, surface: input.surface ?? 'web', pageUrl: input.page_url,
      visitorId, contactId: null, language, tokenHash: hashToken(token), isSimulated: input.simulated === true,
    });
    const messages = await insertMessages(tx, conversation.id, [{ role: 'agent', text: greeting }]);
    // A returning visitor's contact: linked (and counted) at once.
    await recordContactConversation(tx, orgId, { conversationId: conversation.id, visitorId, at: conversation.startedAt });
    const eventId = await emitConversationEvent(tx, { orgId, agentId: agent.id, type: 'conversation.started', conversationId: conversation.id });
    await startLifecycle(deps, conversation, agent);
    return { conversation, messages, eventId };
  });
  return { conversation_id: result.conversation.id, visitor_id: visitorId, visitor_token: token, messages: result.messages };
}

/**
 * Starts a conversation with a caller or texter (surface `phone` or `sms`) on one of the agent's
 * numbers: matched to a contact on the caller's number, with its greeting, `conversation.started`
 * and the lifecycle workflow. `withinStart` records the carrier's side in the same transaction.
 */
export async function startCallerConversation(deps: ConversationDeps, orgId: string, agent: Agent, input: {
  surface: 'phone' | 'sms'; caller: string;
  /** False when another workflow bounds the conversation and runs its end and evaluation (a campaign call's). */
  lifecycle?: boolean;
  /** Whether the agent has an enabled transfer rule, when the caller read it with the agent (findAgentToRun). */
  transfers?: boolean;
  /** The agent's redaction settings, when the caller read them with the agent (findAgentToRun). */
  redaction?: KnownRedaction;
  /** A call the agent placed (a campaign's): it opens with the campaign's opening line, rendered with what is known of the callee. */
  outbound?: { call: OutboundCall; callee: Record<string, unknown> };
  /** The contact matchContact just answered for the caller's number (see recordContactConversation): linked without matching again. */
  matched?: Contact | null;
}, withinStart: (tx: Db, conversationId: string) => Promise<void>): Promise<{ conversation: ConversationRecord; greeting: string }> {
  const language = languageOf(undefined, agent);
  const memory = agent.cross_channel_memory ? await contactFacts(deps.sql, orgId, { phone: input.caller }) : {};
  const told = await runtimeAgent(deps.sql, agent, { transfers: input.transfers, ...(input.redaction ? { redaction: input.redaction } : {}) });
  const greeting = input.outbound
    ? openingLine(told, input.outbound.call, language, { ...memory, ...input.outbound.callee })
    : await deps.runtime.greet(told, { language, contactFacts: memory });
  const result = await deps.sql.begin(async (tx) => {
    const conversation = await insertConversation(tx, {
      orgId, agentId: agent.id, surface: input.surface, pageUrl: null, visitorId: null, contactId: null, language, tokenHash: null,
    });
    await insertMessages(tx, conversation.id, [{ role: 'agent', text: greeting }]);
    await recordContactConversation(tx, orgId, {
      conversationId: conversation.id, phone: input.caller, at: conversation.startedAt, ...(input.matched !== undefined ? { matched: input.matched } : {}),
    });
    await withinStart(tx, conversation.id);
    await emitConversationEvent(tx, { orgId, agentId: agent.id, type: 'conversation.started', conversationId: conversation.id });
    if (input.lifecycle !== false) await startLifecycle(deps, conversation, agent);
    return conversation;
  });
  return { conversation: result, greeting };
}

/** Records a note in the transcript (role `system`), such as the transfer rule a call was handed over by. */
export async function addSystemMessage(db: Db, conversationId: string, text: string): Promise<void> {
  await insertMessages(db, conversationId, [{ role: 'system', text }]);
}

/**
 * One visitor turn: the message, then the runtime's replies (grounded in the agent's knowledge) and
 * what it did. While a member holds the conversation the agent stays silent: no replies. A visitor
 * asking for a person, or an agent offering one, flags the conversation for the live inbox.
 */
export async function sendVisitorMessage(deps: ConversationDeps, agent: Agent, conversation: ConversationRecord, text: string,
  opts: {
    role?: 'visitor' | 'caller'; stream?: TurnStream;
    /**
     * The replies are answered while the lifecycle's `activity` signal is sent, not once it has been: `sent` settles
     * when it has (it never fails; a streamed call speaks meanwhile and waits for it before its next turn, issue 44).
     */
    whileSignalled?: (sent: Promise<void>) => void;
  } = {}): Promise<TranscriptMessage[]> {
  refuseMessage(agent, conversation);
  // Two statements on their own, sent at once: the turn waits for one round trip, not two (a streamed call's turn, issue 44).
  await Promise.all([insertMessages(deps.sql, conversation.id, [{ role: opts.role ?? 'visitor', text }]), touchVisitor(deps.sql, conversation.id)]);
  const handoff = HANDOFF_REQUEST.test(text.toLowerCase());
  if (handoff) await flagNeedsHuman(deps.sql, conversation.id);
  const replies = conversation.mode === 'human' ? [] : await agentTurn(deps, agent, conversation, { asSaid: text, ...(opts.stream ? { stream: opts.stream } : {}) });
  if (handoff) await queueBusinessNotification(deps, agent, conversation, 'handoff_requested');
  if (handoff && inLiveInbox(conversation)) await requestPerson(deps, conversation);
  const sent = signalLifecycle(deps, conversation.id, 'activity');
  if (opts.whileSignalled) opts.whileSignalled(sent);
  else await sent;
  return replies;
}

/** 409 when the conversation takes no message: it has ended, or its agent is paused. */
export function refuseMessage(agent: Agent, conversation: ConversationRecord): void {
  if (conversation.status === 'ended') throw new AppError(409, 'invalid_state', 'this conversation has ended; start a new one');
  if (agent.status === 'paused') throw new AppError(409, 'agent_paused', 'this agent is paused and does not take conversations');
}

/**
 * A turn whose reply is streamed (issue 46): the runtime's `ReplyStream` (text as it is written, and the abort), and
 * what the turn did, filled in when it ends: the tool calls and which runtime answered. A runtime that has the reply at
 * once (the offline one, a transfer rule's handoff) gives it as one piece.
 */
export interface TurnStream extends ReplyStream {
  done?: { toolCalls: ToolCall[]; source: 'llm' | 'offline' };
}

/** What an agent answers from: its knowledge, training notes and data tables (every surface, simulations included). */
export function groundingOf(sql: Sql, agentId: string): Pick<RuntimeTools, 'searchKnowledge' | 'retrievePassages' | 'searchNotes' | 'lookupRows'> {
  const store = chunkStore(sql);
  return {
    searchKnowledge: (query, limit, asked) => searchKnowledge(store, agentId, query, { limit: limit ?? 5, ...asked }),
    retrievePassages: (query, limit) => retrievePassages(store, agentId, query, { limit: limit ?? 5 }),
    searchNotes: (query) => matchTrainingNotes(sql, agentId, query),
    lookupRows: (query) => answerFromRows(sql, agentId, query),
  };
}

/**
 * The answer engine made ready for the agent's first question (`warmAnswerEngine`): a streamed call starts it while its
 * greeting plays, so that its first turn does not load WordNet, compromise, the encoder and the agent's index (issue 44).
 */
export function warmGrounding(sql: Sql, agentId: string): Promise<void> {
  return warmAnswerEngine(chunkStore(sql), agentId);
}

/** The words of the agent's knowledge, the most written first, at most `limit` (a streamed call's recognizer listens for them). */
export function groundingWords(sql: Sql, agentId: string, limit: number): Promise<string[]> {
  return knowledgeWords(chunkStore(sql), agentId, limit);
}

/**
 * The agent's answer to the transcript so far, stored, unless a member took the conversation over
 * while the runtime was thinking (then the answer is dropped). With `stream`, the reply's text goes to it as it is
 * written; when its signal aborts the turn, what was sent is stored, marked `cut`. `asSaid`: the visitor's last message
 * as they said it, before the transcript's redaction (what the runtime reads; issue 47).
 */
export async function agentTurn(deps: ConversationDeps, agent: Agent, conversation: ConversationRecord,
  opts: { asSaid?: string; stream?: TurnStream } = {}): Promise<TranscriptMessage[]> {
  const { asSaid, stream } = opts;
  // What the turn reads, read at once rather than one after another (a streamed call's turn waits for each, issue 44):
  // the transcript, the agent as the runtime sees it, the call the agent placed, its tools, the runtime of its model.
  const [history, told, placed, tools, runtime] = await Promise.all([
    listMessages(deps.sql, conversation.id),
    runtimeAgent(deps.sql, agent, { liveInboxOrgId: inLiveInbox(conversation) ? conversation.orgId : null }),
    campaignCallOf(deps.sql, conversation),
    enabledTools(deps.sql, agent.id),
    // The agent's model setting picks the runtime of this turn (issue 46, item 3).
    runtimeFor(deps, conversation.orgId, agent),
  ]);
  // The stored transcript may be redacted (issue 47): the runtime reads this turn's message as it was said, to capture what it holds.
  const last = history.at(-1);
  if (asSaid !== undefined && last && (last.role === 'visitor' || last.role === 'caller')) history[history.length - 1] = { ...last, text: asSaid };
  // A call the agent placed (issue 43): the runtime knows why it calls; the callee's answers that end a cold call end it here.
  if (placed) told.outbound = outboundOf(placed);
  // Stored sealed (issue 47): the runtime reads the captured data as captured.
  const captured = openCaptured(deps.secrets, conversation.id, conversation.captured);
  const said = history.at(-1)?.role === 'caller' ? history.at(-1)!.text : '';
  const intent = placed && said ? outboundIntent(said) : null;
  const closing = intent && intent.kind !== 'identify' ? intent : null;
  const toolContext = { orgId: conversation.orgId, agentId: agent.id, conversationId: conversation.id };
  // On a text surface a transfer rule cannot dial anyone: it asks the live inbox for a person instead.
  const rule = TEXT_SURFACES.includes(conversation.surface as typeof TEXT_SURFACES[number])
    ? await runtime.chooseTransferRule({ agent: told, messages: history, rules: await listTransferRules(deps.sql, conversation.orgId, agent.id) })
    : null;
  const memory = closing || rule ? {} : await memoryOf(deps.sql, conversation.orgId, agent, conversation.visitorId);
  const turn: (TurnResult & { streamed?: boolean }) | { cut: TranscriptMessage[] } = closing
    ? {
      replies: [outboundReply(closing, told, told.outbound!, replyLanguage(said, conversation.language ?? agent.default_language))], captured,
      toolCalls: [{ name: 'campaign_call_closed', args: { intent: closing.kind }, ts: new Date().toISOString() }],
    }
    : rule
    ? {
      replies: [handoffReply(conversation.language ?? agent.default_language)], captured,
      toolCalls: [{ name: 'transfer_rule_matched', args: { rule_id: rule.id, rule_name: rule.name }, ts: new Date().toISOString() }],
    }
    : await replyOrCut(deps, conversation, stream, (relay) => runtime.reply({
      agent: told, messages: history, captured,
      contactFacts: memory,
      language: replyLanguageOf(agent, conversation.language),
    }, {
      ...groundingOf(deps.sql, agent.id),
      agentTools: tools.model,
      callAgentTool: async (name, args) => callAgentTool(deps, toolContext, tools.model.find((t) => t.name === name)!, args),
    }, relay));
  if ('cut' in turn) return turn.cut;
  if (stream) {
    // A reply had at once is streamed as one piece; the stream learns what the turn did.
    if (!turn.streamed) stream.onText(turn.replies.join('\n\n'));
    stream.done = { toolCalls: turn.toolCalls, source: turn.usage ? 'llm' : 'offline' };
  }
  // Spoken, not written: no URL or "Source:", one or two short sentences.
  if (conversation.surface === 'phone') turn.replies = turn.replies.map((reply) => spokenText(reply, conversation.language ?? agent.default_language));
  const schema = told.data_schema ?? [];
  const { stored, completed, flagged } = await deps.sql.begin(async (tx) => {
    const current = await findConversationRecord(tx, conversation.id, { forUpdate: true });
    if (!current || current.mode === 'human') return { stored: [], completed: false, flagged: false };
    if (closing && placed) await closeCall(tx, placed.call, closing, new Date());
    // The turn's tokens go with its first message (the conversation detail shows them per turn).
    const stored = await insertMessages(tx, conversation.id, turn.replies.map((reply, i) => ({ role: 'agent' as const, text: reply, usage: i === 0 ? turn.usage : undefined })));
    await recordTurn(tx, deps.secrets, conversation.id, turn);
    if (rule) {
      // Named once per conversation, as a phone transfer is: the live inbox sees why a person is wanted.
      const note = `Transfer rule "${rule.name}" matched: a member of the team is asked to join`;
      if (!history.some((m) => m.role === 'system' && m.text === note)) await addSystemMessage(tx, conversation.id, note);
    }
    const flagged = Boolean(rule) || turn.replies.some((reply) => HANDOFF_OFFER.test(reply.toLowerCase()));
    if (flagged) await flagNeedsHuman(tx, conversation.id);
    // Decided under the row's lock: the turn that completes the data schema is exactly one.
    return { stored, completed: dataSchemaComplete(schema, turn.captured) && !dataSchemaComplete(schema, current.captured), flagged };
  });
  if (flagged && inLiveInbox(conversation)) await requestPerson(deps, conversation);
  if (rule) await queueBusinessNotification(deps, agent, conversation, 'handoff_requested');
  if (completed) await queueBusinessNotification(deps, agent, conversation, 'lead_captured');
  if (!completed || !tools.dataCaptured.length) return stored;
  const apology = await callDataCapturedTools(deps, { ...toolContext, canTransfer: told.can_transfer, lang: pageLanguage(conversation.language) },
    tools.dataCaptured, schema, turn.captured);
  return apology ? [...stored, ...await insertMessages(deps.sql, conversation.id, [{ role: 'agent', text: apology }])] : stored;
}

/**
 * Runs the runtime's reply with the stream relayed (what was sent is kept). When the stream's signal aborted it, the
 * text sent so far is stored as the agent's reply, marked cut (nothing when nothing was sent), and answered as `cut`.
 */
async function replyOrCut(deps: ConversationDeps, conversation: ConversationRecord, stream: TurnStream | undefined,
  reply: (relay: ReplyStream | undefined) => Promise<TurnResult>): Promise<(TurnResult & { streamed: boolean }) | { cut: TranscriptMessage[] }> {
  let sent = '';
  const relay: ReplyStream | undefined = stream && {
    onText: (delta) => {
      sent += delta;
      stream.onText(delta);
    },
    ...(stream.signal ? { signal: stream.signal } : {}),
  };
  try {
    const turn = await reply(relay);
    return { ...turn, streamed: sent !== '' };
  } catch (err) {
    if (!stream?.signal?.aborted) throw err;
    const text = sent.trim();
    if (!text) return { cut: [] };
    const cut = await deps.sql.begin(async (tx) => {
      const current = await findConversationRecord(tx, conversation.id, { forUpdate: true });
      if (!current || current.mode === 'human') return [];
      const stored = await insertMessages(tx, conversation.id, [{ role: 'agent', text, cut: true }]);
      await recordTurn(tx, deps.secrets, conversation.id, { toolCalls: [], captured: current.captured });
      return stored;
    });
    return { cut };
  }
}

/** Why a conversation ended: the visitor left, its inactivity timer ran out, or a member (or key) closed it. */
export type EndReason = 'visitor' | 'inactivity' | 'closed';

/**
 * Ends a conversation in the caller's transaction, with `conversation.ended`: the event's id, or null
 * when it had ended already. No lifecycle workflow is told (endConversation does that).
 */
export async function markConversationEnded(tx: Db, id: string, reason: EndReason): Promise<string | null> {
  // Its agent and redaction as this process knows them (it opened the conversation, or ran a turn of it): the event is
  // written by the statement that ends it when the redaction leaves its payload as it is (issue 48).
  const event = sqlWrittenEvent(knownAgentOf(id));
  const ended = await markEnded(tx, id, reason, event);
  if (!ended) return null;
  if (event && ended.event) {
    checkWrittenEvent('conversation.ended', ended.event, { conversation: ended.listed });
    return event.id;
  }
  return emitEvent(tx, { orgId: ended.orgId, agentId: ended.agentId, type: 'conversation.ended', data: { conversation: ended.listed } });
}

/**
 * Ends an active conversation (the visitor, or its workflow after inactivity): status, end time,
 * usage record and `conversation.ended`, in one transaction. False when it had already ended.
 */
export async function endConversation(deps: Omit<ConversationDeps, 'runtime' | 'secrets'>, id: string, reason: 'visitor' | 'inactivity',
  opts: { lifecycle?: boolean } = {}): Promise<boolean> {
  const ended = await deps.sql.begin(async (tx) => {
    const eventId = await markConversationEnded(tx, id, reason);
    return eventId ? { held: await conversationAssignee(tx, id) } : null;
  });
  if (!ended) return false;
  // `lifecycle: false`: no lifecycle workflow to tell (a campaign call's conversation, ended by the call's workflow).
  if (reason === 'visitor' && opts.lifecycle !== false) await signalLifecycle(deps as ConversationDeps, id, 'ended');
  // Its assignee has room for another conversation: the queue hears of it now, not at its next look.
  if (ended.held) {
    await pokeAssignment(deps, id);
    await pokeWaitingConversations(deps, ended.held.orgId);
  }
  return true;
}

/**
 * Evaluates an ended conversation: extracted data, a verdict per goal and criterion, intent and
 * outcome, then `conversation.evaluated`. A conversation or agent deleted meanwhile is skipped.
 */
export async function evaluateConversation(deps: ConversationDeps, id: string,
  /** What the caller just read, not read again: the conversation, maybe its transcript, and its agent as read to run it (findAgentToRun) in the same step. */
  known?: { conversation: ConversationRecord; messages?: TranscriptMessage[]; agent?: AgentToRun }): Promise<boolean> {
  const conversation = known?.conversation ?? await findConversationRecord(deps.sql, id);
  if (!conversation) return false;
  const knownAgent = known?.agent;
  const found = knownAgent?.agent.id === conversation.agentId ? knownAgent : await findAgentToRun(deps.sql, conversation.orgId, conversation.agentId);
  if (!found) return false;
  const { agent } = found;
  const messages = known?.messages ?? await listMessages(deps.sql, id);
  const judged = await runtimeAgent(deps.sql, agent, { transfers: found.transfers, redaction: found.redaction });
  // A simulated conversation is also judged by its scenario's criteria.
  const extra = conversation.isSimulated ? await simulationCriteriaOf(deps.sql, id) : [];
  if (extra.length) judged.acceptance_criteria = [...(judged.acceptance_criteria ?? []), ...extra];
  const evaluation = await deps.runtime.evaluate({ agent: judged, messages, captured: openCaptured(deps.secrets, id, conversation.captured) });
  const identity = { visitorId: conversation.visitorId, ...identityOf(agent, evaluation.extracted_data) };
  // No contact to match and a payload its redaction leaves as it is: the update and its event in one statement.
  const masking = knownRedaction(agent.id) ?? found.redaction;
  if (!namesSomeone(identity) && !policyAt(masking.settings, 'webhooks')) {
    const event = { id: newEventId(), orgId: conversation.orgId, type: 'conversation.evaluated' as const, agentId: agent.id, redactionVersion: masking.version };
    const written = await recordEvaluationWithEvent(deps.sql, id, evaluation, event);
    if (written) {
      checkWrittenEvent(event.type, written.data, { conversation: written.row });
      return true;
    }
    // Gone, or the agent's redaction changed: the transaction's path says which, and masks as the settings now say.
  }
  const eventId = await deps.sql.begin(async (tx) => {
    // Null when the conversation was deleted meanwhile.
    const evaluated = await recordEvaluation(tx, id, evaluation);
    if (!evaluated) return null;
    // Matched to a contact on the phone or email it revealed (or the visitor id), whose facts it adds to.
    const contact = await recordContactConversation(tx, conversation.orgId, { conversationId: id, at: conversation.startedAt, ...identity });
    if (contact) await mergeContactFacts(tx, contact.id, evaluation.extracted_data);
    // A contact matched now is linked to it: read the row again then.
    const data = contact ? await conversationEventData(tx, id) : { conversation: evaluated };
    return emitEvent(tx, { orgId: conversation.orgId, agentId: agent.id, type: 'conversation.evaluated', data });
  });
  if (!eventId) return false;
  return true;
}

/**
 * Deletes a conversation and its transcript (the usage record stays), then stops its lifecycle
 * workflow. Terminated, not cancelled: with its rows gone, nothing must run after (no evaluation).
 * False when there is no such conversation.
 */
export async function deleteConversationAndWork(deps: Pick<ConversationDeps, 'sql' | 'temporal' | 'log'>, orgId: string, id: string): Promise<boolean> {
  // A streamed call's recording first: its row would go with the conversation's and leave the blob.
  await deleteConversationRecording(deps.sql, orgId, id);
  const deleted = await deps.sql.begin((tx) => deleteConversation(tx, orgId, id));
  if (!deleted) return false;
  await stopWorkflow(deps, workflowIds.conversation(id), 'terminate', 'conversation deleted');
  return true;
}
