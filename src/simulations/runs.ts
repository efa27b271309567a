import { WorkflowUpdateFailedError } from '@temporalio/client';
import { AppError, fieldError, notFound } from '../errors.ts';
import { findAgent } from '../db/agents.ts';
import { setConversationToolMode } from '../db/agent-tools.ts';
import { deleteConversation, insertConversation, insertMessages, listMessages } from '../db/conversations.ts';
import {
  deleteSimulation, findScenario, findSimulation, insertSimulation, listSimulations, toSimulation,
  type NewSimulation, type SimulationRecord,
} from '../db/simulations.ts';
import { emitEvent } from '../events/emit.ts';
import { conversationEventData, runtimeAgent, type ConversationDeps } from '../conversations/lifecycle.ts';
import { DEFAULT_MAX_TURNS, type Simulation, type SimulationCreate, type SimulationListQueryT, type WebSimulationCreate } from '../schemas/simulations.ts';
import { assertOutboundUrl, outboundPolicy } from '../net/outbound.ts';
import type { TranscriptMessage } from '../schemas/conversations.ts';
import { workflowIds } from '../temporal/ids.ts';
import { startWorkflow, stopWorkflow, workflowServiceUnavailable } from '../temporal/start.ts';
import { phoneVoicePathOf } from './turns.ts';
import { runSimulationKind, stepUpdate } from '../../workflows/simulation.ts';
import { runWebSimulationKind } from '../../workflows/web-simulation.ts';

/**
 * Simulation runs: created `running` with their (simulated) conversation and the workflow that
 * plays them, stepped through a workflow Update, cancelled, re-run and deleted. What a turn does
 * is in turns.ts; the browser run in web.ts.
 */

export type SimulationDeps = ConversationDeps;

/** What a turn-based run is made of; how a phone run's turns go (`voicePath`) is decided when it is created. */
type RunInput = Omit<NewSimulation, 'conversationId' | 'voicePath'>;

/** A scenario's criteria, one per line (list bullets dropped), as the evaluation takes them. */
export function criteriaOf(text: string): string[] {
  return text.split(/\r?\n/).map((line) => line.replace(/^\s*(?:[-*•]|\d+[.)])\s*/, '').trim())
    .filter(Boolean).map((line) => line.slice(0, 500)).slice(0, 50);
}

/** The run as the API shows it, with its transcript. */
export async function simulationView(deps: Pick<SimulationDeps, 'sql'>, record: SimulationRecord): Promise<Simulation> {
  const messages = record.conversationId ? await listMessages(deps.sql, record.conversationId) : [];
  return toSimulation(record, messages);
}

export async function getSimulation(deps: Pick<SimulationDeps, 'sql'>, orgId: string, id: string): Promise<Simulation> {
  const record = await findSimulation(deps.sql, orgId, id);
  if (!record) throw notFound('simulation');
  return simulationView(deps, record);
}

export async function listSimulationViews(deps: Pick<SimulationDeps, 'sql'>, orgId: string, q: SimulationListQueryT): Promise<{ data: Simulation[]; total: number }> {
  const page = await listSimulations(deps.sql, orgId, q);
  return { data: await Promise.all(page.data.map((r) => simulationView(deps, r))), total: page.total };
}

/** The agent a body names, in the organization: 400 on that field otherwise (an id in a body, not a path). */
export async function agentNamed(deps: Pick<SimulationDeps, 'sql'>, orgId: string, id: string, field: string) {
  const agent = await findAgent(deps.sql, orgId, id);
  if (!agent) throw fieldError(field, 'not_found', `${field} names no agent of this organization`);
  return agent;
}

/** What a new run is made of: the scenario text and criteria (from `scenario_id` when given) and the agents. */
export async function resolveRunInput(deps: Pick<SimulationDeps, 'sql'>, orgId: string, body: SimulationCreate): Promise<RunInput> {
  if ((body.scenario_text === undefined) === (body.scenario_id === undefined)) {
    throw fieldError('scenario_text', 'one_of_required', 'give exactly one of scenario_text and scenario_id');
  }
  if (body.widget_id && body.widget_id === body.opponent_widget_id) {
    throw fieldError('widget_id', 'same_agent', 'the caller agent must be another agent than the one under test');
  }
  const scenario = body.scenario_id ? await findScenario(deps.sql, orgId, body.scenario_id) : null;
  if (body.scenario_id && !scenario) throw fieldError('scenario_id', 'not_found', 'scenario_id names no scenario of this organization');
  await agentNamed(deps, orgId, body.opponent_widget_id, 'opponent_widget_id');
  if (body.widget_id) await agentNamed(deps, orgId, body.widget_id, 'widget_id');
  return {
    orgId, kind: 'turns', agentId: body.opponent_widget_id, callerAgentId: body.widget_id ?? null, scenarioId: scenario?.id ?? null,
    scenarioText: scenario ? scenario.prompt : body.scenario_text!, criteria: scenario ? criteriaOf(scenario.acceptance_criteria) : [],
    toolMode: body.tool_mode ?? 'mock', surface: body.surface ?? 'web', mode: body.mode ?? 'manual',
    maxTurns: body.max_turns ?? DEFAULT_MAX_TURNS, pageUrl: null,
  };
}

