import { listPage, patchFields, type Db } from './index.ts';
import { newId } from '../ids.ts';
import {
  ScenarioPatchSchema, type BlockedRequest, type Scenario, type ScenarioCreate, type ScenarioPatch, type Simulation, type SimulationStatus,
} from '../schemas/simulations.ts';
import type { CriterionResult, TranscriptMessage } from '../schemas/conversations.ts';

// ---- Scenarios ----

interface ScenarioRow { id: string; name: string; prompt: string; acceptance_criteria: string; created_at: Date; updated_at: Date }
const SCENARIO_COLUMNS = ['id', 'name', 'prompt', 'acceptance_criteria', 'created_at', 'updated_at'];

const toScenario = (r: ScenarioRow): Scenario => ({
  id: r.id, name: r.name, prompt: r.prompt, acceptance_criteria: r.acceptance_criteria,
  created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString(),
});

export async function insertScenario(db: Db, orgId: string, input: ScenarioCreate): Promise<Scenario> {
  const [row] = await db<ScenarioRow[]>`insert into simulation_scenarios ${db({ id: newId(), org_id: orgId, ...input })}
    returning ${db(SCENARIO_COLUMNS)}`;
  return toScenario(row!);
}

export async function findScenario(db: Db, orgId: string, id: string): Promise<Scenario | null> {
  const [row] = await db<ScenarioRow[]>`select ${db(SCENARIO_COLUMNS)} from simulation_scenarios where id = ${id} and org_id = ${orgId}`;
  return row ? toScenario(row) : null;
}

export async function listScenarios(db: Db, orgId: string, q: { limit: number; offset: number }): Promise<{ data: Scenario[]; total: number }> {
  return listPage(db, { ...q, columns: db(SCENARIO_COLUMNS), from: db`from simulation_scenarios where org_id = ${orgId}`, order: db`created_at desc, id desc` }, toScenario);
}

/** Sets the fields present in `patch` (`{}` changes nothing, not even updated_at). Null when absent. */
export async function updateScenario(db: Db, orgId: string, id: string, patch: ScenarioPatch): Promise<Scenario | null> {
  const fields = patchFields(ScenarioPatchSchema, patch);
  if (Object.keys(fields).length === 0) return findScenario(db, orgId, id);
  const [row] = await db<ScenarioRow[]>`update simulation_scenarios set ${db(fields)}, updated_at = now()
    where id = ${id} and org_id = ${orgId} returning ${db(SCENARIO_COLUMNS)}`;
  return row ? toScenario(row) : null;
}

export async function deleteScenario(db: Db, orgId: string, id: string): Promise<boolean> {
  return (await db`delete from simulation_scenarios where id = ${id} and org_id = ${orgId} returning id`).length > 0;
}

// ---- Runs ----

/** A run as stored, with what the API shows of its conversation joined in. */
export interface SimulationRecord {
  id: string; orgId: string; kind: 'turns' | 'web'; status: SimulationStatus; agentId: string; callerAgentId: string | null;
  scenarioId: string | null; scenarioText: string; criteria: string[]; toolMode: Simulation['tool_mode']; surface: Simulation['surface'];
  voicePath: Simulation['voice_path']; mode: Simulation['mode']; maxTurns: number; turnCount: number; pageUrl: string | null; conversationId: string | null;
  endedReason: Simulation['ended_reason']; error: string | null; hasScreenshot: boolean; createdAt: Date; completedAt: Date | null;
  evaluated: boolean; criteriaResults: CriterionResult[]; blockedRequests: BlockedRequest[];
}

interface SimRow {
  id: string; org_id: string; kind: 'turns' | 'web'; status: SimulationStatus; agent_id: string; caller_agent_id: string | null;
  scenario_id: string | null; scenario_text: string; acceptance_criteria: string[]; tool_mode: Simulation['tool_mode'];
  surface: Simulation['surface']; voice_path: Simulation['voice_path']; mode: Simulation['mode']; max_turns: number; turn_count: number; page_url: string | null;
  conversation_id: string | null; ended_reason: Simulation['ended_reason']; error: string | null; has_screenshot: boolean;
  created_at: Date; completed_at: Date | null; evaluation_status: string | null; criteria_results: CriterionResult[] | null;
  blocked_requests: BlockedRequest[];
}

const SIM_SELECT = (db: Db) => db`select s.id, s.org_id, s.kind, s.status, s.agent_id, s.caller_agent_id, s.scenario_id, s.scenario_text,
  s.acceptance_criteria, s.tool_mode, s.surface, s.voice_path, s.mode, s.max_turns, s.turn_count, s.page_url, s.conversation_id, s.ended_reason,
  s.error, s.screenshot is not null as has_screenshot, s.created_at, s.completed_at, c.evaluation_status, c.criteria_results,
  s.blocked_requests`;
