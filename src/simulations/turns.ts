import { ApplicationFailure } from '@temporalio/common';
import { createRequire } from 'node:module';
import type * as FastXmlParser from 'fast-xml-parser';
import { findAgent } from '../db/agents.ts';
import { activeNumbersOfAgent, type PhoneNumberRecord } from '../db/phone-numbers.ts';
import { appendToolCalls, findConversationRecord, insertMessages, listMessages, markEnded, openCaptured, recordTurn } from '../db/conversations.ts';
import { finishSimulation, findSimulation, findTurn, recordSimulationTurn, type SimulationRecord } from '../db/simulations.ts';
import { emitEvent } from '../events/emit.ts';
import { conversationEventData, groundingOf, runtimeAgent } from '../conversations/lifecycle.ts';
import { createScriptedCaller } from '../runtime/caller.ts';
import { visitorSide } from '../runtime/signals.ts';
import { pageLanguage } from '../answers/phrases.ts';
import { transferNote, voiceTurn } from '../telephony/inbound.ts';
import { CARRIER_WEBHOOK_PATHS } from '../telephony/webhook-urls.ts';
import type { Db } from '../db/index.ts';
import type { TransferRule } from '../schemas/transfer-rules.ts';
import { callAgentTool, callDataCaptured, dataSchemaComplete, enabledTools, type ToolCallContext } from '../tools/calls.ts';
import { createToolSender, type ToolSender } from '../tools/send.ts';
import type { AgentTool } from '../schemas/agent-tools.ts';
import type { Agent } from '../schemas/agents.ts';
import type { RuntimeAgent } from '../runtime/types.ts';
import type { TranscriptMessage } from '../schemas/conversations.ts';
import type { Simulation } from '../schemas/simulations.ts';
import { runtimeFor } from '../conversations/agent-runtime.ts';
import type { SimulationDeps } from './runs.ts';
import { readAfterCommit } from '../db/commit-gate.ts';
import { workflowIds } from '../temporal/ids.ts';
import { callSettingsOf, voiceModeOf } from '../telephony/phone-settings.ts';
import { createEspeak, createPocketsphinx } from '../voice/engines.ts';
import { agentHears, agentVoiceOf, callerHears, NOTHING_HEARD, type SimulationSpeech } from './streamed.ts';

/**
 * One turn of a turn-based run, as its activity plays it: the caller's words (the built-in
 * caller, rebuilt from the transcript, or another agent), then the agent's answer, both stored
 * with the turn's row in one transaction. A turn already stored (an activity retried after its
 * worker was lost) is answered again, never played twice. The agent under test has its tools, as
 * in a conversation turn, in the run's `tool_mode` (the conversation's): its model tools offered to
 * the runtime, its `data_captured` tools called on the turn that completes its data schema. No
 * conversation workflow runs for a simulated conversation, so the calls are made in process, before
 * the turn's transaction: a turn whose activity is retried before it committed calls them again.
 *
 * A phone run on the `twiml` voice path plays each turn through the voice webhook's turn
 * (`voiceTurn`): the caller's words are its `SpeechResult`, the agent's are read from the `<Say>`s
 * inside the TwiML's `<Gather>`. A turn that the TwiML hands over (`<Dial>`) ends the run with the
 * rule's announcement and a system note; no carrier call is placed.
 *
 * A run on the `stream` voice path (the agent's calls stream) plays the same turn, spoken: the
 * caller's line as the agent hears it through the service's recognizer, the agent's lines as the
 * caller hears them in the agent's voice (streamed.ts). The transcript keeps what each side heard.
 */

export interface PlayedTurn { messageIds: string[]; callerDone: boolean }

/** What a turn's activity is given: the service's deps, and the sender its tool calls go through (one per worker). */
export type TurnDeps = SimulationDeps & { sendTool?: ToolSender | undefined; speech?: SimulationSpeech | undefined };

/** The caller-side message of each played turn, with the agent's words that followed it. */
function playedTurns(history: TranscriptMessage[]): { caller: string; agent: string }[] {
  const turns: { caller: string; agent: string[] }[] = [];
  for (const m of history) {
    if (visitorSide(m)) turns.push({ caller: m.text, agent: [] });
    else if (m.role === 'agent' || m.role === 'human_agent') turns.at(-1)?.agent.push(m.text);
  }
  return turns.map((t) => ({ caller: t.caller, agent: t.agent.join('\n') }));
}

