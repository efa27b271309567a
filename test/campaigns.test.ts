import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { eventually, startTestService, type TestService } from './helpers.ts';
import { keyWith, newAgent, newOrg } from './support/orgs.ts';
import { expectFieldError, expectProblem } from './support/problems.ts';
import {
  CAMPAIGNS, callsOf, campaignReaches, carrierCalled, createCampaign, eventsOf, orgWithNumber, peakConcurrency, startedCampaign,
} from './support/campaigns.ts';
import { workflowIds } from '../src/temporal/ids.ts';
import { advanceCall, callIsBlocked, endCallRow, insertQueuedCalls, markCampaignStarted } from '../src/db/campaigns.ts';
import { holdUntilCommit } from '../src/db/commit-gate.ts';
import { nextCalls } from '../src/campaigns/calls.ts';
import { newId } from '../src/ids.ts';

// Short calls (answered at once, 1 s of talk) and long ones (10 minutes: hung up, capped or canceled by the tests).
let svc: TestService;
let long: TestService;
beforeAll(async () => {
  [svc, long] = await Promise.all([
    startTestService({ SANDBOX_RING_SECONDS: 0, SANDBOX_CALL_SECONDS: 1 }),
    startTestService({ SANDBOX_RING_SECONDS: 0, SANDBOX_CALL_SECONDS: 600 }),
  ]);
});
afterAll(async () => { await Promise.all([svc?.stop(), long?.stop()]); });

const C = CAMPAIGNS;
const FAILS = '+15005550001';
const BUSY = '+15005550002';
const NO_ANSWER = '+15005550003';
/** Numbers the sandbox answers (a non-geographic +1 500 code: their zone is the campaign's). */
const answered = (n: number, from = 100) => Array.from({ length: n }, (_, i) => `+1500555${String(from + i).padStart(4, '0')}`);

/**
 * A campaign's start as `startCampaign` makes it, held open: it takes the campaign's commit gate, queues one call and
 * marks the campaign running, then waits for `end()` to commit or roll back. `holding` resolves once all that is
 * written (and rejects if the transaction failed first); `end` may be called more than once.
 */
function heldStart(orgId: string, campaignId: string, fromNumber: string, outcome: 'commit' | 'rollback') {
  let end!: () => void;
  const ended = new Promise<void>((resolve) => { end = resolve; });
  let held!: () => void;
  let failed!: (err: unknown) => void;
  const holding = new Promise<void>((resolve, reject) => { held = resolve; failed = reject; });
  const done = svc.sql.begin(async (tx) => {
    await holdUntilCommit(tx, workflowIds.campaign(campaignId));
    await insertQueuedCalls(tx, orgId, campaignId, [{ id: newId(), position: 1, to_number: answered(1, 300)[0]!, contact_id: null, timezone: 'UTC' }]);
    await markCampaignStarted(tx, campaignId, fromNumber);
    held();
    await ended;
    if (outcome === 'rollback') throw new Error('rolled back on purpose');
  }).then(() => undefined, (err: Error) => { if (err.message !== 'rolled back on purpose') throw err; });
  done.then(() => failed(new Error('the start ended before it held the gate')), failed);
  return { holding, end, done };
}

/** Whether a session waits for the shared lock of this workflow id's commit gate (a read held by the start's transaction). */
async function waitingAtGate(workflowId: string): Promise<boolean> {
  const rows = await svc.sql`select 1 from pg_locks
    where locktype = 'advisory' and mode = 'ShareLock' and not granted and objsubid = 1
      and database = (select oid from pg_database where datname = current_database())
      and classid::bigint = (hashtextextended(${workflowId}, 0) >> 32) & 4294967295
      and objid::bigint = hashtextextended(${workflowId}, 0) & 4294967295`;
  return rows.length > 0;
}

/**
 * An ended call lasts the whole seconds from its answer to its end (`floor`, in the statement that ends it). The API's
 * instants are milliseconds, so the expected count is taken within a millisecond of each side.
 */
function expectWholeSecondsSinceAnswer(call: Record<string, any>): void {
  const elapsed = (Date.parse(call.ended_at!) - Date.parse(call.answered_at!)) / 1000;
  expect(Number.isInteger(call.duration_seconds)).toBe(true);
  expect(call.duration_seconds).toBeGreaterThanOrEqual(Math.max(0, Math.floor(elapsed - 0.001)));
  expect(call.duration_seconds).toBeLessThanOrEqual(Math.max(0, Math.floor(elapsed + 0.001)));
}