const SIM_FROM = (db: Db) => db`from simulations s left join conversations c on c.id = s.conversation_id`;

const toRecord = (r: SimRow): SimulationRecord => ({
  id: r.id, orgId: r.org_id, kind: r.kind, status: r.status, agentId: r.agent_id, callerAgentId: r.caller_agent_id,
  scenarioId: r.scenario_id, scenarioText: r.scenario_text, criteria: r.acceptance_criteria, toolMode: r.tool_mode,
  surface: r.surface, voicePath: r.voice_path, mode: r.mode, maxTurns: r.max_turns, turnCount: r.turn_count, pageUrl: r.page_url,
  conversationId: r.conversation_id, endedReason: r.ended_reason, error: r.error, hasScreenshot: r.has_screenshot,
  createdAt: r.created_at, completedAt: r.completed_at,
  evaluated: r.evaluation_status === 'completed', criteriaResults: r.criteria_results ?? [], blockedRequests: r.blocked_requests,
});

/** The API shape of a run, with its transcript. */
export function toSimulation(r: SimulationRecord, messages: TranscriptMessage[]): Simulation {
  const counted = r.criteriaResults.filter((c) => c.verdict !== 'not_applicable');
  return {
    id: r.id, kind: r.kind, status: r.status, opponent_widget_id: r.agentId, widget_id: r.callerAgentId, scenario_id: r.scenarioId,
    scenario_text: r.scenarioText, acceptance_criteria: r.criteria, tool_mode: r.toolMode, surface: r.surface,
    voice_path: r.voicePath, mode: r.mode, max_turns: r.maxTurns, turn_count: r.turnCount,
    page_url: r.pageUrl, conversation_id: r.conversationId, ended_reason: r.endedReason,
    evaluation_status: r.evaluated ? 'completed' : 'pending',
    criteria_results: r.criteriaResults.map((c) => ({ criterion: c.criterion, verdict: c.verdict, reason: c.reason })),
    // `not_applicable` does not count against the run; a run with nothing judged (no acceptance criteria) passed nothing (issue 43).
    passed: r.evaluated && counted.length > 0 ? counted.every((c) => c.verdict === 'pass') : null,
    error: r.error, messages, has_screenshot: r.hasScreenshot, blocked_requests: r.blockedRequests,
    created_at: r.createdAt.toISOString(), completed_at: r.completedAt?.toISOString() ?? null,
  };
}

export interface NewSimulation {
  orgId: string; kind: 'turns' | 'web'; agentId: string; callerAgentId: string | null; scenarioId: string | null; scenarioText: string;
  criteria: string[]; toolMode: Simulation['tool_mode']; surface: Simulation['surface']; mode: Simulation['mode']; maxTurns: number;
  /** Phone runs: `twiml` when the agent has an active voice number, else `text`; null for web runs. */
  voicePath: Simulation['voice_path']; pageUrl: string | null; conversationId: string | null;
}

export async function insertSimulation(db: Db, input: NewSimulation): Promise<string> {
  const id = newId();
  await db`insert into simulations ${db({
    id, org_id: input.orgId, kind: input.kind, agent_id: input.agentId, caller_agent_id: input.callerAgentId, scenario_id: input.scenarioId,
    scenario_text: input.scenarioText, acceptance_criteria: input.criteria, tool_mode: input.toolMode, surface: input.surface, voice_path: input.voicePath,
    mode: input.mode, max_turns: input.maxTurns, page_url: input.pageUrl, conversation_id: input.conversationId,
  })}`;
  return id;
}

/** A run by id within an organization (the API), or by id alone (workflows' activities, `orgId` null). */
export async function findSimulation(db: Db, orgId: string | null, id: string, opts: { forUpdate?: boolean } = {}): Promise<SimulationRecord | null> {
  const org = orgId ? db`and s.org_id = ${orgId}` : db``;
  const lock = opts.forUpdate ? db`for update of s` : db``;
  const [row] = await db<SimRow[]>`${SIM_SELECT(db)} ${SIM_FROM(db)} where s.id = ${id} ${org} ${lock}`;
  return row ? toRecord(row) : null;
}