const nowMessage = (role: TranscriptMessage['role'], text: string): TranscriptMessage =>
  ({ id: '00000000-0000-7000-8000-000000000000', role, text, ts: new Date().toISOString() });

/** The agent's model tools as a turn offers them, each call made (and recorded) in the conversation's tool_mode. */
interface OfferedTools { model: AgentTool[]; call: (tool: AgentTool, args: Record<string, unknown>) => ReturnType<typeof callAgentTool> }

/**
 * The runtime's answer of `agent` to `messages` (grounded in its knowledge, notes and data tables),
 * with its model tools when `tools` is given (the agent under test, not an agent playing the caller).
 */
async function answerOf(deps: SimulationDeps, orgId: string, agent: Agent, messages: TranscriptMessage[], captured: Record<string, unknown>, language: string,
  opts: { told?: RuntimeAgent; tools?: OfferedTools } = {}) {
  const { tools } = opts;
  // The agent's model setting picks the runtime, as in a real conversation (issue 46, item 3).
  const runtime = await runtimeFor(deps, orgId, agent);
  return runtime.reply({ agent: opts.told ?? await runtimeAgent(deps.sql, agent), messages, captured, contactFacts: {}, language }, {
    ...groundingOf(deps.sql, agent.id),
    ...(tools?.model.length ? {
      agentTools: tools.model,
      callAgentTool: async (name: string, args: Record<string, unknown>) => tools.call(tools.model.find((t) => t.name === name)!, args),
    } : {}),
  });
}

/** The caller as the LLM runtime is told of it: a person with the scenario's goal, and nothing of the agent's configuration. */
export function llmCallerOf(sim: SimulationRecord, language: string): RuntimeAgent {
  return {
    id: sim.id, name: 'Simulated caller', greeting: null, guardrails: null, goals: null, acceptance_criteria: null, data_schema: null,
    default_language: language, config_variables: null, can_transfer: false,
    persona: 'You are a person contacting a business through its chat, not an assistant. Your goal and what you know about '
      + `yourself:\n${sim.scenarioText}\nAsk what your goal needs, one thing at a time; answer the business's questions from what `
      + 'you know; when your goal is met, say goodbye (use the word "Goodbye").',
  };
}

/**
 * The caller's words for turn `turn` (null: it hangs up). The built-in caller is deterministic, so
 * it is rebuilt by replaying the turns already played; another agent answers the transcript seen
 * from its side (the tested agent's words are its visitor's).
 */
async function callerWords(deps: SimulationDeps, sim: SimulationRecord, history: TranscriptMessage[], turn: number, language: string): Promise<{ text: string | null; done: boolean }> {
  const past = playedTurns(history);
  if (sim.callerAgentId) {
    const callerAgent = await findAgent(deps.sql, sim.orgId, sim.callerAgentId);
    if (!callerAgent) throw ApplicationFailure.nonRetryable('the caller agent no longer exists', 'agent_gone');
    const mirrored = history.map((m) => ({ ...m, role: visitorSide(m) ? 'agent' as const : 'visitor' as const }));
    const answer = await answerOf(deps, sim.orgId, callerAgent, mirrored, {}, language);
    return { text: answer.replies.join('\n') || '…', done: false };
  }
  if (deps.runtime.kind === 'llm') {
    // With a model configured, the model plays the caller too, told its goal; it hangs up by saying goodbye.
    if (turn > sim.maxTurns) return { text: null, done: true };
    const mirrored = history.map((m) => ({ ...m, role: visitorSide(m) ? 'agent' as const : 'visitor' as const }));
    const answer = await deps.runtime.reply({ agent: llmCallerOf(sim, language), messages: mirrored, captured: {}, contactFacts: {}, language },
      { searchKnowledge: async () => [] });
    const text = answer.replies.join('\n') || '…';
    return { text, done: /\bgood-?bye\b/i.test(text) };
  }
  const caller = createScriptedCaller({ goal: sim.scenarioText, maxTurns: sim.maxTurns });
  let text: string | null = caller.opening();
  for (let t = 2; t <= turn && text !== null; t++) text = caller.reply(past[t - 2]?.agent ?? '', t);
  return { text, done: caller.goalMet?.() ?? false };
}

