import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Worker } from '@temporalio/worker';
import { eventually, startTestService, workflowBundle, type TestService } from './helpers.ts';
import { keyWith, newAgent, newOrg, type Api } from './support/orgs.ts';
import { startChatCompletionsServer } from './fixtures/chat-completions-server.ts';
import { playSimulationTurn } from '../src/simulations/turns.ts';
import { createOfflineRuntime } from '../src/runtime/offline.ts';
import { createLogger } from '../src/logger.ts';
import { createSecretBox, loadSecretsKey } from '../src/crypto/secret-box.ts';

const R = '/api/v1/rest';
let svc: TestService;
beforeAll(async () => { svc = await startTestService(); });
afterAll(async () => { await svc?.stop(); });

/** An agent that knows its refund policy and delivery (training notes) and asks for an email. */
async function testedAgent(api: Api, name = 'Front desk') {
  const agent = await newAgent(api, name);
  const patched = await api.patch(`${R}/agents/${agent.id}`, {
    acceptance_criteria: ['The agent explains the refund policy'],
    data_schema: [{ name: 'email', type: 'email', required: true, description: 'Visitor email' }],
  });
  expect(patched.status, patched.text).toBe(200);
  for (const note of [
    { question: 'What is your refund policy?', answer: 'Refunds are accepted within 30 days of purchase.' },
    { question: 'Do you offer delivery?', answer: 'Delivery takes 3 business days anywhere in France.' },
  ]) expect((await api.post(`${R}/agents/${agent.id}/training-notes`, note)).status).toBe(201);
  return agent;
}

const SCENARIO = 'Ask about the refund policy and delivery. My name is Ana Ruiz and my email is ana@example.com.';

async function stepToEnd(api: Api, id: string, limit = 20) {
  const steps = [];
  for (let i = 0; i < limit; i++) {
    const res = await api.post(`${R}/simulations/${id}/step`, {});
    expect(res.status, res.text).toBe(200);
    steps.push(res.body);
    if (res.body.done) break;
  }
  return steps;
}

const countRows = async () => (await svc.sql<{ n: number }[]>`select (select count(*) from simulations)::int + (select count(*) from simulation_scenarios)::int as n`)[0]!.n;

describe('scenarios', () => {
  it('full CRUD; PATCH {} changes nothing; bad input changes nothing; another organization sees 404', async () => {
    const { api } = await newOrg(svc);
    const made = await api.post(`${R}/simulation-scenarios`, { name: 'Hours', prompt: 'Ask about opening hours', acceptance_criteria: 'The agent gives the hours' });
    expect(made.status, made.text).toBe(201);
    expect(made.headers.get('location')).toBe(`${R}/simulation-scenarios/${made.body.id}`);
    expect(made.body).toMatchObject({ name: 'Hours', prompt: 'Ask about opening hours', acceptance_criteria: 'The agent gives the hours' });
    expect(made.body.created_at).toMatch(/Z$/);
    const same = await api.patch(`${R}/simulation-scenarios/${made.body.id}`, {});
    expect(same.status).toBe(200);
    expect(same.body).toEqual(made.body);
    const renamed = await api.patch(`${R}/simulation-scenarios/${made.body.id}`, { name: 'Opening hours' });
    expect(renamed.body.name).toBe('Opening hours');
    expect((await api.get(`${R}/simulation-scenarios/${made.body.id}`)).body.name).toBe('Opening hours');
    const list = await api.get(`${R}/simulation-scenarios`);
    expect(list.body).toMatchObject({ total: 1, limit: 50, offset: 0 });

    const before = await countRows();
    for (const bad of [{}, { name: 'x', prompt: 'y' }, { name: '', prompt: 'y', acceptance_criteria: '' }, { name: 'x', prompt: 'y', acceptance_criteria: '', extra: 1 }, { name: 5, prompt: 'y', acceptance_criteria: '' }]) {
      const res = await api.post(`${R}/simulation-scenarios`, bad);
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.body.code).toBe('validation_error');
    }
    expect((await api.patch(`${R}/simulation-scenarios/${made.body.id}`, { prompt: '' })).status).toBe(400);
    expect(await countRows()).toBe(before);
    expect((await api.get(`${R}/simulation-scenarios/${made.body.id}`)).body.name).toBe('Opening hours');

    const other = await newOrg(svc);
    expect((await other.api.get(`${R}/simulation-scenarios/${made.body.id}`)).status).toBe(404);
    expect((await other.api.patch(`${R}/simulation-scenarios/${made.body.id}`, { name: 'x' })).status).toBe(404);
    expect((await other.api.delete(`${R}/simulation-scenarios/${made.body.id}`)).status).toBe(404);
    expect((await api.delete(`${R}/simulation-scenarios/${made.body.id}`)).status).toBe(204);
    expect((await api.get(`${R}/simulation-scenarios/${made.body.id}`)).status).toBe(404);
  });
});