/**
 * Creates a turn-based run: its conversation (simulated, with the agent's greeting and
 * `conversation.started`), the run row, and the workflow `simulation:<id>`, in one transaction.
 */
export async function createSimulation(deps: SimulationDeps, made: RunInput): Promise<Simulation> {
  const agent = await agentNamed(deps, made.orgId, made.agentId, 'opponent_widget_id');
  // A phone run is spoken through the sandbox's streamed caller when the agent's calls stream, plays the voice
  // webhook's TwiML turns when the agent answers calls on a number, else text turns.
  const voicePath = made.surface !== 'phone' ? null : await phoneVoicePathOf(deps.sql, agent);
  const input = { ...made, voicePath };
  const language = (agent.default_language ?? 'en').toLowerCase().split('-')[0]!;
  const greeting = await deps.runtime.greet(await runtimeAgent(deps.sql, agent), { language, contactFacts: {} });
  const { simId } = await deps.sql.begin(async (tx) => {
    const conversation = await insertConversation(tx, {
      orgId: input.orgId, agentId: input.agentId, surface: input.surface, pageUrl: null, visitorId: null, contactId: null,
      language, tokenHash: null, isSimulated: true,
    });
    // The run's tool_mode is its conversation's: how the agent's tool calls go out (turns.ts).
    await setConversationToolMode(tx, conversation.id, input.toolMode);
    await insertMessages(tx, conversation.id, [{ role: 'agent', text: greeting }]);
    const id = await insertSimulation(tx, { ...input, conversationId: conversation.id });
    await emitEvent(tx, { orgId: input.orgId, agentId: input.agentId, type: 'conversation.started', data: await conversationEventData(tx, conversation.id) });
    // Inside the transaction (Temporal unreachable rolls it all back, the event included, as a 503); the first turn
    // reads the run through the commit gate.
    await startWorkflow(deps, runSimulationKind, runSimulationKind.id(id),
      [{ simulationId: id, conversationId: conversation.id, maxTurns: input.maxTurns, mode: input.mode }],
      { orgId: input.orgId, agentId: input.agentId, callerId: input.callerAgentId ?? 'builtin',
        summary: `Simulation ${id} of agent ${agent.name} (${input.mode}, ${input.surface}): ${input.scenarioText}` }, { transaction: tx });
    return { simId: id, conversationId: conversation.id };
  });
  return getSimulation(deps, input.orgId, simId);
}

const invalidState = (detail: string) => new AppError(409, 'invalid_state', detail);

/**
 * One step: a caller turn and an agent turn, through the Update `step` of the run's workflow,
 * answered once both are stored. Steps sent at once are played one after the other.
 */
export async function stepSimulation(deps: SimulationDeps, orgId: string, id: string): Promise<{ simulation: Simulation; turns: TranscriptMessage[]; done: boolean }> {
  const record = await findSimulation(deps.sql, orgId, id);
  if (!record) throw notFound('simulation');
  if (record.kind !== 'turns') throw invalidState('a web simulation runs in one go and has no steps');
  if (record.status !== 'running') throw invalidState(`this simulation is ${record.status}; it takes no more steps`);
  let outcome: { messageIds: string[]; done: boolean };
  try {
    outcome = await deps.temporal.workflow.getHandle(workflowIds.simulation(id)).executeUpdate(stepUpdate);
  } catch (err) {
    const now = await findSimulation(deps.sql, orgId, id);
    if (!now) throw notFound('simulation');
    if (now.status === 'failed' && err instanceof WorkflowUpdateFailedError) {
      return { simulation: await simulationView(deps, now), turns: [], done: true };
    }
    if (now.status !== 'running' || err instanceof WorkflowUpdateFailedError) throw invalidState(`this simulation is ${now.status}; it takes no more steps`);
    deps.log.error({ err, simulation_id: id }, 'could not step the simulation');
    throw workflowServiceUnavailable();
  }
  const after = (await findSimulation(deps.sql, orgId, id))!;
  const ids = new Set(outcome.messageIds);
  const messages = after.conversationId ? await listMessages(deps.sql, after.conversationId) : [];
  return { simulation: toSimulation(after, messages), turns: messages.filter((m) => ids.has(m.id)), done: outcome.done };
}