describe('campaigns API', () => {
  it('creates in draft with defaults; numbers deduplicated; get, list, PATCH in draft; Location', async () => {
    const { api, agent } = await orgWithNumber(svc);
    const res = await api.post(C, { name: 'Spring', widget_id: agent.id, to_numbers: ['+14155550123', '+14155550124', '+14155550123'], max_duration_seconds: 300 });
    expect(res.status, res.text).toBe(201);
    expect(res.headers.get('location')).toBe(`${C}/${res.body.id}`);
    expect(res.body).toMatchObject({
      name: 'Spring', widget_id: agent.id, status: 'draft', to_numbers: ['+14155550123', '+14155550124'], contact_ids: [],
      max_duration_seconds: 300, concurrency: 5, calling_window: null, retry: null, timezone: null, from_number: null, started_at: null,
    });
    expect((await api.get(`${C}/${res.body.id}`)).body).toEqual(res.body);
    const patched = await api.patch(`${C}/${res.body.id}`, {
      concurrency: 50, calling_window: { start: '09:00', end: '20:00', days: ['mon', 'fri'] }, retry: { max_attempts: 2, backoff_seconds: 60, on: ['busy'] },
      timezone: 'Europe/Paris', max_duration_seconds: 14_400,
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ concurrency: 50, timezone: 'Europe/Paris', max_duration_seconds: 14_400, calling_window: { start: '09:00', end: '20:00', days: ['mon', 'fri'] } });
    expect((await api.patch(`${C}/${res.body.id}`, {})).body).toEqual(patched.body);
    const list = await api.get(`${C}?widget_id=${agent.id}`);
    expect(list.body).toMatchObject({ total: 1, limit: 50, offset: 0 });
    expect(list.body.data[0].id).toBe(res.body.id);
  });

  it('refuses bad bodies with 400 and changes nothing', async () => {
    const { api, agent } = await orgWithNumber(svc);
    const base = { name: 'X', widget_id: agent.id, to_numbers: ['+14155550123'], max_duration_seconds: 60 };
    expectFieldError(await api.post(C, { ...base, to_numbers: ['4155550123'] }), 'to_numbers[0]');
    expectFieldError(await api.post(C, { ...base, to_numbers: [] }), 'to_numbers');
    expectFieldError(await api.post(C, { ...base, to_numbers: undefined }), 'to_numbers', 'required');
    expectFieldError(await api.post(C, { ...base, contact_ids: [randomUUID()] }), 'contact_ids', 'exclusive');
    expectFieldError(await api.post(C, { ...base, max_duration_seconds: 0 }), 'max_duration_seconds');
    expectFieldError(await api.post(C, { ...base, max_duration_seconds: 14_401 }), 'max_duration_seconds');
    expectFieldError(await api.post(C, { ...base, max_duration_seconds: undefined }), 'max_duration_seconds');
    expectFieldError(await api.post(C, { ...base, concurrency: 0 }), 'concurrency');
    expectFieldError(await api.post(C, { ...base, concurrency: 51 }), 'concurrency');
    expectFieldError(await api.post(C, { ...base, calling_window: { start: '20:00', end: '09:00' } }), 'calling_window.end', 'invalid_window');
    expectFieldError(await api.post(C, { ...base, calling_window: { start: '9:00', end: '20:00' } }), 'calling_window.start');
    expectFieldError(await api.post(C, { ...base, calling_window: { start: '09:00', end: '20:00', days: ['mon', 'mon'] } }), 'calling_window.days');
    expectFieldError(await api.post(C, { ...base, retry: { max_attempts: 2, backoff_seconds: 5, on: ['failed'] } }), 'retry.on[0]');
    expectFieldError(await api.post(C, { ...base, timezone: 'Mars/Olympus' }), 'timezone', 'invalid_timezone');
    expectFieldError(await api.post(C, { ...base, widget_id: randomUUID() }), 'widget_id', 'unknown_agent');
    expectFieldError(await api.post(C, { ...base, extra: 1 }), 'extra');
    const noPhone = await api.post('/api/v1/rest/contacts', { email_lower: 'no-phone@example.com' });
    expectFieldError(await api.post(C, { ...base, to_numbers: undefined, contact_ids: [randomUUID()] }), 'contact_ids[0]', 'unknown_contact');
    expectFieldError(await api.post(C, { ...base, to_numbers: undefined, contact_ids: [noPhone.body.id] }), 'contact_ids[0]', 'contact_without_phone');
    expect((await api.get(C)).body.total).toBe(0);
  });

  it('starts only with an active number (409 no_active_number), then PATCH and delete are 409 until it ends; start twice is 409', async () => {
    const { api } = await newOrg(svc);
    const agent = await newAgent(api, 'No number');
    const campaign = await createCampaign(api, { widget_id: agent.id, to_numbers: answered(1) });
    expectProblem(await api.post(`${C}/${campaign.id}/start`), 409, 'no_active_number');
    expect((await api.get(`${C}/${campaign.id}`)).body.status).toBe('draft');
    expect((await api.get(`${C}/${campaign.id}/calls`)).body.total).toBe(0);
    const bought = await api.post('/api/v1/rest/phone-numbers', { widget_id: agent.id });
    const started = await api.post(`${C}/${campaign.id}/start`);
    expect(started.status, started.text).toBe(200);
    expect(started.body).toMatchObject({ status: 'running', from_number: bought.body.phone_number });
    expect(started.body.started_at).not.toBeNull();
    expectProblem(await api.post(`${C}/${campaign.id}/start`), 409, 'invalid_state');
    expectProblem(await api.patch(`${C}/${campaign.id}`, { name: 'late' }), 409, 'invalid_state');
    // Bad input is still 400 first.
    expectFieldError(await api.patch(`${C}/${campaign.id}`, { concurrency: 99 }), 'concurrency');
    await campaignReaches(api, campaign.id, 'completed');
    expectProblem(await api.post(`${C}/${campaign.id}/start`), 409, 'invalid_state');
    expectProblem(await api.post(`${C}/${campaign.id}/cancel`), 409, 'invalid_state');
    expect((await api.delete(`${C}/${campaign.id}`)).status).toBe(204);
    expectProblem(await api.get(`${C}/${campaign.id}`), 404, 'not_found');
    // A draft deletes at once.
    const draft = await createCampaign(api, { widget_id: agent.id, to_numbers: answered(1) });
    expect((await api.delete(`${C}/${draft.id}`)).status).toBe(204);
  });

  it('needs campaigns.read / campaigns.write; another organization sees 404', async () => {
    const { api, agent } = await orgWithNumber(svc);
    const campaign = await createCampaign(api, { widget_id: agent.id, to_numbers: answered(1) });
    const reader = await keyWith(svc, api, ['campaigns.read']);
    expect((await reader.api.get(`${C}/${campaign.id}`)).status).toBe(200);
    expectProblem(await reader.api.post(`${C}/${campaign.id}/start`), 403, 'missing_permission');
    expectProblem(await reader.api.post(C, { name: 'x', widget_id: agent.id, to_numbers: answered(1), max_duration_seconds: 5 }), 403, 'missing_permission');
    const stranger = await newOrg(svc);
    expectProblem(await stranger.api.get(`${C}/${campaign.id}`), 404, 'not_found');
    expectProblem(await stranger.api.post(`${C}/${campaign.id}/start`), 404, 'not_found');
    expectProblem(await stranger.api.get(`${C}/${campaign.id}/calls`), 404, 'not_found');
    expectProblem(await stranger.api.delete(`${C}/${campaign.id}`), 404, 'not_found');
    expectProblem(await api.get(`${C}/not-a-uuid`), 404, 'not_found');
    expectFieldError(await stranger.api.post(C, { name: 'x', widget_id: agent.id, to_numbers: answered(1), max_duration_seconds: 5 }), 'widget_id');
    expect((await api.get(`${C}/${campaign.id}`)).body.status).toBe('draft');
  });
});