/** The number a phone run calls (the agent's first active number taking calls), or null: the run plays text turns. */
export async function voiceNumberOf(db: Db, agentId: string): Promise<PhoneNumberRecord | null> {
  return (await activeNumbersOfAgent(db, agentId)).find((n) => n.enabled && n.voice_enabled) ?? null;
}

/**
 * How a phone run of `agent` plays: `stream` when its calls stream (its number's `voice_mode`, else its
 * own `phone_settings.voice_mode`, number or not), `twiml` through its number's `<Gather>` turns, else `text`.
 */
export async function phoneVoicePathOf(db: Db, agent: Agent): Promise<'text' | 'twiml' | 'stream'> {
  const number = await voiceNumberOf(db, agent.id);
  if (voiceModeOf(callSettingsOf(agent), number) === 'stream') return 'stream';
  return number ? 'twiml' : 'text';
}

/** The engines of a streamed run when the worker was given none: the offline ones. */
const offlineSpeech = (): SimulationSpeech => ({ stt: createPocketsphinx(), tts: createEspeak() });

/** Made on first use, from fast-xml-parser's CommonJS build, as src/crawler/sitemap.ts makes its parser (issue 48). */
let parser: FastXmlParser.XMLParser | undefined;
const twimlParser = (): FastXmlParser.XMLParser => parser ??= new (createRequire(import.meta.url)('fast-xml-parser') as typeof FastXmlParser).XMLParser({
  ignoreAttributes: true, parseTagValue: false, ignoreDeclaration: true, isArray: (name) => name === 'Say',
});

/** What a TwiML answer says: the agent's words inside `<Gather>`, or, for a hand-over (`<Dial>`), the announcement before it. */
export function spokenLines(twiml: string): { lines: string[]; dials: boolean } {
  const response = (twimlParser().parse(twiml) as { Response?: { Gather?: { Say?: unknown[] }; Say?: unknown[]; Dial?: unknown } }).Response ?? {};
  const text = (says: unknown[] | undefined) => (says ?? []).map((say) => (typeof say === 'string' ? say : '')).filter(Boolean);
  return response.Dial !== undefined ? { lines: text(response.Say), dials: true } : { lines: text(response.Gather?.Say), dials: false };
}

