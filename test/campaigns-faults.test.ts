import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually, freshDatabase, startTestService, type TestService } from './helpers.ts';
import { callsOf, campaignReaches, eventsOf, orgWithNumber, startedCampaign } from './support/campaigns.ts';

/**
 * Issue 18: a dial retried after a fault between placing the call at the carrier and recording its
 * id places no second call; queued calls that wait past CAMPAIGN_QUEUED_EXPIRY_SECONDS end `expired`;
 * a call claimed just before a pause goes back to the queue undialed.
 * Its own database: the faults are triggers installed in it.
 */

let db: Awaited<ReturnType<typeof freshDatabase>>;
let svc: TestService;
beforeAll(async () => {
  db = await freshDatabase();
  svc = await startTestService({ SANDBOX_RING_SECONDS: 0, SANDBOX_CALL_SECONDS: 1, CAMPAIGN_QUEUED_EXPIRY_SECONDS: 3 }, { databaseUrl: db.url });
});
afterAll(async () => {
  await svc?.stop();
  await db?.drop();
});

it('a dial whose call id could not be recorded is retried without placing a second call', async () => {
  const target = '+15005559801';
  // The first write of this number's call id fails (a sequence is not rolled back with the failed statement).
  await svc.sql.unsafe(`
    create sequence record_sid_faults;
    create function fail_first_sid_record() returns trigger language plpgsql as $$
    begin
      if nextval('record_sid_faults') = 1 then raise exception 'injected fault: the worker died before recording the call id'; end if;
      return new;
    end $$;
    create trigger fail_first_sid_record before update on campaign_calls for each row
      when (new.to_number = '${target}' and new.call_sid is not null and old.call_sid is null) execute function fail_first_sid_record();`);
  const { api, agent } = await orgWithNumber(svc);
  const campaign = await startedCampaign(api, { widget_id: agent.id, to_numbers: [target], max_duration_seconds: 60 });
  await campaignReaches(api, campaign.id, 'completed', 120_000);
  const [call] = await callsOf(api, campaign.id);
  expect(call).toMatchObject({ status: 'completed', ended_reason: 'carrier' });
  const [faults] = await svc.sql<{ n: string }[]>`select last_value::text as n from record_sid_faults`;
  expect(Number(faults!.n)).toBeGreaterThanOrEqual(2); // the fault fired, and the retry recorded the id
  const placed = await svc.sql<{ sid: string }[]>`select details->>'sid' as sid from carrier_operations
    where operation = 'call' and details->>'url' like ${`%campaign_call=${call!.id}`}`;
  expect(placed.map((p) => p.sid)).toEqual([call!.call_sid]);
}, 150_000);

it('queued calls that wait past the expiry (calling window closed) end expired/expired, never dialed; the campaign completes', async () => {
  const { api, agent, orgId } = await orgWithNumber(svc);
  // A window that is closed now (UTC, the zone of these non-geographic numbers).
  const window = new Date().getUTCHours() < 12 ? { start: '14:00', end: '15:00' } : { start: '03:00', end: '04:00' };
  const numbers = ['+15005559811', '+15005559812'];
  const campaign = await startedCampaign(api, { widget_id: agent.id, to_numbers: numbers, timezone: 'UTC', calling_window: window, max_duration_seconds: 60 });
  await campaignReaches(api, campaign.id, 'completed', 120_000);
  const calls = await callsOf(api, campaign.id);
  expect(calls).toHaveLength(2);
  for (const call of calls) expect(call).toMatchObject({ status: 'expired', ended_reason: 'expired', started_at: null, call_sid: null, conversation_id: null });
  const ops = await svc.sql`select 1 from carrier_operations where operation = 'call' and target = any(${numbers}::text[])`;
  expect(ops).toHaveLength(0);
  const ended = (await eventsOf(svc, orgId)).filter((e) => e.type === 'campaign_call.ended');
  expect(ended.map((e) => e.data.call.status).sort()).toEqual(['expired', 'expired']);
}, 150_000);