describe('runs', () => {
  it('a scenario written as prose yields all its asks; a run with no acceptance criteria reports passed: null (issue 43)', async () => {
    const { api } = await newOrg(svc);
    const agent = await newAgent(api, 'No criteria');
    const prose = "You are Mia, a customer who bought a lawn mower last week. You'd like to know how long delivery takes to Lyon, "
      + "and you're also curious whether they offer refunds on opened items. Finally, ask for the store's opening hours.";
    const made = await api.post(`${R}/simulations`, { opponent_widget_id: agent.id, scenario_text: prose, mode: 'auto', max_turns: 10 });
    expect(made.status, made.text).toBe(201);
    expect(made.body.acceptance_criteria).toEqual([]);
    const evaluated = await eventually(async () => {
      const res = await api.get(`${R}/simulations/${made.body.id}`);
      return res.body.evaluation_status === 'completed' ? res.body : null;
    }, 60_000);
    const asked = evaluated.messages.filter((m: any) => m.role === 'visitor').map((m: any) => m.text);
    expect(asked.slice(0, 4)).toEqual(['Hello! Can you tell me how long delivery takes to Lyon?', 'Can you tell me whether you offer refunds on opened items?',
      'Can you tell me about your opening hours?', 'Goodbye, and thank you: that is everything I needed.']);
    expect(evaluated).toMatchObject({ status: 'completed', ended_reason: 'goal_met', criteria_results: [], passed: null });
  });

  it('steps to completion within 20 steps, stored as a simulated conversation, evaluated with the scenario\'s criteria', async () => {
    const { api } = await newOrg(svc);
    const agent = await testedAgent(api);
    const scenario = (await api.post(`${R}/simulation-scenarios`, {
      name: 'Hours and refunds', prompt: SCENARIO, acceptance_criteria: '- The agent asks for the visitor email\n- The agent mentions refunds',
    })).body;
    const made = await api.post(`${R}/simulations`, { opponent_widget_id: agent.id, scenario_id: scenario.id });
    expect(made.status, made.text).toBe(201);
    const run = made.body;
    expect(run).toMatchObject({ status: 'running', kind: 'turns', opponent_widget_id: agent.id, widget_id: null, scenario_id: scenario.id,
      scenario_text: SCENARIO, tool_mode: 'mock', surface: 'web', mode: 'manual', max_turns: 20, turn_count: 0, passed: null,
      acceptance_criteria: ['The agent asks for the visitor email', 'The agent mentions refunds'] });
    expect(run.messages.map((m: any) => m.role)).toEqual(['agent']);

    const steps = await stepToEnd(api, run.id);
    expect(steps.at(-1).done).toBe(true);
    expect(steps.length).toBeLessThanOrEqual(20);
    expect(steps[0].turns[0]).toMatchObject({ role: 'visitor', text: 'Hello! Can you tell me about your refund policy?' });
    expect(steps[0].turns[1].role).toBe('agent');
    expect(steps[0].turns[1].text).toMatch(/within 30 days/);
    const done = steps.at(-1).simulation;
    expect(done.status).toBe('completed');
    expect(done.ended_reason).toBe('goal_met');
    const texts = done.messages.map((m: any) => `${m.role}: ${m.text}`);
    expect(texts.some((t: string) => t === 'visitor: My email is ana@example.com.')).toBe(true);
    expect(texts).toContain('visitor: Can you tell me about delivery?');
    expect(texts.some((t: string) => /3 business days/.test(t) && t.startsWith('agent'))).toBe(true);
    // Printed for the note: the transcript of an offline run.
    console.log(`offline transcript of ${run.id}:\n${texts.join('\n')}`);

    const again = await api.post(`${R}/simulations/${run.id}/step`, {});
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('invalid_state');

    const evaluated = await eventually(async () => {
      const res = await api.get(`${R}/simulations/${run.id}`);
      return res.body.evaluation_status === 'completed' ? res.body : null;
    }, 60_000);
    const criteria = evaluated.criteria_results.map((c: any) => c.criterion);
    expect(criteria).toEqual(expect.arrayContaining(['The agent explains the refund policy', 'The agent asks for the visitor email', 'The agent mentions refunds']));
    expect(typeof evaluated.passed).toBe('boolean');
    expect(evaluated.passed).toBe(evaluated.criteria_results.every((c: any) => c.verdict !== 'fail'));

    // The conversation is an ordinary one, simulated: only under simulated=1.
    const conv = await api.get(`${R}/conversations/${run.conversation_id}`);
    expect(conv.status).toBe(200);
    expect(conv.body.is_simulated).toBe(true);
    expect(conv.body.status).toBe('ended');
    const ids = async (q: string) => (await api.get(`${R}/conversations${q}`)).body.data.map((c: any) => c.id);
    expect(await ids('')).not.toContain(run.conversation_id);
    expect(await ids('?simulated=1')).toContain(run.conversation_id);

    // Its workflow replays on the current code (and is the recorded fixture).
    const handle = svc.temporal.workflow.getHandle(`simulation:${run.id}`);
    expect(await handle.result()).toEqual({ status: 'completed', turns: steps.length });
    const description = await handle.describe();
    expect(description.typedSearchAttributes.getAll().map((p) => [p.key.name, p.value])).toEqual(expect.arrayContaining([
      ['AgentId', agent.id], ['CallerAgentId', 'builtin'],
    ]));
    const results = Worker.runReplayHistories({ workflowBundle: await workflowBundle() }, [{ workflowId: handle.workflowId, history: await handle.fetchHistory() }]);
    for await (const r of results) expect(r.error).toBeUndefined();
    if (process.env.RECORD_HISTORIES === '1') {
      const { stdout } = await promisify(execFile)(inject('cliPath'), ['workflow', 'show', '--workflow-id', handle.workflowId,
        '--address', inject('temporalAddress'), '--output', 'json'], { maxBuffer: 64 * 1024 * 1024 });
      await writeFile(fileURLToPath(new URL('./fixtures/histories/simulation.json', import.meta.url)), stdout);
    }
  }, 120_000);

  it('the same scenario and agent give the same transcript (offline)', async () => {
    const { api } = await newOrg(svc);
    const agent = await testedAgent(api);
    const transcript = async () => {
      const run = (await api.post(`${R}/simulations`, { opponent_widget_id: agent.id, scenario_text: SCENARIO, mode: 'auto' })).body;
      const done = await eventually(async () => {
        const res = await api.get(`${R}/simulations/${run.id}`);
        return res.body.status === 'completed' ? res.body : null;
      }, 60_000);
      return done.messages.map((m: any) => `${m.role}: ${m.text}`);
    };
    const first = await transcript();
    expect(first.length).toBeGreaterThan(4);
    expect(await transcript()).toEqual(first);
  }, 120_000);

  it('two steps sent at once are both played, one after the other', async () => {
    const { api } = await newOrg(svc);
    const agent = await testedAgent(api);
    const run = (await api.post(`${R}/simulations`, { opponent_widget_id: agent.id, scenario_text: SCENARIO })).body;
    const [a, b] = await Promise.all([api.post(`${R}/simulations/${run.id}/step`, {}), api.post(`${R}/simulations/${run.id}/step`, {})]);
    expect([a.status, b.status]).toEqual([200, 200]);
    const turnIds = [...a.body.turns, ...b.body.turns].map((m: any) => m.id);
    expect(new Set(turnIds).size).toBe(turnIds.length);
    const now = (await api.get(`${R}/simulations/${run.id}`)).body;
    expect(now.turn_count).toBe(2);
    // The greeting, then two caller turns in order, each answered: the agent asked for an email, which the caller gave.
    expect(now.messages.map((m: any) => m.role)).toEqual(['agent', 'visitor', 'agent', 'visitor', 'agent']);
    expect(now.messages.filter((m: any) => m.role === 'visitor').map((m: any) => m.text)).toEqual([
      'Hello! Can you tell me about your refund policy?', 'My email is ana@example.com.',
    ]);
  }, 60_000);

  it('cancel, then step: 409; rerun copies the configuration; delete removes the run and its conversation', async () => {
    const { api } = await newOrg(svc);
    const agent = await testedAgent(api);
    const run = (await api.post(`${R}/simulations`, { opponent_widget_id: agent.id, scenario_text: SCENARIO, surface: 'phone', tool_mode: 'sandbox', max_turns: 3 })).body;
    expect(run).toMatchObject({ surface: 'phone', voice_path: 'text', tool_mode: 'sandbox', max_turns: 3 });
    expect((await api.post(`${R}/simulations/${run.id}/step`, {})).body.turns[0].role).toBe('caller');
    const canceled = await api.post(`${R}/simulations/${run.id}/cancel`, {});
    expect(canceled.status, canceled.text).toBe(200);
    expect(canceled.body).toMatchObject({ status: 'canceled', ended_reason: 'canceled' });
    const step = await api.post(`${R}/simulations/${run.id}/step`, {});
    expect(step.status).toBe(409);
    expect(step.body.code).toBe('invalid_state');
    expect((await api.post(`${R}/simulations/${run.id}/cancel`, {})).status).toBe(409);

    const rerun = await api.post(`${R}/simulations/${run.id}/rerun`, {});
    expect(rerun.status, rerun.text).toBe(201);
    expect(rerun.body.id).not.toBe(run.id);
    expect(rerun.body).toMatchObject({ status: 'running', opponent_widget_id: agent.id, scenario_text: SCENARIO, surface: 'phone', tool_mode: 'sandbox', max_turns: 3, turn_count: 0 });
    // max_turns: the run completes after 3 turns at most
    const steps = await stepToEnd(api, rerun.body.id, 5);
    expect(steps.length).toBeLessThanOrEqual(3);
    expect(steps.at(-1).simulation.status).toBe('completed');

    const other = await newOrg(svc);
    for (const [method, path] of [['get', ''], ['post', '/step'], ['post', '/cancel'], ['post', '/rerun'], ['delete', '']] as const) {
      const res = method === 'post' ? await other.api.post(`${R}/simulations/${run.id}${path}`, {}) : await other.api[method](`${R}/simulations/${run.id}${path}`);
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    // Deleting a running run terminates its workflow first.
    const running = (await api.post(`${R}/simulations`, { opponent_widget_id: agent.id, scenario_text: SCENARIO })).body;
    expect((await api.delete(`${R}/simulations/${running.id}`)).status).toBe(204);
    expect((await api.get(`${R}/simulations/${running.id}`)).status).toBe(404);
    expect((await api.get(`${R}/conversations/${running.conversation_id}`)).status).toBe(404);
    expect((await svc.temporal.workflow.getHandle(`simulation:${running.id}`).describe()).status.name).toBe('TERMINATED');
  }, 90_000);

  it('refuses bad input with a 400 naming the field, creating nothing', async () => {
    const { api } = await newOrg(svc);
    const agent = await testedAgent(api);
    const foreign = await newAgent((await newOrg(svc)).api, 'Foreign');
    const before = await countRows();
    const cases: [Record<string, unknown>, string][] = [
      [{ opponent_widget_id: agent.id }, 'scenario_text'],
      [{ opponent_widget_id: agent.id, scenario_text: 'x', scenario_id: agent.id }, 'scenario_text'],
      [{ opponent_widget_id: agent.id, scenario_text: 'x', tool_mode: 'real' }, 'tool_mode'],
      [{ opponent_widget_id: agent.id, scenario_text: 'x', surface: 'sms' }, 'surface'],
      [{ opponent_widget_id: agent.id, scenario_text: 'x', max_turns: 0 }, 'max_turns'],
      [{ opponent_widget_id: agent.id, scenario_text: 'x', surprise: 1 }, 'surprise'],
      [{ opponent_widget_id: foreign.id, scenario_text: 'x' }, 'opponent_widget_id'],
      [{ opponent_widget_id: agent.id, scenario_text: 'x', widget_id: foreign.id }, 'widget_id'],
      [{ opponent_widget_id: agent.id, scenario_text: 'x', widget_id: agent.id }, 'widget_id'],
      [{ opponent_widget_id: agent.id, scenario_id: agent.id }, 'scenario_id'],
    ];
    for (const [body, field] of cases) {
      const res = await api.post(`${R}/simulations`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors.map((e: any) => e.field), JSON.stringify(body)).toContain(field);
    }
    expect((await api.post(`${R}/simulations/web`, { widget_id: agent.id, scenario_text: 'x' })).body.errors[0].field).toBe('page_url');
    expect(await countRows()).toBe(before);
    expect((await api.get(`${R}/simulations?status=paused`)).status).toBe(400);
  });

  it('lists runs by widget_id (under test or caller) and status', async () => {
    const { api } = await newOrg(svc);
    const tested = await testedAgent(api, 'Tested');
    const callerAgent = await testedAgent(api, 'Caller');
    const bystander = await testedAgent(api, 'Bystander');
    const byAgent = (await api.post(`${R}/simulations`, { opponent_widget_id: tested.id, widget_id: callerAgent.id, scenario_text: 'Talk', max_turns: 2 })).body;
    expect(byAgent.widget_id).toBe(callerAgent.id);
    const steps = await stepToEnd(api, byAgent.id, 3);
    expect(steps.length).toBe(2);
    expect(steps.at(-1).simulation).toMatchObject({ status: 'completed', ended_reason: 'max_turns', turn_count: 2 });
    const running = (await api.post(`${R}/simulations`, { opponent_widget_id: bystander.id, scenario_text: 'Talk' })).body;
    const ids = async (q: string) => (await api.get(`${R}/simulations${q}`)).body.data.map((s: any) => s.id);
    expect(await ids(`?widget_id=${tested.id}`)).toEqual([byAgent.id]);
    expect(await ids(`?widget_id=${callerAgent.id}`)).toEqual([byAgent.id]);
    expect(await ids(`?widget_id=${bystander.id}`)).toEqual([running.id]);
    expect(await ids('?status=running')).toEqual([running.id]);
    expect(await ids('?status=completed')).toEqual([byAgent.id]);
    expect(await ids('')).toEqual([running.id, byAgent.id]);

    // Reading needs simulations.read, running needs simulations.write.
    const reader = await keyWith(svc, api, ['simulations.read']);
    expect((await reader.api.get(`${R}/simulations`)).status).toBe(200);
    const refused = await reader.api.post(`${R}/simulations`, { opponent_widget_id: tested.id, scenario_text: 'Talk' });
    expect(refused.status).toBe(403);
    expect(refused.body.required_permission).toBe('simulations.write');
    expect((await reader.api.post(`${R}/simulations/${running.id}/step`, {})).status).toBe(403);

    // Deleting an agent removes the runs it took part in, and stops those still running.
    expect((await api.delete(`${R}/agents/${bystander.id}`)).status).toBe(204);
    expect((await api.get(`${R}/simulations/${running.id}`)).status).toBe(404);
    await eventually(async () => (await svc.temporal.workflow.getHandle(`simulation:${running.id}`).describe()).status.name === 'TERMINATED');
    const wf = await svc.temporal.workflow.getHandle(`simulation:${byAgent.id}`).describe();
    expect(wf.typedSearchAttributes.getAll().find((p) => p.key.name === 'CallerAgentId')?.value).toBe(callerAgent.id);
  }, 60_000);
});

describe('with a model configured', () => {
  it('the model plays the built-in caller, told its goal, and hangs up with a goodbye', async () => {
    const llm = await startChatCompletionsServer({
      fallback: (request) => {
        const system = String(request.body.messages[0]?.content ?? '');
        const last = String(request.body.messages.at(-1)?.content ?? '');
        if (system.includes('You are a person contacting a business')) {
          return { content: /30 days/.test(last) ? 'Great. Goodbye!' : 'What is your refund policy?' };
        }
        if (request.body.response_format) return { content: '{}' };
        return { content: 'Refunds are accepted within 30 days.' };
      },
    });
    const withModel = await startTestService({ LLM_BASE_URL: llm.baseUrl, LLM_API_KEY: 'sk-test-key' });
    try {
      const { api } = await newOrg(withModel);
      const agent = await newAgent(api, 'Modelled');
      const run = (await api.post(`${R}/simulations`, { opponent_widget_id: agent.id, scenario_text: 'You want to know the refund policy.' })).body;
      const steps = await stepToEnd(api, run.id, 5);
      expect(steps.length).toBe(2);
      expect(steps.at(-1).simulation).toMatchObject({ status: 'completed', ended_reason: 'goal_met' });
      expect(steps.flatMap((s) => s.turns).map((m: any) => `${m.role}: ${m.text}`)).toEqual([
        'visitor: What is your refund policy?', 'agent: Refunds are accepted within 30 days.',
        'visitor: Great. Goodbye!', 'agent: Refunds are accepted within 30 days.',
      ]);
      const callerPrompt = llm.requests.find((r) => String(r.body.messages[0]?.content).includes('You are a person contacting'));
      expect(String(callerPrompt?.body.messages[0].content)).toContain('You want to know the refund policy.');
    } finally {
      await withModel.stop();
      await llm.close();
    }
  }, 90_000);
});

describe('worker restart', () => {
  it('a turn played again (its activity retried after a worker died past its commit) is answered from the stored turn, never played twice', async () => {
    const { api } = await newOrg(svc);
    const agent = await testedAgent(api);
    const run = (await api.post(`${R}/simulations`, { opponent_widget_id: agent.id, scenario_text: SCENARIO })).body;
    const deps = { sql: svc.sql, temporal: svc.temporal, config: svc.config, log: createLogger('silent'), runtime: createOfflineRuntime(), secrets: createSecretBox(await loadSecretsKey(svc.config)) };
    // The activity as a lost worker left it: turn 1 played and committed, its completion never reported.
    const [a, b] = await Promise.all([playSimulationTurn(deps, { simulationId: run.id, turn: 1 }), playSimulationTurn(deps, { simulationId: run.id, turn: 1 })]);
    expect(b).toEqual(a);
    expect(a.messageIds.length).toBeGreaterThanOrEqual(2);
    // The workflow's own turn 1 (the retried activity) answers the same messages.
    const step = await api.post(`${R}/simulations/${run.id}/step`, {});
    expect(step.body.turns.map((m: any) => m.id)).toEqual(a.messageIds);
    expect(step.body.simulation.turn_count).toBe(1);
    expect(step.body.simulation.messages.length).toBe(1 + a.messageIds.length);
    const next = await api.post(`${R}/simulations/${run.id}/step`, {});
    expect(next.body.simulation.turn_count).toBe(2);
    expect(next.body.turns[0].text).toBe('My email is ana@example.com.');
  }, 60_000);

  it('a worker restart in the middle of a turn-based run loses no turn', async () => {
    // API and worker apart, on task queues of their own: the worker is stopped and another takes over.
    const api1 = await startTestService({}, { worker: false });
    const prefix = api1.config.TASK_QUEUE_PREFIX;
    let worker = await startTestService({ TASK_QUEUE_PREFIX: prefix });
    try {
      const { api } = await newOrg(api1).then((o) => ({ api: o.api }));
      const agent = await testedAgent(api);
      const run = (await api.post(`${R}/simulations`, { opponent_widget_id: agent.id, scenario_text: SCENARIO })).body;
      expect((await api.post(`${R}/simulations/${run.id}/step`, {})).status).toBe(200);
      // A step sent while no worker runs waits for the next one.
      await worker.stop();
      const pending = api.post(`${R}/simulations/${run.id}/step`, {});
      worker = await startTestService({ TASK_QUEUE_PREFIX: prefix });
      const second = await pending;
      expect(second.status, second.text).toBe(200);
      const rest = await stepToEnd(api, run.id);
      expect(rest.at(-1).done).toBe(true);
      const turns = await api1.sql<{ turn: number }[]>`select turn from simulation_turns where simulation_id = ${run.id} order by turn`;
      expect(turns.map((t) => t.turn)).toEqual(turns.map((_, i) => i + 1));
      const final = rest.at(-1).simulation;
      expect(final.turn_count).toBe(turns.length);
      const visitorTurns = final.messages.filter((m: any) => m.role === 'visitor');
      expect(visitorTurns.length).toBe(turns.length);
    } finally {
      await worker.stop();
      await api1.stop();
    }
  }, 120_000);
});
