import { Type, type Static } from '@sinclair/typebox';
import { ListEnvelope, Nullable, PageQueryProps, StringEnum, Timestamp, Uuid } from './common.ts';
import { TranscriptMessageSchema, VERDICTS } from './conversations.ts';

/** What a run can be: `running` until the caller is done, cancelled, or the run fails. */
export const SIMULATION_STATUSES = ['running', 'completed', 'canceled', 'failed'] as const;
export type SimulationStatus = (typeof SIMULATION_STATUSES)[number];

/** How the agent's tools are answered during a run (see the contract's "Agent tools"). */
export const TOOL_MODES = ['mock', 'sandbox', 'live'] as const;

export const SIMULATION_SURFACES = ['web', 'phone'] as const;

/** How a phone run's turns run: through the voice webhook's TwiML turns, or as text. */
export const VOICE_PATHS = ['text', 'twiml', 'stream'] as const;

/** `manual`: the API drives each turn with `step`; `auto`: the run plays every turn by itself. */
export const SIMULATION_MODES = ['manual', 'auto'] as const;

/** Which caller plays: the built-in scripted one, another agent, or a visitor typing into the real widget. */
export const SIMULATION_KINDS = ['turns', 'web'] as const;

export const DEFAULT_MAX_TURNS = 20;
const MaxTurns = Type.Integer({ minimum: 1, maximum: 100, default: DEFAULT_MAX_TURNS, description: 'Caller turns after which the run completes (1 to 100, default 20)' });
const ScenarioText = Type.String({ minLength: 1, maxLength: 20_000, pattern: '\\S', description: 'The caller\'s goal: what to ask, what to answer with (name, email...), in plain words' });

// ---- Scenarios ----

const ScenarioName = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'Display name, 1 to 200 characters' });
const ScenarioPrompt = Type.String({ minLength: 1, maxLength: 20_000, pattern: '\\S', description: 'The caller\'s goal, used as `scenario_text` by runs made from the scenario' });
const ScenarioCriteria = Type.String({ maxLength: 20_000, description: 'Acceptance criteria, one per line; they join the agent\'s own when a run of the scenario is evaluated' });

export const ScenarioSchema = Type.Object({
  id: Uuid,
  name: Type.String(),
  prompt: Type.String(),
  acceptance_criteria: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'SimulationScenario', additionalProperties: false, description: 'A reusable caller goal with its acceptance criteria' });
export type Scenario = Static<typeof ScenarioSchema>;

export const ScenarioCreateSchema = Type.Object({
  name: ScenarioName,
  prompt: ScenarioPrompt,
  acceptance_criteria: ScenarioCriteria,
}, { $id: 'SimulationScenarioCreate', additionalProperties: false });
export type ScenarioCreate = Static<typeof ScenarioCreateSchema>;

export const ScenarioPatchSchema = Type.Object({
  name: Type.Optional(ScenarioName),
  prompt: Type.Optional(ScenarioPrompt),
  acceptance_criteria: Type.Optional(ScenarioCriteria),
}, { $id: 'SimulationScenarioPatch', additionalProperties: false });
export type ScenarioPatch = Static<typeof ScenarioPatchSchema>;

export const ScenarioListSchema = ListEnvelope(ScenarioSchema, 'SimulationScenarioList');

// ---- Runs ----

const SimCriterionSchema = Type.Object({
  criterion: Type.String(),
  verdict: StringEnum(VERDICTS),
  reason: Type.String(),
});

/** Why the simulation browser refused a request (issue 40, D12). */
export const BLOCKED_REQUEST_REASONS = ['private_network_target', 'scheme_not_allowed', 'path_not_allowed'] as const;
export const MAX_BLOCKED_REQUESTS = 50;

export const BlockedRequestSchema = Type.Object({
  origin: Type.String({ description: 'Scheme, host and port asked for (`http://10.0.0.5:8080`); the path is not kept' }),
  reason: StringEnum(BLOCKED_REQUEST_REASONS, {
    description: '`private_network_target`: the host is or resolves to a loopback, private, link-local or other non-public address '
      + '(unless ALLOW_PRIVATE_NETWORK_TARGETS or OUTBOUND_ALLOWED_HOSTS); `scheme_not_allowed`: neither http(s), data: nor blob: '
      + '(file:, ftp:, chrome:...); `path_not_allowed`: on this service\'s own origin, anything but the embed script and the public widget API',
  }),
  count: Type.Integer({ minimum: 1, description: 'Requests refused for this origin and reason' }),
}, { $id: 'BlockedRequest', additionalProperties: false });
export type BlockedRequest = Static<typeof BlockedRequestSchema>;