export async function listSimulations(db: Db, orgId: string, q: { limit: number; offset: number; widget_id?: string | undefined; status?: SimulationStatus | undefined }): Promise<{ data: SimulationRecord[]; total: number }> {
  const agent = q.widget_id ? db`and (s.agent_id = ${q.widget_id} or s.caller_agent_id = ${q.widget_id})` : db``;
  const status = q.status ? db`and s.status = ${q.status}` : db``;
  return listPage(db, {
    ...q, columns: db`s.id, s.org_id, s.kind, s.status, s.agent_id, s.caller_agent_id, s.scenario_id, s.scenario_text,
      s.acceptance_criteria, s.tool_mode, s.surface, s.voice_path, s.mode, s.max_turns, s.turn_count, s.page_url, s.conversation_id, s.ended_reason,
      s.error, s.screenshot is not null as has_screenshot, s.created_at, s.completed_at, c.evaluation_status, c.criteria_results,
  s.blocked_requests`,
    from: db`${SIM_FROM(db)} where s.org_id = ${orgId} ${agent} ${status}`, order: db`s.created_at desc, s.id desc`,
  }, toRecord);
}

/** The played turn `turn`, when it is already stored: its message ids and whether the caller was done. */
export async function findTurn(db: Db, simulationId: string, turn: number): Promise<{ messageIds: string[]; callerDone: boolean } | null> {
  const [row] = await db<{ message_ids: string[]; caller_done: boolean }[]>`select message_ids, caller_done from simulation_turns
    where simulation_id = ${simulationId} and turn = ${turn}`;
  return row ? { messageIds: row.message_ids, callerDone: row.caller_done } : null;
}

/** Records a played turn and counts it, in the caller's transaction (with the turn's messages). */
export async function recordSimulationTurn(db: Db, simulationId: string, turn: number, messageIds: string[], callerDone: boolean): Promise<void> {
  await db`insert into simulation_turns (simulation_id, turn, message_ids, caller_done) values (${simulationId}, ${turn}, ${messageIds}, ${callerDone})`;
  await db`update simulations set turn_count = greatest(turn_count, ${turn}) where id = ${simulationId}`;
}

/** Ends a running run; a run already ended keeps its end (false). */
export async function finishSimulation(db: Db, id: string, end: {
  status: Exclude<SimulationStatus, 'running'>; endedReason: NonNullable<Simulation['ended_reason']>; error?: string | null;
}): Promise<boolean> {
  const rows = await db`update simulations set status = ${end.status}, ended_reason = ${end.endedReason}, error = ${end.error ?? null},
    completed_at = now() where id = ${id} and status = 'running' returning id`;
  return rows.length > 0;
}

/** A web run's conversation (started by the real widget): flagged simulated and kept with the run. */
export async function adoptWebConversation(db: Db, id: string, agentId: string, conversationId: string): Promise<void> {
  await db`update conversations set is_simulated = true where id = ${conversationId} and agent_id = ${agentId}`;
  await db`update simulations set conversation_id = ${conversationId} where id = ${id}`;
}

export async function setSimulationTurnCount(db: Db, id: string, turns: number): Promise<void> {
  await db`update simulations set turn_count = ${turns} where id = ${id}`;
}

export async function storeScreenshot(db: Db, id: string, png: Buffer): Promise<void> {
  await db`update simulations set screenshot = ${png} where id = ${id}`;
}

/** What the run's browser was refused, by origin and reason (replaces what was stored). */
export async function storeBlockedRequests(db: Db, id: string, blocked: BlockedRequest[]): Promise<void> {
  await db`update simulations set blocked_requests = ${db.json(blocked as never)} where id = ${id}`;
}

export async function findScreenshot(db: Db, orgId: string, id: string): Promise<Buffer | null | undefined> {
  const [row] = await db<{ screenshot: Buffer | null }[]>`select screenshot from simulations where id = ${id} and org_id = ${orgId}`;
  return row ? row.screenshot : undefined;
}

/** Deletes the run (its turns go with it); answers its conversation id, or undefined when absent. */
export async function deleteSimulation(db: Db, orgId: string, id: string): Promise<{ conversationId: string | null } | undefined> {
  const [row] = await db<{ conversation_id: string | null }[]>`delete from simulations where id = ${id} and org_id = ${orgId} returning conversation_id`;
  return row ? { conversationId: row.conversation_id } : undefined;
}

/** The scenario criteria a simulated conversation is evaluated with, beside its agent's own. */
export async function simulationCriteriaOf(db: Db, conversationId: string): Promise<string[]> {
  const [row] = await db<{ acceptance_criteria: string[] }[]>`select acceptance_criteria from simulations where conversation_id = ${conversationId}`;
  return row?.acceptance_criteria ?? [];
}

/** Runs where the agent is under test or the caller, still running: their workflows stop when it is deleted. */
export async function deleteSimulationsOfAgent(db: Db, agentId: string): Promise<{ id: string; kind: 'turns' | 'web'; status: SimulationStatus }[]> {
  return db<{ id: string; kind: 'turns' | 'web'; status: SimulationStatus }[]>`delete from simulations
    where agent_id = ${agentId} or caller_agent_id = ${agentId} returning id, kind, status`;
}