export async function playSimulationTurn(deps: TurnDeps, input: { simulationId: string; turn: number }): Promise<PlayedTurn> {
  const stored = await findTurn(deps.sql, input.simulationId, input.turn);
  if (stored) return { messageIds: stored.messageIds, callerDone: stored.callerDone };
  // The run's first turn may come before its creating transaction commits: the commit gate waits for it.
  const sim = await readAfterCommit(deps.sql, workflowIds.simulation(input.simulationId), (tx) => findSimulation(tx, null, input.simulationId));
  if (!sim?.conversationId) throw ApplicationFailure.nonRetryable('the simulation no longer exists', 'simulation_gone');
  const conversation = await findConversationRecord(deps.sql, sim.conversationId);
  const agent = await findAgent(deps.sql, sim.orgId, sim.agentId);
  if (!conversation || !agent) throw ApplicationFailure.nonRetryable('the agent or the conversation no longer exists', 'agent_gone');
  const language = conversation.language ?? 'en';
  const history = await listMessages(deps.sql, conversation.id);
  const caller = await callerWords(deps, sim, history, input.turn, language);
  const role = sim.surface === 'phone' ? 'caller' as const : 'visitor' as const;
  let answer: Awaited<ReturnType<typeof answerOf>> | null = null;
  let followUp: Awaited<ReturnType<typeof callDataCaptured>> | null = null;
  let spoken: string[] | null = null;
  let transfer: TransferRule | null = null;
  /** On a streamed run, what the agent heard of the caller's line. */
  let heard: string | null = null;
  if (caller.text !== null) {
    const said = caller.text;
    const told = await runtimeAgent(deps.sql, agent);
    const tools = await enabledTools(deps.sql, agent.id);
    const toolDeps = { ...deps, sendTool: deps.sendTool ?? createToolSender(deps) };
    const toolContext: ToolCallContext = { orgId: sim.orgId, agentId: agent.id, conversationId: conversation.id };
    const play = async (words: string): Promise<string[]> => {
      answer = await answerOf(deps, sim.orgId, agent, [...history, nowMessage(role, words)], openCaptured(deps.secrets, conversation.id, conversation.captured), language, {
        told, tools: { model: tools.model, call: (tool, args) => callAgentTool(toolDeps, toolContext, tool, args) },
      });
      // The turn that completes the data schema calls the data_captured tools (turns are serialized by the workflow).
      const schema = told.data_schema ?? [];
      if (tools.dataCaptured.length && dataSchemaComplete(schema, answer.captured) && !dataSchemaComplete(schema, conversation.captured)) {
        followUp = await callDataCaptured(toolDeps, { ...toolContext, canTransfer: told.can_transfer, lang: pageLanguage(language) },
          tools.dataCaptured, schema, answer.captured);
      }
      return [...answer.replies, ...(followUp?.apology ? [followUp.apology] : [])];
    };
    if (sim.voicePath === 'twiml' || sim.voicePath === 'stream') {
      const speech = sim.voicePath === 'stream' ? deps.speech ?? offlineSpeech() : null;
      // A streamed run: the agent answers what its recognizer made of the caller's voice.
      if (speech) heard = await agentHears(speech, said, conversation.language);
      // The voice webhook's turn, with this run's answer in place of the conversation's: what the carrier would be told to say.
      const number = await voiceNumberOf(deps.sql, agent.id);
      const turn = await voiceTurn(deps, {
        orgId: sim.orgId, agent, conversationId: conversation.id, language: conversation.language, said: heard ?? said,
        action: CARRIER_WEBHOOK_PATHS.voice, ourNumber: number?.phone_number ?? '', answer: play,
      });
      spoken = spokenLines(turn.twiml).lines;
      // ...and the transcript keeps the agent's words as the caller heard them, in the agent's voice.
      if (speech) spoken = await callerHears(speech, await agentVoiceOf(deps.sql, sim.orgId, agent, conversation.language), spoken, conversation.language);
      transfer = turn.transfer;
    } else {
      spoken = await play(said);
    }
  }
  return deps.sql.begin(async (tx) => {
    // The run's row is the turn's lock: a twin attempt waits here, then finds the turn stored.
    await findSimulation(tx, null, sim.id, { forUpdate: true });
    const twin = await findTurn(tx, sim.id, input.turn);
    if (twin) return { messageIds: twin.messageIds, callerDone: twin.callerDone };
    const messages = caller.text === null ? [] : await insertMessages(tx, conversation.id, [
      { role, text: heard === null ? caller.text : heard || NOTHING_HEARD }, ...(spoken ?? []).map((text) => ({ role: 'agent' as const, text })),
      ...(transfer ? [{ role: 'system' as const, text: transferNote(transfer) }] : []),
    ]);
    if (answer) await recordTurn(tx, deps.secrets, conversation.id, answer);
    if (followUp) await appendToolCalls(tx, conversation.id, followUp.records);
    // A hand-over ends the run: the caller is with a person now.
    const callerDone = caller.text === null || caller.done || transfer !== null;
    await recordSimulationTurn(tx, sim.id, input.turn, messages.map((m) => m.id), callerDone);
    return { messageIds: messages.map((m) => m.id), callerDone };
  });
}

/** Records a run's end and ends its conversation (`conversation.ended`); a run already ended is left as it is. */
export async function closeSimulation(deps: SimulationDeps, input: {
  simulationId: string; status: 'completed' | 'canceled' | 'failed'; endedReason: NonNullable<Simulation['ended_reason']>; error?: string;
}): Promise<boolean> {
  return deps.sql.begin(async (tx) => {
    const sim = await findSimulation(tx, null, input.simulationId, { forUpdate: true });
    if (!sim) return false;
    const finished = await finishSimulation(tx, sim.id, { status: input.status, endedReason: input.endedReason, error: input.error ?? null });
    if (sim.kind === 'turns' && sim.conversationId && await markEnded(tx, sim.conversationId, 'visitor')) {
      await emitEvent(tx, { orgId: sim.orgId, agentId: sim.agentId, type: 'conversation.ended', data: await conversationEventData(tx, sim.conversationId) });
    }
    return finished;
  });
}