export const SimulationSchema = Type.Object({
  id: Uuid,
  kind: StringEnum(SIMULATION_KINDS, { description: '`turns` (POST /simulations) or `web` (POST /simulations/web, a real browser)' }),
  status: StringEnum(SIMULATION_STATUSES),
  opponent_widget_id: Type.String({ ...Uuid, description: 'The agent under test' }),
  widget_id: Nullable(Type.String({ ...Uuid, description: 'The agent playing the caller; null for the built-in caller' })),
  scenario_id: Nullable(Type.String({ ...Uuid, description: 'The scenario the run was made from' })),
  scenario_text: Type.String(),
  acceptance_criteria: Type.Array(Type.String(), { description: 'The scenario\'s criteria, evaluated with the agent\'s own' }),
  tool_mode: StringEnum(TOOL_MODES),
  surface: StringEnum(SIMULATION_SURFACES),
  voice_path: Nullable(StringEnum(VOICE_PATHS, {
    description: 'For `phone`: how the turns ran. `twiml`: through the voice webhook\'s TwiML turns (the agent had an active voice number '
      + 'when the run was made; a transfer ends the run, no call placed); `stream`: the agent\'s calls stream (`voice_mode: stream`, '
      + 'its number\'s or its own): the same turns spoken by the sandbox\'s streamed caller, the caller\'s lines synthesized and '
      + 'recognized as the agent hears them, the agent\'s audio, in its voice, transcribed back into the transcript; '
      + '`text`: the same turns as text; null for `web`',
  })),
  mode: StringEnum(SIMULATION_MODES),
  max_turns: Type.Integer(),
  turn_count: Type.Integer({ minimum: 0, description: 'Caller turns played so far' }),
  page_url: Nullable(Type.String({ description: 'Web simulations: the page the browser opened' })),
  conversation_id: Nullable(Type.String({ ...Uuid, description: 'The stored (simulated) conversation; read it through /conversations' })),
  ended_reason: Nullable(StringEnum(['goal_met', 'max_turns', 'canceled', 'error'] as const)),
  evaluation_status: StringEnum(['pending', 'completed'] as const),
  criteria_results: Type.Array(SimCriterionSchema, { description: 'The conversation\'s verdicts, once evaluated' }),
  passed: Nullable(Type.Boolean({ description: 'true when no verdict is `fail` and at least one is `pass`, false when one is `fail` (`not_applicable` counts for neither); null until evaluated, and null when no criterion was judged (a run with no acceptance criteria)' })),
  error: Nullable(Type.String({ description: 'Why a run failed' })),
  messages: Type.Array(TranscriptMessageSchema, { description: 'The transcript, oldest first' }),
  has_screenshot: Type.Boolean({ description: 'Web simulations: GET /simulations/:id/screenshot serves the finished chat' }),
  blocked_requests: Type.Array(BlockedRequestSchema, {
    maxItems: MAX_BLOCKED_REQUESTS,
    description: 'Web simulations: what the browser was not allowed to reach (redirects, frames, images, scripts, requests of the page), '
      + `by origin and reason, at most ${MAX_BLOCKED_REQUESTS} origins; empty for other runs`,
  }),
  created_at: Timestamp,
  completed_at: Nullable(Timestamp),
}, { $id: 'Simulation', additionalProperties: false });
export type Simulation = Static<typeof SimulationSchema>;

export const SimulationCreateSchema = Type.Object({
  opponent_widget_id: Type.String({ ...Uuid, description: 'The agent under test (its id)' }),
  scenario_text: Type.Optional(ScenarioText),
  scenario_id: Type.Optional(Type.String({ ...Uuid, description: 'A scenario of the organization: its prompt is the scenario text, its criteria join the agent\'s' })),
  widget_id: Type.Optional(Nullable(Type.String({ ...Uuid, description: 'Another agent to play the caller; omitted: the built-in caller' }))),
  tool_mode: Type.Optional(StringEnum(TOOL_MODES, { default: 'mock', description: 'mock (default), sandbox or live' })),
  surface: Type.Optional(StringEnum(SIMULATION_SURFACES, { default: 'web', description: 'web (default) or phone' })),
  mode: Type.Optional(StringEnum(SIMULATION_MODES, { default: 'manual', description: '`manual` (default): each turn is a `step`; `auto`: the run plays all its turns' })),
  max_turns: Type.Optional(MaxTurns),
}, { $id: 'SimulationCreate', additionalProperties: false, description: 'Exactly one of `scenario_text` and `scenario_id`' });
export type SimulationCreate = Static<typeof SimulationCreateSchema>;

export const WebSimulationCreateSchema = Type.Object({
  widget_id: Type.String({ ...Uuid, description: 'The agent under test (its id)' }),
  scenario_text: ScenarioText,
  page_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'The page to open (default: the agent\'s site)' })),
  max_turns: Type.Optional(MaxTurns),
}, { $id: 'WebSimulationCreate', additionalProperties: false });
export type WebSimulationCreate = Static<typeof WebSimulationCreateSchema>;

export const SimulationStepSchema = Type.Object({}, { $id: 'SimulationStep', additionalProperties: false });

export const StepResultSchema = Type.Object({
  simulation: SimulationSchema,
  turns: Type.Array(TranscriptMessageSchema, { description: 'The messages this step added: the caller\'s, then the agent\'s' }),
  done: Type.Boolean({ description: 'The run has ended; further steps are 409 invalid_state' }),
}, { $id: 'SimulationStepResult', additionalProperties: false });

export const SimulationListQuery = Type.Object({
  ...PageQueryProps,
  widget_id: Type.Optional(Type.String({ ...Uuid, description: 'Runs where this agent is under test or the caller' })),
  status: Type.Optional(StringEnum(SIMULATION_STATUSES)),
}, { additionalProperties: false });
export type SimulationListQueryT = Static<typeof SimulationListQuery>;

export const SimulationListSchema = ListEnvelope(SimulationSchema, 'SimulationList');
