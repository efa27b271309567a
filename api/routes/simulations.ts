import { Type } from '@sinclair/typebox';
import { notFound } from '../../src/errors.ts';
import { deleteScenario, findScenario, findScreenshot, insertScenario, listScenarios, updateScenario } from '../../src/db/simulations.ts';
import { IdParams, PageQuery } from '../../src/schemas/common.ts';
import {
  ScenarioCreateSchema, ScenarioListSchema, ScenarioPatchSchema, ScenarioSchema, SimulationCreateSchema, SimulationListQuery,
  SimulationListSchema, SimulationSchema, SimulationStepSchema, StepResultSchema, WebSimulationCreateSchema,
} from '../../src/schemas/simulations.ts';
import {
  cancelSimulation, createSimulation, createWebSimulation, deleteSimulationRun, getSimulation, listSimulationViews, rerunSimulation,
  resolveRunInput, stepSimulation,
} from '../../src/simulations/runs.ts';
import { pageReply, route, type RouteFamily } from '../routing.ts';
import { publicOrigin } from '../public-origin.ts';

const BASE = '/api/v1/rest';
const created = <T extends { id: string }>(body: T) => ({ status: 201 as const, body, headers: { Location: `${BASE}/simulations/${body.id}` } });
const NoBody = SimulationStepSchema;