it('a call started just before a pause is not dialed: it goes back to the queue, and is dialed once the campaign resumes', async () => {
  // A service of its own: the queued call must not expire (CAMPAIGN_QUEUED_EXPIRY_SECONDS above) while paused.
  const own = await freshDatabase();
  const paused = await startTestService({ SANDBOX_RING_SECONDS: 0, SANDBOX_CALL_SECONDS: 1 }, { databaseUrl: own.url });
  try {
    const target = '+15005559821';
    // The first claim of this number's call holds for a while: the pause commits between the claim and the dial.
    await paused.sql.unsafe(`
      create sequence slow_claims;
      create function slow_claim() returns trigger language plpgsql as $$
      begin
        if nextval('slow_claims') = 1 then perform pg_sleep(2); end if;
        return new;
      end $$;
      create trigger slow_claim before update on campaign_calls for each row
        when (new.to_number = '${target}' and new.status = 'claimed' and old.status = 'queued') execute function slow_claim();`);
    const sleeping = async () => (await paused.sql`select 1 from pg_stat_activity
      where datname = current_database() and wait_event = 'PgSleep' and query like '%campaign_calls%'`).length > 0;
    const { api, agent } = await orgWithNumber(paused);
    const campaign = await startedCampaign(api, { widget_id: agent.id, to_numbers: [target], max_duration_seconds: 60 });
    await eventually(sleeping, 60_000, 50);
    expect((await api.post(`/api/v1/rest/campaigns/${campaign.id}/pause`)).body.status).toBe('paused');
    // Back in the queue: queued again after its claim was committed (the row's first write set both times).
    const requeued = await eventually(async () => {
      const [row] = await paused.sql<{ touched: boolean }[]>`select status = 'queued' and updated_at > created_at as touched
        from campaign_calls where campaign_id = ${campaign.id}`;
      return row?.touched ? (await callsOf(api, campaign.id))[0] : null;
    }, 60_000, 100);
    expect(requeued).toMatchObject({ started_at: null, call_sid: null, ended_at: null });
    const dialed = () => paused.sql`select 1 from carrier_operations where operation = 'call' and target = ${target}`;
    expect(await dialed()).toHaveLength(0);
    expect((await api.post(`/api/v1/rest/campaigns/${campaign.id}/start`)).body.status).toBe('running');
    await campaignReaches(api, campaign.id, 'completed', 120_000);
    const [call] = await callsOf(api, campaign.id);
    expect(call).toMatchObject({ status: 'completed', ended_reason: 'carrier', attempt: 1 });
    expect(await dialed()).toHaveLength(1);
  } finally {
    await paused.stop();
    await own.drop();
  }
}, 150_000);

it('an evaluation that fails is retried by the step that ended the call: the call ends once, its conversation is evaluated once', async () => {
  const { api, agent, orgId } = await orgWithNumber(svc);
  // The first two evaluations written for this organization fail (the sequence is not rolled back with them).
  await svc.sql.unsafe(`
    create sequence evaluation_faults;
    create function fail_first_evaluations() returns trigger language plpgsql as $$
    begin
      if nextval('evaluation_faults') <= 2 then raise exception 'injected fault: the evaluation could not be stored'; end if;
      return new;
    end $$;
    create trigger fail_first_evaluations before update on conversations for each row
      when (new.org_id = '${orgId}' and new.evaluation_status = 'completed' and old.evaluation_status <> 'completed')
      execute function fail_first_evaluations();`);
  const campaign = await startedCampaign(api, { widget_id: agent.id, to_numbers: ['+15005559831'], max_duration_seconds: 60 });
  await campaignReaches(api, campaign.id, 'completed', 120_000);
  const [call] = await callsOf(api, campaign.id);
  expect(call).toMatchObject({ status: 'completed', ended_reason: 'carrier', conversation_id: expect.any(String) });
  const [faults] = await svc.sql<{ n: string }[]>`select last_value::text as n from evaluation_faults`;
  expect(Number(faults!.n)).toBe(3); // two failures, then the evaluation that was stored
  const events = await eventually(async () => {
    const all = await eventsOf(svc, orgId);
    return all.some((e) => e.type === 'conversation.evaluated') ? all : null;
  });
  const count = (type: string) => events.filter((e) => e.type === type).length;
  expect([count('campaign_call.ended'), count('conversation.ended'), count('conversation.evaluated')]).toEqual([1, 1, 1]);
  const [conversation] = await svc.sql<{ evaluation_status: string }[]>`select evaluation_status from conversations where id = ${call!.conversation_id}`;
  expect(conversation!.evaluation_status).toBe('completed');
}, 150_000);