/** Cancels a running run: its workflow records `canceled` (in a block cancellation cannot interrupt). */
export async function cancelSimulation(deps: SimulationDeps, orgId: string, id: string): Promise<Simulation> {
  const record = await findSimulation(deps.sql, orgId, id);
  if (!record) throw notFound('simulation');
  if (record.status !== 'running') throw invalidState(`this simulation is ${record.status}; only a running one can be cancelled`);
  const handle = deps.temporal.workflow.getHandle(record.kind === 'web' ? workflowIds.webSimulation(id) : workflowIds.simulation(id));
  try {
    await handle.cancel();
    await handle.result();
  } catch (err) {
    deps.log.warn({ err, simulation_id: id }, 'cancelling the simulation workflow');
  }
  return getSimulation(deps, orgId, id);
}

/** A new run with the configuration of `id` (the same scenario, agents, modes and turn limit). */
export async function rerunSimulation(deps: SimulationDeps, orgId: string, id: string): Promise<Simulation> {
  const r = await findSimulation(deps.sql, orgId, id);
  if (!r) throw notFound('simulation');
  if (r.kind === 'web') throw invalidState('a web simulation is re-run with POST /simulations/web');
  if (!(await findAgent(deps.sql, orgId, r.agentId)) || (r.callerAgentId && !(await findAgent(deps.sql, orgId, r.callerAgentId)))) {
    throw invalidState('an agent of this simulation no longer exists');
  }
  return createSimulation(deps, {
    orgId, kind: 'turns', agentId: r.agentId, callerAgentId: r.callerAgentId, scenarioId: r.scenarioId, scenarioText: r.scenarioText,
    criteria: r.criteria, toolMode: r.toolMode, surface: r.surface, mode: r.mode, maxTurns: r.maxTurns, pageUrl: null,
  });
}

/** Deletes a run and its conversation, its workflow terminated first when it still runs. */
export async function deleteSimulationRun(deps: SimulationDeps, orgId: string, id: string): Promise<void> {
  const record = await findSimulation(deps.sql, orgId, id);
  if (!record) throw notFound('simulation');
  if (record.status === 'running') {
    await stopWorkflow(deps, record.kind === 'web' ? workflowIds.webSimulation(id) : workflowIds.simulation(id), 'terminate', 'simulation deleted');
  }
  const deleted = await deps.sql.begin(async (tx) => {
    const gone = await deleteSimulation(tx, orgId, id);
    if (gone?.conversationId) await deleteConversation(tx, orgId, gone.conversationId);
    return gone;
  });
  if (!deleted) throw notFound('simulation');
  if (deleted.conversationId) {
    // A web run's conversation has the lifecycle of any widget conversation; an evaluation may still be under way.
    await stopWorkflow(deps, workflowIds.conversation(deleted.conversationId), 'terminate', 'simulation deleted');
    await stopWorkflow(deps, workflowIds.conversationEvaluation(deleted.conversationId), 'terminate', 'simulation deleted');
  }
}

/** How long POST /simulations/web waits for its run (the specification's 5 minutes). */
const WEB_DEADLINE_MS = 5 * 60_000;

/**
 * A web simulation, synchronously: the run row, then `web-simulation:<id>` (one browser activity),
 * waited for up to 5 minutes. A page that cannot be opened gives a failed run with its `error`.
 */
export async function createWebSimulation(deps: SimulationDeps, orgId: string, body: WebSimulationCreate, embedBaseUrl: string): Promise<Simulation> {
  const agent = await agentNamed(deps, orgId, body.widget_id, 'widget_id');
  const pageUrl = body.page_url ?? agent.site_url;
  if (!pageUrl) throw fieldError('page_url', 'required', 'this agent has no website: give page_url');
  await assertOutboundUrl(pageUrl, 'page_url', { ...outboundPolicy(deps.config), allowHttp: true });
  const maxTurns = body.max_turns ?? DEFAULT_MAX_TURNS;
  const id = await deps.sql.begin(async (tx) => {
    const made = await insertSimulation(tx, {
      orgId, kind: 'web', agentId: agent.id, callerAgentId: null, scenarioId: null, scenarioText: body.scenario_text, criteria: [],
      toolMode: 'mock', surface: 'web', voicePath: null, mode: 'auto', maxTurns, pageUrl, conversationId: null,
    });
    await startWorkflow(deps, runWebSimulationKind, runWebSimulationKind.id(made), [{ simulationId: made, embedBaseUrl }],
      { orgId, agentId: agent.id, callerId: 'builtin', summary: `Web simulation ${made} of agent ${agent.name} on ${pageUrl}` }, { transaction: tx });
    return made;
  });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise((resolve) => { timer = setTimeout(resolve, WEB_DEADLINE_MS); });
  try {
    await Promise.race([deps.temporal.workflow.getHandle(workflowIds.webSimulation(id)).result(), deadline]);
  } catch (err) {
    deps.log.warn({ err, simulation_id: id }, 'web simulation workflow');
  } finally {
    clearTimeout(timer);
  }
  return getSimulation(deps, orgId, id);
}