export const simulationsFamily: RouteFamily = {
  base: BASE,
  tag: 'Simulations',
  order: 210,
  description: 'Test an agent before customers reach it: a scripted caller (or another agent, or a visitor in a real browser) talks with it; '
    + 'each run is stored as a simulated conversation and evaluated against the agent\'s criteria and its scenario\'s.',
  routes: [
    route({
      method: 'GET', path: '/simulation-scenarios', operationId: 'list_simulation_scenarios', summary: 'List scenario templates, newest first',
      permissions: ['simulations.read'], query: PageQuery,
      responses: { 200: { description: 'A page of scenarios', schema: ScenarioListSchema } },
      async handler({ query, principal, deps }) {
        return pageReply(await listScenarios(deps.sql, principal.orgId, query), query);
      },
    }),
    route({
      method: 'POST', path: '/simulation-scenarios', operationId: 'create_simulation_scenario', summary: 'Create a scenario template',
      permissions: ['simulations.write'], body: ScenarioCreateSchema,
      responses: { 201: { description: 'The new scenario', schema: ScenarioSchema } },
      async handler({ body, principal, deps }) {
        const scenario = await insertScenario(deps.sql, principal.orgId, body);
        return { status: 201, body: scenario, headers: { Location: `${BASE}/simulation-scenarios/${scenario.id}` } };
      },
    }),
    route({
      method: 'GET', path: '/simulation-scenarios/:id', operationId: 'get_simulation_scenario', summary: 'Get a scenario',
      permissions: ['simulations.read'], params: IdParams,
      responses: { 200: { description: 'The scenario', schema: ScenarioSchema } },
      async handler({ params, principal, deps }) {
        const scenario = await findScenario(deps.sql, principal.orgId, params.id);
        if (!scenario) throw notFound('scenario');
        return { status: 200, body: scenario };
      },
    }),
    route({
      method: 'PATCH', path: '/simulation-scenarios/:id', operationId: 'update_simulation_scenario', summary: 'Update a scenario',
      description: 'Any subset of `name`, `prompt`, `acceptance_criteria`; `{}` changes nothing. Runs already made keep what they were made with.',
      permissions: ['simulations.write'], params: IdParams, body: ScenarioPatchSchema,
      responses: { 200: { description: 'The scenario', schema: ScenarioSchema } },
      async handler({ params, body, principal, deps }) {
        const scenario = await updateScenario(deps.sql, principal.orgId, params.id, body);
        if (!scenario) throw notFound('scenario');
        return { status: 200, body: scenario };
      },
    }),
    route({
      method: 'DELETE', path: '/simulation-scenarios/:id', operationId: 'delete_simulation_scenario', summary: 'Delete a scenario',
      description: 'Runs made from it keep their scenario text and criteria; their `scenario_id` becomes null.',
      permissions: ['simulations.write'], params: IdParams,
      responses: { 204: { description: 'Deleted' } },
      async handler({ params, principal, deps }) {
        if (!(await deleteScenario(deps.sql, principal.orgId, params.id))) throw notFound('scenario');
        return { status: 204 };
      },
    }),
    route({
      method: 'GET', path: '/simulations', operationId: 'list_simulations', summary: 'List simulation runs, newest first',
      description: '`widget_id`: runs where that agent is under test or the caller; `status`: running, completed, canceled or failed.',
      permissions: ['simulations.read'], query: SimulationListQuery,
      responses: { 200: { description: 'A page of runs', schema: SimulationListSchema } },
      async handler({ query, principal, deps }) {
        return pageReply(await listSimulationViews(deps, principal.orgId, query), query);
      },
    }),
    route({
      method: 'POST', path: '/simulations', operationId: 'create_simulation', summary: 'Create a turn-based simulation run',
      description: 'The run starts `running` with the agent\'s greeting, as the workflow `simulation:<id>`. Give `scenario_text` or '
        + '`scenario_id` (whose criteria join the agent\'s when the run is evaluated). Drive it with `step` (mode `manual`), or let it '
        + 'play every turn (`auto`). It completes when the caller\'s goal is met or after `max_turns`.',
      permissions: ['simulations.write'], body: SimulationCreateSchema,
      responses: { 201: { description: 'The new run', schema: SimulationSchema } },
      async handler({ body, principal, deps }) {
        return created(await createSimulation(deps, await resolveRunInput(deps, principal.orgId, body)));
      },
    }),
    route({
      method: 'POST', path: '/simulations/web', operationId: 'run_web_simulation', summary: 'Run a web simulation in a real browser',
      description: 'Opens `page_url` (default: the agent\'s site) in headless Chromium, injects the embed snippet when the page lacks it, '
        + 'and lets the scripted visitor type into the real widget. Synchronous, up to 5 minutes; answers the finished run. A page that '
        + 'cannot be opened gives a `failed` run with its `error`.',
      permissions: ['simulations.write'], body: WebSimulationCreateSchema,
      responses: { 201: { description: 'The finished run', schema: SimulationSchema } },
      async handler({ body, principal, deps, ctx }) {
        // Where the page loads the embed script from when it lacks the snippet.
        return created(await createWebSimulation(deps, principal.orgId, body, publicOrigin(ctx)));
      },
    }),
    route({
      method: 'GET', path: '/simulations/:id', operationId: 'get_simulation', summary: 'Get a run, with its transcript',
      permissions: ['simulations.read'], params: IdParams,
      responses: { 200: { description: 'The run', schema: SimulationSchema } },
      async handler({ params, principal, deps }) {
        return { status: 200, body: await getSimulation(deps, principal.orgId, params.id) };
      },
    }),
    route({
      method: 'POST', path: '/simulations/:id/step', operationId: 'step_simulation', summary: 'Advance a run by one turn',
      description: 'A Temporal Update on `simulation:<id>`: one caller turn and one agent turn, answered once both are stored. '
        + 'Steps sent at once are played one after the other. A run that has ended is 409 `invalid_state`.',
      permissions: ['simulations.write'], params: IdParams, body: NoBody,
      responses: { 200: { description: 'The run, the messages this step added, and whether the run has ended', schema: StepResultSchema } },
      async handler({ params, principal, deps }) {
        return { status: 200, body: await stepSimulation(deps, principal.orgId, params.id) };
      },
    }),
    route({
      method: 'POST', path: '/simulations/:id/cancel', operationId: 'cancel_simulation', summary: 'Cancel a running run',
      permissions: ['simulations.write'], params: IdParams, body: NoBody,
      responses: { 200: { description: 'The run, `canceled`', schema: SimulationSchema } },
      async handler({ params, principal, deps }) {
        return { status: 200, body: await cancelSimulation(deps, principal.orgId, params.id) };
      },
    }),
    route({
      method: 'POST', path: '/simulations/:id/rerun', operationId: 'rerun_simulation', summary: 'Run the same configuration again',
      permissions: ['simulations.write'], params: IdParams, body: NoBody,
      responses: { 201: { description: 'The new run', schema: SimulationSchema } },
      async handler({ params, principal, deps }) {
        return created(await rerunSimulation(deps, principal.orgId, params.id));
      },
    }),
    route({
      method: 'GET', path: '/simulations/:id/screenshot', operationId: 'get_simulation_screenshot', summary: 'The finished chat of a web simulation (PNG)',
      permissions: ['simulations.read'], params: IdParams,
      responses: { 200: { description: 'A PNG image', mediaType: 'image/png', schema: Type.Unsafe<Buffer>({ type: 'string', contentMediaType: 'image/png' }) } },
      async handler({ params, principal, deps }) {
        const png = await findScreenshot(deps.sql, principal.orgId, params.id);
        if (!png) throw notFound(png === undefined ? 'simulation' : 'screenshot');
        return { status: 200, body: png, headers: { 'Content-Type': 'image/png', 'Cache-Control': 'private, max-age=60' } };
      },
    }),
    route({
      method: 'DELETE', path: '/simulations/:id', operationId: 'delete_simulation', summary: 'Delete a run and its conversation',
      description: 'A run still in progress has its workflow terminated first.',
      permissions: ['simulations.write'], params: IdParams,
      responses: { 204: { description: 'Deleted' } },
      async handler({ params, principal, deps }) {
        await deleteSimulationRun(deps, principal.orgId, params.id);
        return { status: 204 };
      },
    }),
  ],
};