describe('campaign calls', () => {
  it('the contract\'s carrier table through a campaign; answered calls hold a phone conversation; events', async () => {
    const { api, agent, orgId } = await orgWithNumber(svc);
    const [ok] = answered(1, 500);
    const campaign = await startedCampaign(api, { widget_id: agent.id, to_numbers: [FAILS, BUSY, NO_ANSWER, ok, ok], max_duration_seconds: 60 });
    const done = await campaignReaches(api, campaign.id, 'completed');
    expect(done.completed_at).not.toBeNull();
    const calls = await callsOf(api, campaign.id);
    expect(calls.map((c) => [c.to_number, c.status, c.ended_reason])).toEqual([
      [FAILS, 'failed', 'error'], [BUSY, 'busy', 'carrier'], [NO_ANSWER, 'no_answer', 'carrier'], [ok, 'completed', 'carrier'],
    ]);
    for (const call of calls) {
      expect(call.call_sid).toMatch(/^CA/);
      expect(call.started_at).not.toBeNull();
      expect(call.ended_at).not.toBeNull();
      expect(call.attempt).toBe(1);
      expect(await carrierCalled(svc, call.id)).toBe(true);
    }
    const [failed, busy, noAnswer, completed] = calls;
    for (const never of [failed!, busy!, noAnswer!]) expect(never).toMatchObject({ answered_at: null, duration_seconds: null, conversation_id: null });
    expect(completed!.answered_at).not.toBeNull();
    expectWholeSecondsSinceAnswer(completed!);
    expect((await api.get(`${C}/${campaign.id}/calls/${completed!.id}`)).body).toEqual(completed);
    // The answered call's conversation: surface phone, the agent against the scripted callee.
    const conversation = await eventually(async () => {
      const res = await api.get(`/api/v1/rest/conversations/${completed!.conversation_id}`);
      return res.body.status === 'ended' && res.body.outcome ? res.body : null;
    }, 60_000);
    expect(conversation.surface).toBe('phone');
    expect(conversation.widget_id).toBe(agent.id);
    expect(conversation.messages.filter((m: any) => m.role === 'caller').length).toBeGreaterThanOrEqual(1);
    expect(conversation.messages.filter((m: any) => m.role === 'agent').length).toBeGreaterThanOrEqual(2);
    const events = await eventually(async () => {
      const all = await eventsOf(svc, orgId);
      return all.some((e) => e.type === 'conversation.evaluated') ? all : null;
    }, 60_000);
    const types = events.map((e) => e.type);
    expect(types.filter((t) => t === 'campaign.started')).toHaveLength(1);
    expect(types.filter((t) => t === 'campaign.completed')).toHaveLength(1);
    expect(types.filter((t) => t === 'campaign_call.ended')).toHaveLength(4);
    expect(types.indexOf('campaign.started')).toBeLessThan(types.indexOf('campaign_call.ended'));
    expect(types.lastIndexOf('campaign_call.ended')).toBeLessThan(types.indexOf('campaign.completed'));
    for (const t of ['conversation.started', 'conversation.ended', 'conversation.evaluated']) expect(types).toContain(t);
    expect(events.find((e) => e.type === 'campaign.completed')!.data.campaign).toMatchObject({ id: campaign.id, status: 'completed' });
    const endedCompleted = events.find((e) => e.type === 'campaign_call.ended' && e.data.call.id === completed!.id)!;
    expect(endedCompleted.data.call).toMatchObject({ status: 'completed', ended_reason: 'carrier', conversation_id: completed!.conversation_id });
    // The call's end, then its conversation's (one statement writes both: issue 48), then the evaluation.
    const at = (type: string) => events.findIndex((e) => e.type === type && (e.data.call ?? e.data.conversation).id === (type === 'campaign_call.ended' ? completed!.id : completed!.conversation_id));
    expect(at('campaign_call.ended')).toBeLessThan(at('conversation.ended'));
    expect(at('conversation.ended')).toBeLessThan(at('conversation.evaluated'));
    // The workflows carry the organization, agent and campaign.
    const parent = await svc.temporal.workflow.getHandle(workflowIds.campaign(campaign.id)).describe();
    const child = await svc.temporal.workflow.getHandle(workflowIds.campaignCall(completed!.id)).describe();
    for (const run of [parent, child]) {
      expect(run.searchAttributes).toMatchObject({ OrganizationId: [orgId], AgentId: [agent.id], CampaignId: [campaign.id] });
    }
    // What an operator reads in the Web UI (real-clients D11): each call says which campaign, which place, which number
    // (masked), and the campaign's run returns how its calls ended.
    expect(await child.staticSummary()).toBe(`Campaign '${campaign.name}': call 4 of 4 to ${ok!.slice(0, 2)}…${ok!.slice(-4)}`);
    const busyRun = await svc.temporal.workflow.getHandle(workflowIds.campaignCall(busy!.id)).describe();
    expect(await busyRun.staticSummary()).toBe(`Campaign '${campaign.name}': call 2 of 4 to +1…0002`);
    expect(await svc.temporal.workflow.getHandle(workflowIds.campaignCall(busy!.id)).result()).toMatchObject({ status: 'busy', ended_reason: 'carrier' });
    expect(await svc.temporal.workflow.getHandle(workflowIds.campaign(campaign.id)).result())
      .toEqual({ status: 'completed', calls: { busy: 1, completed: 1, failed: 1, no_answer: 1 } });
  });

  it('max_duration: a long call is cut off at the cap, completed/max_duration', async () => {
    const { api, agent } = await orgWithNumber(long);
    const campaign = await startedCampaign(api, { widget_id: agent.id, to_numbers: answered(1), max_duration_seconds: 2 });
    await campaignReaches(api, campaign.id, 'completed');
    const [call] = await callsOf(api, campaign.id);
    expect(call).toMatchObject({ status: 'completed', ended_reason: 'max_duration' });
    expect(call!.duration_seconds).toBeGreaterThanOrEqual(2);
    expect(call!.duration_seconds).toBeLessThan(600);
  });

  it('answered_at is the instant the workflow heard the answer, never later than now: the talk time runs from it', async () => {
    // The call's workflow passes its own instant, which its cap's timer runs from; the step that writes it may run later.
    const { api, agent, orgId } = await orgWithNumber(svc);
    // A campaign never started, with two calls queued by hand: no workflow moves them.
    const campaign = await createCampaign(api, { widget_id: agent.id, to_numbers: answered(2) });
    await insertQueuedCalls(svc.sql, orgId, campaign.id, answered(2).map((to_number, position) => ({ id: newId(), position, to_number, contact_id: null, timezone: 'UTC' })));
    const [heard, future] = await callsOf(api, campaign.id);
    const fiveSecondsAgo = new Date(Date.now() - 5000);
    const answeredCall = await advanceCall(svc.sql, heard!.id, ['queued'], 'in_progress', { answered: fiveSecondsAgo });
    expect(Date.parse(answeredCall!.answered_at!)).toBe(fiveSecondsAgo.getTime());
    const ended = await endCallRow(svc.sql, heard!.id, 'completed', 'max_duration');
    expect(ended!.duration_seconds).toBeGreaterThanOrEqual(5);
    // An instant ahead of the database's clock is not kept: answered now.
    const before = Date.now();
    const ahead = await advanceCall(svc.sql, future!.id, ['queued'], 'in_progress', { answered: new Date(before + 3_600_000) });
    expect(Date.parse(ahead!.answered_at!)).toBeLessThan(before + 60_000);
  });

  it('a turn of the queue read before the start commits waits for the start: then sees it started, or still a draft when it rolled back', async () => {
    // Every turn but the first reads the campaign without the commit gate (issue 48): a turn that reads a draft goes
    // through the gate, so a start whose transaction has not committed yet is waited for, as before.
    const { api, agent, orgId, number: bought } = await orgWithNumber(svc);
    const deps = { sql: svc.sql, config: svc.config, log: svc.log };
    for (const outcome of ['commit', 'rollback'] as const) {
      const campaign = await createCampaign(api, { widget_id: agent.id, to_numbers: answered(1, 300) });
      const start = heldStart(orgId, campaign.id, bought.phone_number as string, outcome);
      let turn: Promise<unknown> | undefined;
      try {
        // The turn is read only once the start holds the gate and has written `running` (not committed): it reads a
        // draft, whatever the load (read before the gate was taken, it passed the gate and the test waited in vain).
        await start.holding;
        turn = nextCalls(deps, { campaignId: campaign.id, exclude: [] });
        // This turn, held at this campaign's gate: it cannot have answered yet.
        await eventually(() => waitingAtGate(workflowIds.campaign(campaign.id)));
        start.end();
        await start.done;
        expect(await turn).toMatchObject(outcome === 'commit' ? { status: 'running', queued: 1, ready: [expect.any(String)] } : { status: 'draft', queued: 0, ready: [] });
      } finally {
        // Whatever failed above, the start's transaction ends, so nothing is left holding a connection or the gate.
        start.end();
        await start.done.catch(() => undefined);
        await turn?.catch(() => undefined);
      }
    }
  });

  it('hangup: queued → canceled, in flight → hung up; an ended call is 409; active=1 is exactly the calls in flight; cancel hangs up the rest', async () => {
    const { api, agent } = await orgWithNumber(long);
    const campaign = await startedCampaign(api, { widget_id: agent.id, to_numbers: answered(4), concurrency: 2 });
    const inFlight = await eventually(async () => {
      const res = await api.get(`${C}/${campaign.id}/calls?active=1`);
      return res.body.total === 2 && res.body.data.every((c: any) => c.status === 'in_progress') ? res.body.data : null;
    }, 60_000);
    expect(inFlight.map((c: any) => c.to_number)).toEqual(answered(2));
    const queued = await callsOf(api, campaign.id, '&status=queued');
    expect(queued.map((c) => c.to_number)).toEqual(answered(2, 102));

    const canceled = await api.post(`${C}/${campaign.id}/calls/${queued[1]!.id}/hangup`);
    expect(canceled.status, canceled.text).toBe(200);
    expect(canceled.body.action).toBe('canceled');
    expect(canceled.body.call).toMatchObject({ id: queued[1]!.id, status: 'canceled', ended_reason: 'canceled', started_at: null });
    expect(await carrierCalled(long, queued[1]!.id)).toBe(false);

    const hung = await api.post(`${C}/${campaign.id}/calls/${inFlight[0].id}/hangup`);
    expect(hung.status, hung.text).toBe(200);
    expect(hung.body.action).toBe('hung_up');
    expect(hung.body.call).toMatchObject({ status: 'completed', ended_reason: 'hangup' });
    expectWholeSecondsSinceAnswer(hung.body.call);
    expectProblem(await api.post(`${C}/${campaign.id}/calls/${inFlight[0].id}/hangup`), 409, 'invalid_state');
    expectProblem(await api.post(`${C}/${campaign.id}/calls/${queued[1]!.id}/hangup`), 409, 'invalid_state');
    expectProblem(await api.post(`${C}/${campaign.id}/calls/${randomUUID()}/hangup`), 404, 'not_found');

    // The freed slot takes the next queued call; the limit still holds.
    await eventually(async () => {
      const res = await api.get(`${C}/${campaign.id}/calls?active=1`);
      return res.body.total === 2 && res.body.data.some((c: any) => c.id === queued[0]!.id && c.status === 'in_progress');
    }, 60_000);
    // A running campaign's agent keeps its number.
    const numbers = await api.get(`/api/v1/rest/phone-numbers?widget_id=${agent.id}`);
    expectProblem(await api.post(`/api/v1/rest/phone-numbers/${numbers.body.data[0].id}/unassign`), 409, 'active_campaign');
    expectProblem(await api.delete(`${C}/${campaign.id}`), 409, 'invalid_state');

    const cancel = await api.post(`${C}/${campaign.id}/cancel`);
    expect(cancel.status).toBe(200);
    expect(cancel.body.status).toBe('canceled');
    const calls = await eventually(async () => {
      const all = await callsOf(api, campaign.id);
      return all.every((c) => c.ended_at) ? all : null;
    }, 60_000);
    expect(calls.map((c) => [c.status, c.ended_reason])).toEqual([
      ['completed', 'hangup'], ['completed', 'hangup'], ['completed', 'hangup'], ['canceled', 'canceled'],
    ]);
    expect(peakConcurrency(calls)).toBeLessThanOrEqual(2);
    expect((await api.get(`${C}/${campaign.id}`)).body.status).toBe('canceled');
    // The run says how it ended, and how its calls did (real-clients D11).
    expect(await long.temporal.workflow.getHandle(workflowIds.campaign(campaign.id)).result()).toEqual({ status: 'canceled', calls: { canceled: 1, completed: 3 } });
    // Not active any more: the number may go.
    expect((await api.post(`/api/v1/rest/phone-numbers/${numbers.body.data[0].id}/unassign`)).status).toBe(200);
  });

  it('concurrency is never above its limit; pause stops new calls, start resumes', async () => {
    const { api, agent } = await orgWithNumber(svc);
    const campaign = await startedCampaign(api, { widget_id: agent.id, to_numbers: answered(12, 200), concurrency: 3 });
    await eventually(async () => (await callsOf(api, campaign.id)).some((c) => c.ended_at), 60_000);
    const paused = await api.post(`${C}/${campaign.id}/pause`);
    expect(paused.body.status).toBe('paused');
    // Once the calls in flight have ended, nothing more starts while paused.
    const whilePaused = await eventually(async () => {
      const res = await api.get(`${C}/${campaign.id}/calls?active=1`);
      return res.body.total === 0 ? callsOf(api, campaign.id) : null;
    }, 60_000);
    const startedWhilePaused = whilePaused.filter((c) => c.started_at).length;
    expect(whilePaused.filter((c) => c.status === 'queued').length).toBeGreaterThan(0);
    expect((await api.get(`${C}/${campaign.id}/calls?active=1`)).body.total).toBe(0);
    expect((await callsOf(api, campaign.id)).filter((c) => c.started_at).length).toBe(startedWhilePaused);
    expect((await api.post(`${C}/${campaign.id}/start`)).body.status).toBe('running');
    await campaignReaches(api, campaign.id, 'completed');
    const calls = await callsOf(api, campaign.id);
    expect(calls.every((c) => c.status === 'completed' && c.ended_reason === 'carrier')).toBe(true);
    expect(peakConcurrency(calls)).toBeLessThanOrEqual(3);
  });

  it('a paused agent holds its running campaign: no new call is dialed until the agent is active again', async () => {
    const { api, agent } = await orgWithNumber(svc);
    const campaign = await startedCampaign(api, { widget_id: agent.id, to_numbers: answered(8, 500), concurrency: 2 });
    await eventually(async () => (await callsOf(api, campaign.id)).some((c) => c.ended_at), 60_000);
    expect((await api.patch(`/api/v1/rest/agents/${agent.id}`, { status: 'paused' })).body.status).toBe('paused');
    // Once the calls in flight have ended, nothing more starts while the agent is paused; the campaign stays running.
    const whilePaused = await eventually(async () => {
      const res = await api.get(`${C}/${campaign.id}/calls?active=1`);
      return res.body.total === 0 ? callsOf(api, campaign.id) : null;
    }, 60_000);
    const held = whilePaused.filter((c) => c.status === 'queued');
    expect(held.length).toBeGreaterThan(0);
    for (const call of held) expect(await carrierCalled(svc, call.id)).toBe(false);
    expect((await api.get(`${C}/${campaign.id}`)).body.status).toBe('running');
    expect((await callsOf(api, campaign.id)).filter((c) => c.started_at).length).toBe(whilePaused.filter((c) => c.started_at).length);
    // Resumed: the held calls are dialed, and the campaign completes.
    expect((await api.patch(`/api/v1/rest/agents/${agent.id}`, { status: 'active' })).body.status).toBe('active');
    await campaignReaches(api, campaign.id, 'completed');
    const calls = await callsOf(api, campaign.id);
    expect(calls.every((c) => c.status === 'completed' && c.ended_reason === 'carrier')).toBe(true);
  });

  it('deleting an agent with a running or paused campaign is 409 active_campaign and changes nothing; once canceled, it deletes', async () => {
    const { api, agent, orgId } = await orgWithNumber(long);
    const campaign = await startedCampaign(api, { widget_id: agent.id, to_numbers: answered(2, 600), concurrency: 1 });
    await eventually(async () => (await api.get(`${C}/${campaign.id}/calls?active=1`)).body.total === 1, 60_000);
    const before = await eventsOf(long, orgId);
    for (const status of ['running', 'paused']) {
      if (status === 'paused') expect((await api.post(`${C}/${campaign.id}/pause`)).body.status).toBe('paused');
      const refused = await api.delete(`/api/v1/rest/agents/${agent.id}`);
      expectProblem(refused, 409, 'active_campaign');
      expect(refused.body.detail).toMatch(/cancel it/);
      expectProblem(await api.delete(`/api/v1/widgets/${agent.public_key}`), 409, 'active_campaign');
      // Nothing changed: the agent, its number and its campaign are as they were, and no event was emitted.
      expect((await api.get(`/api/v1/rest/agents/${agent.id}`)).status).toBe(200);
      expect((await api.get(`/api/v1/rest/phone-numbers?widget_id=${agent.id}`)).body.data).toHaveLength(1);
      expect((await api.get(`${C}/${campaign.id}`)).body.status).toBe(status);
    }
    // No campaign ended and no call was canceled by the refused deletes (the call in flight may have started its conversation).
    const changed = (await eventsOf(long, orgId)).slice(before.length).map((e) => e.type);
    expect(changed.filter((t) => t !== 'conversation.started')).toEqual([]);
    expect((await api.post(`${C}/${campaign.id}/cancel`)).body.status).toBe('canceled');
    expect((await api.delete(`/api/v1/rest/agents/${agent.id}`)).status).toBe(204);
    expect((await api.get(`/api/v1/rest/agents/${agent.id}`)).status).toBe(404);
  });

  it('do-not-call, set before queueing and between queueing and dialing: canceled/blocked, never at the carrier', async () => {
    const { api, agent } = await orgWithNumber(long);
    const [first, second, third] = answered(3, 300);
    const before = await api.post('/api/v1/rest/contacts', { phone_e164: first, do_not_call: true });
    const later = await api.post('/api/v1/rest/contacts', { phone_e164: third });
    const campaign = await startedCampaign(api, { widget_id: agent.id, to_numbers: [first, second, third], concurrency: 1 });
    // Blocked when queued: ended at once.
    const [blocked] = await callsOf(api, campaign.id);
    expect(blocked).toMatchObject({ to_number: first, contact_id: null, status: 'canceled', ended_reason: 'blocked', started_at: null });
    // The second is in flight (one at a time); the third is queued, then flagged.
    const talking = await eventually(async () => (await api.get(`${C}/${campaign.id}/calls?active=1`)).body.data.find((c: any) => c.status === 'in_progress'), 60_000);
    expect(talking.to_number).toBe(second);
    expect((await api.patch(`/api/v1/rest/contacts/${later.body.id}`, { do_not_call: true })).status).toBe(200);
    expect((await api.post(`${C}/${campaign.id}/calls/${talking.id}/hangup`)).body.action).toBe('hung_up');
    await campaignReaches(api, campaign.id, 'completed');
    const calls = await callsOf(api, campaign.id);
    expect(calls.map((c) => [c.to_number, c.status, c.ended_reason])).toEqual([
      [first, 'canceled', 'blocked'], [second, 'completed', 'hangup'], [third, 'canceled', 'blocked'],
    ]);
    expect(await carrierCalled(long, calls[0]!.id)).toBe(false);
    expect(await carrierCalled(long, calls[2]!.id)).toBe(false);
    expect(before.status).toBe(201);
  });

  it('the do-not-call check of a dial that was not claimed just now: by number or by contact, in its own organization only', async () => {
    const mine = await newOrg(svc);
    const other = await newOrg(svc);
    const flagged = (await mine.api.post('/api/v1/rest/contacts', { phone_e164: '+14155550181', do_not_call: true })).body;
    const free = (await mine.api.post('/api/v1/rest/contacts', { phone_e164: '+14155550182' })).body;
    expect((await other.api.post('/api/v1/rest/contacts', { phone_e164: '+14155550183', do_not_call: true })).status).toBe(201);
    expect(await callIsBlocked(svc.sql, mine.orgId, { contact_id: null, to_number: '+14155550181' })).toBe(true);
    expect(await callIsBlocked(svc.sql, mine.orgId, { contact_id: flagged.id, to_number: '+14155550199' })).toBe(true);
    expect(await callIsBlocked(svc.sql, mine.orgId, { contact_id: free.id, to_number: '+14155550182' })).toBe(false);
    // Another organization's do-not-call contact does not block this one's call to the same number.
    expect(await callIsBlocked(svc.sql, mine.orgId, { contact_id: null, to_number: '+14155550183' })).toBe(false);
  });

  it('contacts: calls go to their numbers; do_not_call contacts are blocked; deleting one drops its undialed enrolments', async () => {
    const { api, agent } = await orgWithNumber(long);
    const contacts = await Promise.all(answered(4, 400).map(async (phone, i) =>
      (await api.post('/api/v1/rest/contacts', { phone_e164: phone, do_not_call: i === 1 })).body));
    const draft = await createCampaign(api, { widget_id: agent.id, contact_ids: contacts.map((c) => c.id), concurrency: 1 });
    expect((await api.delete(`/api/v1/rest/contacts/${contacts[3].id}`)).status).toBe(204);
    expect((await api.get(`${C}/${draft.id}`)).body.contact_ids).toEqual(contacts.slice(0, 3).map((c) => c.id));
    const extra = (await api.post('/api/v1/rest/contacts', { phone_e164: answered(1, 450)[0] })).body;
    expect((await api.patch(`${C}/${draft.id}`, { contact_ids: [...contacts.slice(0, 3).map((c) => c.id), extra.id] })).status).toBe(200);
    expect((await api.post(`${C}/${draft.id}/start`)).status).toBe(200);
    const talking = await eventually(async () => (await api.get(`${C}/${draft.id}/calls?active=1`)).body.data[0], 60_000);
    expect(talking.contact_id).toBe(contacts[0].id);
    // The last contact is still queued: deleting it removes that enrolment; the dialed call stays.
    expect((await api.delete(`/api/v1/rest/contacts/${extra.id}`)).status).toBe(204);
    expect((await api.post(`${C}/${draft.id}/calls/${talking.id}/hangup`)).body.action).toBe('hung_up');
    const next = await eventually(async () => (await api.get(`${C}/${draft.id}/calls?active=1`)).body.data.find((c: any) => c.status === 'in_progress'), 60_000);
    expect(next.contact_id).toBe(contacts[2].id);
    expect((await api.post(`${C}/${draft.id}/calls/${next.id}/hangup`)).body.action).toBe('hung_up');
    await campaignReaches(api, draft.id, 'completed');
    const done = await callsOf(api, draft.id);
    expect(done.map((c) => [c.contact_id, c.status, c.ended_reason])).toEqual([
      [contacts[0].id, 'completed', 'hangup'], [contacts[1].id, 'canceled', 'blocked'], [contacts[2].id, 'completed', 'hangup'],
    ]);
  }, 120_000);

  it('retries on busy: each attempt its own row, linked by previous_call_id, until max_attempts', async () => {
    const { api, agent } = await orgWithNumber(svc);
    const campaign = await startedCampaign(api, {
      widget_id: agent.id, to_numbers: [BUSY, NO_ANSWER], retry: { max_attempts: 3, backoff_seconds: 1, on: ['busy'] },
    });
    await campaignReaches(api, campaign.id, 'completed');
    const calls = await callsOf(api, campaign.id);
    const busy = calls.filter((c) => c.to_number === BUSY);
    expect(busy.map((c) => [c.attempt, c.status, c.ended_reason])).toEqual([[1, 'busy', 'carrier'], [2, 'busy', 'carrier'], [3, 'busy', 'carrier']]);
    expect(busy[0]!.previous_call_id).toBeNull();
    expect(busy[1]!.previous_call_id).toBe(busy[0]!.id);
    expect(busy[2]!.previous_call_id).toBe(busy[1]!.id);
    expect(Date.parse(busy[1]!.started_at) - Date.parse(busy[0]!.ended_at)).toBeGreaterThanOrEqual(900);
    // no_answer is not in `on`: one attempt.
    expect(calls.filter((c) => c.to_number === NO_ANSWER).map((c) => c.attempt)).toEqual([1]);
    const third = await svc.temporal.workflow.getHandle(workflowIds.campaignCall(busy[2]!.id)).describe();
    expect(await third.staticSummary()).toBe(`Campaign '${campaign.name}': call 1 of 2 to +1…0002 (attempt 3)`);
  });

  it('a calling window that closes mid-campaign: no call starts after it closes, the rest wait queued', async () => {
    const { api, agent } = await orgWithNumber(svc);
    // A window closing at the next whole minute at least 20 s away, in the campaign's zone (UTC; +1 500 numbers have no zone of their own).
    const now = new Date();
    const closes = new Date(Math.ceil((now.getTime() + 20_000) / 60_000) * 60_000);
    const hhmm = (d: Date) => d.toISOString().slice(11, 16);
    // A window from 00:00 that ends at midnight cannot be written: start just before the end instead (always inside today).
    const start = hhmm(new Date(Math.min(now.getTime() - 60_000, closes.getTime() - 120_000)));
    if (hhmm(closes) <= start || hhmm(closes) === '00:00') return; // around midnight UTC: the window cannot close today
    const campaign = await startedCampaign(api, {
      widget_id: agent.id, to_numbers: answered(100, 600), concurrency: 1, timezone: 'UTC', calling_window: { start, end: hhmm(closes) },
    });
    // After the close, the call in flight ends and nothing else starts.
    await eventually(async () => Date.now() > closes.getTime() + 3000, 120_000, 500);
    const calls = await eventually(async () => {
      const all = await callsOf(api, campaign.id);
      return all.every((c) => c.status === 'queued' || c.ended_at) ? all : null;
    }, 60_000);
    const dialed = calls.filter((c) => c.started_at);
    expect(dialed.length).toBeGreaterThan(0);
    expect(calls.filter((c) => c.status === 'queued').length).toBeGreaterThan(0);
    // The one handed out just before the close may start a moment after it.
    for (const c of dialed) expect(Date.parse(c.started_at)).toBeLessThan(closes.getTime() + 2000);
    expect((await api.get(`${C}/${campaign.id}`)).body.status).toBe('running');
    const cancel = await api.post(`${C}/${campaign.id}/cancel`);
    expect(cancel.body.status).toBe('canceled');
    const after = await callsOf(api, campaign.id, '&status=queued');
    expect(after).toHaveLength(0);
  }, 180_000);
});
