import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Worker } from '@temporalio/worker';
import { call, client, eventually, startTestService, workflowBundle, type TestService } from './helpers.ts';
import { keyWith, newAgent, newOrg, type Api } from './support/orgs.ts';
import { expectWellFormedProblem } from './support/problems.ts';
import { insertConversation } from '../src/db/conversations.ts';
import { workflowIds } from '../src/temporal/index.ts';

const REST = '/api/v1/rest';
const PUBLIC = '/api/v1/public/widgets';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ CONVERSATION_INACTIVITY_SECONDS: 600, HUMAN_INACTIVITY_SECONDS: 7200, LIVE_STREAM_HEARTBEAT_SECONDS: 1, LIVE_STREAM_MAX_SECONDS: 60 });
});
afterAll(async () => { await svc?.stop(); });

/** An organization with an agent, its admin client, and a member's user token (`ut_`) with conversation rights. */
async function team(email = `alice.${Date.now()}@example.com`) {
  const org = await newOrg(svc);
  const agent = await newAgent(org.api, 'Front desk');
  const member = await keyWith(svc, org.api, ['conversations.read', 'conversations.write'], { user_email: email });
  expect(member.token.startsWith('ut_')).toBe(true);
  return { ...org, agent, member: member.api, memberEmail: email };
}

/** A visitor of `agent`'s widget. */
async function visit(agent: Record<string, any>) {
  const started = await call(svc.url, 'POST', `${PUBLIC}/${agent.public_key}/conversations`, { body: { page_url: 'https://example.com/' } });
  expect(started.status, started.text).toBe(201);
  const id = started.body.conversation_id as string;
  const token = started.body.visitor_token as string;
  const headers = { 'x-visitor-token': token };
  return {
    id,
    say: (text: string) => call(svc.url, 'POST', `${PUBLIC}/${agent.public_key}/conversations/${id}/messages`, { body: { text }, headers }),
    poll: (after?: string) => call(svc.url, 'GET', `${PUBLIC}/${agent.public_key}/conversations/${id}/messages${after ? `?after=${after}` : ''}`, { headers }),
    end: () => call(svc.url, 'POST', `${PUBLIC}/${agent.public_key}/conversations/${id}/end`, { headers }),
  };
}

const advise = (api: Api, id: string, body: Record<string, unknown>) => api.post(`${REST}/conversations/${id}/advisor`, body);

describe('annotations', () => {
  it('reads, changes (case-folded, unique, at most 50) and notes with author and time; the list filters by tag and label', async () => {
    const { api, agent, member, memberEmail } = await team();
    const a = await visit(agent);
    const b = await visit(agent);
    expect((await api.get(`${REST}/conversations/${a.id}/annotations`)).body).toEqual({ tags: [], labels: [], summary_rating: null, notes: [] });

    const patched = await api.patch(`${REST}/conversations/${a.id}/annotations`, { tags: ['Billing', 'billing', ' VIP '], labels: ['Follow-Up'], summary_rating: 4 });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ tags: ['billing', 'vip'], labels: ['follow-up'], summary_rating: 4 });
    expect((await api.patch(`${REST}/conversations/${a.id}/annotations`, {})).body.tags).toEqual(['billing', 'vip']);
    expect((await api.patch(`${REST}/conversations/${b.id}/annotations`, { tags: ['vip'] })).status).toBe(200);

    const tooMany = await api.patch(`${REST}/conversations/${a.id}/annotations`, { tags: Array.from({ length: 51 }, (_, i) => `t${i}`) });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.errors[0].field).toBe('tags');
    expect((await api.patch(`${REST}/conversations/${a.id}/annotations`, { tags: Array.from({ length: 50 }, (_, i) => `t${i}`) })).status).toBe(200);
    const badRating = await api.patch(`${REST}/conversations/${a.id}/annotations`, { summary_rating: 6 });
    expect(badRating.status).toBe(400);
    expect((await api.patch(`${REST}/conversations/${a.id}/annotations`, { tags: ['billing', 'VIP'], summary_rating: null })).body).toMatchObject({ summary_rating: null });

    const note = await member.post(`${REST}/conversations/${a.id}/annotations/notes`, { text: 'Asked for a refund' });
    expect(note.status, note.text).toBe(201);
    expect(note.body).toMatchObject({ text: 'Asked for a refund', author: memberEmail, created_at: expect.any(String) });
    const byKey = await api.post(`${REST}/conversations/${a.id}/annotations/notes`, { text: 'Second' });
    expect(byKey.body.author).toMatch(/^api key /);
    expect((await api.get(`${REST}/conversations/${a.id}/annotations`)).body.notes.map((n: any) => n.text)).toEqual(['Asked for a refund', 'Second']);
    expect((await api.post(`${REST}/conversations/${a.id}/annotations/notes`, { text: '' })).status).toBe(400);

    const vip = await api.get(`${REST}/conversations?tag=VIP`);
    expect(vip.body.data.map((c: any) => c.id).sort()).toEqual([a.id, b.id].sort());
    expect(vip.body.total).toBe(2);
    const billing = await api.get(`${REST}/conversations?tag=billing&label=follow-up`);
    expect(billing.body.data.map((c: any) => c.id)).toEqual([a.id]);
    expect(billing.body.total).toBe(1);
    expect((await api.get(`${REST}/conversations?label=nothing`)).body).toMatchObject({ data: [], total: 0 });
    expect((await api.get(`${REST}/conversations?tag=${'x'.repeat(51)}`)).status).toBe(400);

    // Another organization sees none of it.
    const other = await newOrg(svc);
    for (const res of [
      await other.api.get(`${REST}/conversations/${a.id}/annotations`),
      await other.api.patch(`${REST}/conversations/${a.id}/annotations`, { tags: ['x'] }),
      await other.api.post(`${REST}/conversations/${a.id}/annotations/notes`, { text: 'x' }),
    ]) {
      expect(res.status).toBe(404);
      expectWellFormedProblem(res, 'foreign annotations');
    }
    expect((await other.api.get(`${REST}/conversations?tag=vip`)).body.total).toBe(0);
  });
});

describe('advisor actions', () => {
  it('take-over silences the agent, the visitor sees the member join and reply as human_agent; hand-back lets the agent answer again', async () => {
    const { api, agent, member, memberEmail, orgId } = await team('dana@example.com');
    const v = await visit(agent);

    // An org key cannot act as a person, even holding every permission.
    const byKey = await advise(api, v.id, { action: 'take_over' });
    expect(byKey.status).toBe(403);
    expect(byKey.body.code).toBe('user_token_required');
    // 403 comes before 400.
    expect((await advise(api, v.id, { action: 'nonsense' })).body.code).toBe('user_token_required');
    expect((await advise(member, v.id, { action: 'nonsense' })).status).toBe(400);

    const asked = await v.say('I want to talk to a human please');
    expect(asked.status).toBe(200);
    const live = (await member.get(`${REST}/conversations/live`)).body.data.find((c: any) => c.id === v.id);
    expect(live).toMatchObject({ presence: 'online', mode: 'agent', needs_human: true, assigned_to: null, unread_count: 1, surface: 'web' });

    const taken = await advise(member, v.id, { action: 'take_over' });
    expect(taken.status, taken.text).toBe(200);
    expect(taken.body).toMatchObject({ id: v.id, mode: 'human', held_by: memberEmail, needs_human: false, unread_count: 0 });

    // The agent is silent: the visitor's message gets no reply.
    const silent = await v.say('Hello? Anyone there?');
    expect(silent.status).toBe(200);
    expect(silent.body.messages).toEqual([]);
    expect((await member.get(`${REST}/conversations/live`)).body.data.find((c: any) => c.id === v.id).unread_count).toBe(1);

    const replied = await advise(member, v.id, { action: 'reply', text: 'Hi, Dana here. How can I help?' });
    expect(replied.status, replied.text).toBe(200);
    const seen = (await v.poll()).body.messages;
    const tail = seen.slice(-4).map((m: any) => [m.role, m.text]);
    expect(tail).toEqual([
      ['agent', expect.any(String)],
      ['system', 'dana joined the conversation'],
      ['visitor', 'Hello? Anyone there?'],
      ['human_agent', 'Hi, Dana here. How can I help?'],
    ]);

    // The lifecycle workflow heard the take-over: its timer now runs with the human limit.
    const history = await svc.temporal.workflow.getHandle(workflowIds.conversation(v.id)).fetchHistory();
    const signals = history.events!.filter((e) => e.workflowExecutionSignaledEventAttributes).map((e) => e.workflowExecutionSignaledEventAttributes!.signalName);
    expect(signals).toContain('takeOver');
    const timers = history.events!.filter((e) => e.timerStartedEventAttributes).map((e) => Number(e.timerStartedEventAttributes!.startToFireTimeout!.seconds));
    expect(timers[0]).toBe(600);
    expect(timers.at(-1)).toBe(7200);

    const back = await advise(member, v.id, { action: 'hand_back' });
    expect(back.body).toMatchObject({ mode: 'agent', held_by: null });
    expect((await advise(member, v.id, { action: 'reply', text: 'too late' })).body.code).toBe('invalid_state');
    const answered = await v.say('What are your opening hours?');
    expect(answered.body.messages.length).toBeGreaterThan(0);
    expect(answered.body.messages.every((m: any) => m.role === 'agent')).toBe(true);
    const history2 = await svc.temporal.workflow.getHandle(workflowIds.conversation(v.id)).fetchHistory();
    expect(history2.events!.filter((e) => e.workflowExecutionSignaledEventAttributes).map((e) => e.workflowExecutionSignaledEventAttributes!.signalName)).toContain('handBack');
    // The run with its signals replays on today's workflow code (no non-determinism).
    for await (const replayed of Worker.runReplayHistories({ workflowBundle: await workflowBundle() }, [{ workflowId: workflowIds.conversation(v.id), history: history2 }])) {
      expect(replayed.error, String(replayed.error)).toBeUndefined();
    }

    const transcript = (await api.get(`${REST}/conversations/${v.id}`)).body.messages.filter((m: any) => m.role === 'system').map((m: any) => m.text);
    expect(transcript).toEqual(['dana joined the conversation', 'dana handed the conversation back to the assistant']);
    expect(orgId).toBeTruthy();
  });

  it('assigns to members only, marks read, and refuses departed visitors, voice and other organizations', async () => {
    const { api, agent, member, orgId } = await team();
    const bob = 'bob@example.com';
    await keyWith(svc, api, ['conversations.read'], { user_email: bob });
    const v = await visit(agent);
    await v.say('Do you ship abroad?');

    expect((await advise(member, v.id, { action: 'assign' })).body.errors[0].field).toBe('user_email');
    const stranger = await advise(member, v.id, { action: 'assign', user_email: 'nobody@example.com' });
    expect(stranger.status).toBe(400);
    expect(stranger.body.errors[0].field).toBe('user_email');
    const assigned = await advise(member, v.id, { action: 'assign', user_email: 'BOB@example.com' });
    expect(assigned.status, assigned.text).toBe(200);
    expect(assigned.body.assigned_to).toBe(bob);
    // The assignment's own path (issue 45): a history step by the member, and `conversation.assigned`.
    const me = (await member.get(`${REST}/members/me`)).body;
    const steps = (await api.get(`${REST}/conversations/${v.id}/assignments`)).body.data;
    expect(steps).toEqual([expect.objectContaining({ action: 'assigned', reason: 'manual', member_email: bob, by_member_id: me.id })]);
    const events = await svc.sql<{ data: any }[]>`select data from events where org_id = ${orgId} and type = 'conversation.assigned'`;
    expect(events.map((e) => [e.data.conversation.id, e.data.assignment.id])).toEqual([[v.id, steps[0].id]]);
    // Assigning to the assignee again changes nothing.
    expect((await advise(member, v.id, { action: 'assign', user_email: bob })).status).toBe(200);
    expect((await api.get(`${REST}/conversations/${v.id}/assignments`)).body.data).toHaveLength(1);
    expect((await advise(member, v.id, { action: 'reply' })).body.errors[0].field).toBe('text');

    expect((await member.get(`${REST}/conversations/live`)).body.data.find((c: any) => c.id === v.id).unread_count).toBe(1);
    const read = await advise(member, v.id, { action: 'mark_read' });
    expect(read.body.unread_count).toBe(0);

    // Another organization's conversation does not exist for this member.
    const other = await team();
    const theirs = await visit(other.agent);
    expect((await advise(member, theirs.id, { action: 'take_over' })).status).toBe(404);
    expect((await advise(member, '01890000-0000-7000-8000-000000000000', { action: 'mark_read' })).status).toBe(404);

    // A departed visitor: ended.
    await v.end();
    const gone = await advise(member, v.id, { action: 'take_over' });
    expect(gone.status).toBe(409);
    expect(gone.body.code).toBe('not_claimable');
    expectWellFormedProblem(gone, 'ended');
    // Marking read needs no visitor.
    expect((await advise(member, v.id, { action: 'mark_read' })).status).toBe(200);

    // A departed visitor: silent past the inactivity limit (600 s here).
    const idle = await visit(agent);
    await svc.sql`update conversations set last_activity_at = now() - interval '20 minutes', visitor_seen_at = now() - interval '20 minutes' where id = ${idle.id}`;
    expect((await advise(member, idle.id, { action: 'take_over' })).body.code).toBe('not_claimable');

    // A phone conversation: never claimable, never in the live inbox.
    const phone = await insertConversation(svc.sql, {
      orgId, agentId: agent.id, surface: 'phone', pageUrl: null, visitorId: null, contactId: null, language: 'en', tokenHash: null,
    });
    expect((await advise(member, phone.id, { action: 'take_over' })).body.code).toBe('not_claimable');
    const list = (await member.get(`${REST}/conversations/live`)).body.data.map((c: any) => c.id);
    expect(list).not.toContain(phone.id);
    expect(list).not.toContain(v.id);
    expect(list).toContain(idle.id);
  });
});

/** Reads an SSE response until `done(frames)`; answers the raw text and the parsed frames. */
async function readStream(res: Response, done: (frames: { id: string; event: string; data: any }[], text: string) => boolean) {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const frames: { id: string; event: string; data: any }[] = [];
  while (!done(frames, text)) {
    const { value, done: ended } = await reader.read();
    if (ended) break;
    text += decoder.decode(value, { stream: true });
    frames.length = 0;
    for (const block of text.split('\n\n')) {
      const fields: Record<string, string> = Object.fromEntries(block.split('\n').filter((l) => l && !l.startsWith(':')).map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 2)]));
      if (fields.event) frames.push({ id: fields.id!, event: fields.event, data: JSON.parse(fields.data!) });
    }
  }
  await reader.cancel();
  return { text, frames };
}

describe('the live stream', () => {
  it('carries started, message, assigned, mode_changed and ended in order, with heartbeats, and replays after Last-Event-ID', async () => {
    const { api, agent, member, token } = await team('erin@example.com');
    const ctrl = new AbortController();
    const res = await fetch(`${svc.url}${REST}/conversations/live/stream`, { headers: { authorization: `Bearer ${token}` }, signal: ctrl.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);

    const v = await visit(agent);
    await v.say('Can I talk to a person?');
    await advise(member, v.id, { action: 'take_over' });
    await advise(member, v.id, { action: 'reply', text: 'Erin here.' });
    await advise(member, v.id, { action: 'assign', user_email: 'erin@example.com' });
    await advise(member, v.id, { action: 'hand_back' });
    await v.end();

    // Read on until a heartbeat came too (one a second here).
    const { text, frames } = await readStream(res, (f, t) => f.some((e) => e.event === 'ended' && e.data.conversation_id === v.id) && t.includes(': heartbeat'));
    ctrl.abort();
    writeFileSync(join(tmpdir(), 'live-inbox-sse-stream.txt'), text);
    const mine = frames.filter((f) => f.data.conversation_id === v.id);
    expect(mine.map((f) => f.event === 'message' ? `message:${f.data.message.role}` : f.event)).toEqual([
      'started', 'message:agent', 'message:visitor', 'message:agent',
      'mode_changed', 'message:system', 'message:human_agent', 'assigned', 'message:system',
      // Handed back: the assignee is released (issue 45).
      'mode_changed', 'message:system', 'assigned', 'ended',
    ]);
    expect(mine.find((f) => f.event === 'mode_changed')!.data).toMatchObject({ mode: 'human', held_by: 'erin@example.com' });
    expect(mine.find((f) => f.event === 'assigned')!.data).toMatchObject({ assigned_to: 'erin@example.com' });
    const ids = mine.map((f) => BigInt(f.id));
    expect(ids).toEqual([...ids].sort((a, b) => (a < b ? -1 : 1)));
    expect(text).toContain(': heartbeat');

    // Reconnecting with Last-Event-ID replays what followed, in the same order.
    const from = mine[4]!;
    const again = await fetch(`${svc.url}${REST}/conversations/live/stream`, { headers: { authorization: `Bearer ${token}`, 'last-event-id': from.id } });
    const replay = await readStream(again, (f) => f.some((e) => e.event === 'ended' && e.data.conversation_id === v.id));
    expect(replay.frames.filter((f) => f.data.conversation_id === v.id).map((f) => f.id)).toEqual(mine.slice(5).map((f) => f.id));

    // Another organization's stream carries none of it; an org key may read the stream.
    const other = await newOrg(svc);
    const theirs = await fetch(`${svc.url}${REST}/conversations/live/stream`, { headers: { authorization: `Bearer ${other.token}`, 'last-event-id': '0' } });
    const foreign = await readStream(theirs, (_f) => true);
    expect(foreign.text).not.toContain(v.id);
    const noAuth = await call(svc.url, 'GET', `${REST}/conversations/live/stream`);
    expect(noAuth.status).toBe(401);
    const reader = await keyWith(svc, api, ['agents.read']);
    expect((await reader.api.get(`${REST}/conversations/live/stream`)).status).toBe(403);
  });
});

describe('live chat alerts (issue 43)', () => {
  type Frame = { id: string; event: string; data: any };
  const alertsOf = (frames: Frame[], id: string) => frames.filter((f) => f.event === 'alert' && f.data.conversation_id === id);
  const endedOf = (id: string) => (f: Frame[]) => f.some((e) => e.event === 'ended' && e.data.conversation_id === id);
  const openStream = (token: string) => fetch(`${svc.url}${REST}/conversations/live/stream`, { headers: { authorization: `Bearer ${token}` } });

  it('scope unassigned: an alert for a visitor asking for a person, none for an assigned conversation or an agent without alerts', async () => {
    const { api, agent, member, memberEmail, token } = await team();
    expect((await api.patch(`${REST}/agents/${agent.id}`, { live_chat_alerts: true, live_chat_alert_scope: 'unassigned' })).status).toBe(200);
    const quiet = await newAgent(api, 'No alerts');
    const res = await openStream(token);
    expect(res.status).toBe(200);

    const silent = await visit(quiet);
    await silent.say('I want to talk to a human please');
    const assigned = await visit(agent);
    expect((await advise(member, assigned.id, { action: 'assign', user_email: memberEmail })).status).toBe(200);
    await assigned.say('I want to talk to a human please');
    const wanted = await visit(agent);
    await wanted.say('I want to talk to a human please');
    await wanted.end();

    const { frames } = await readStream(res, endedOf(wanted.id));
    const [alert, ...more] = alertsOf(frames, wanted.id);
    expect(more).toEqual([]);
    expect(alert!.data).toEqual({
      conversation_id: wanted.id, widget_id: agent.id, surface: 'web', reason: 'handoff_requested', scope: 'unassigned',
      assigned_to: null, text: 'I want to talk to a human please',
    });
    // The alert follows the visitor's message that raised it.
    const said = frames.find((f) => f.event === 'message' && f.data.conversation_id === wanted.id && f.data.message.role === 'visitor')!;
    expect(BigInt(alert!.id) > BigInt(said.id)).toBe(true);
    expect(alertsOf(frames, silent.id)).toEqual([]);
    expect(alertsOf(frames, assigned.id)).toEqual([]);
    // Both were flagged all the same: the scope decides the alert, not the flag.
    const live = (await member.get(`${REST}/conversations/live`)).body.data;
    expect(live.find((c: any) => c.id === assigned.id)).toMatchObject({ needs_human: true, assigned_to: memberEmail });
  });

  it('scope assigned: only the assigned member (and organization keys) are alerted, also when the visitor writes to the member holding it', async () => {
    const erin = `erin.${Date.now()}@example.com`;
    const { api, agent, member, token } = await team(erin);
    const erinKey = await keyWith(svc, api, ['conversations.read'], { user_email: erin });
    const finn = await keyWith(svc, api, ['conversations.read', 'conversations.write'], { user_email: `finn.${Date.now()}@example.com` });
    expect((await api.patch(`${REST}/agents/${agent.id}`, { live_chat_alerts: true, live_chat_alert_scope: 'assigned' })).status).toBe(200);
    const [erinStream, finnStream, orgStream] = await Promise.all([openStream(erinKey.token), openStream(finn.token), openStream(token)]);
    for (const r of [erinStream, finnStream, orgStream]) expect(r.status).toBe(200);

    const unassigned = await visit(agent);
    await unassigned.say('I want to talk to a human please');
    const v = await visit(agent);
    expect((await advise(member, v.id, { action: 'assign', user_email: erin })).status).toBe(200);
    await v.say('I want to talk to a human please');
    expect((await advise(member, v.id, { action: 'take_over' })).status).toBe(200);
    await v.say('Are you still there?');
    await v.end();

    const [mine, theirs, org] = await Promise.all([readStream(erinStream, endedOf(v.id)), readStream(finnStream, endedOf(v.id)), readStream(orgStream, endedOf(v.id))]);
    expect(alertsOf(mine.frames, v.id).map((f) => [f.data.reason, f.data.assigned_to, f.data.text])).toEqual([
      ['handoff_requested', erin, 'I want to talk to a human please'],
      ['visitor_message', erin, 'Are you still there?'],
    ]);
    expect(alertsOf(org.frames, v.id).map((f) => f.data.reason)).toEqual(['handoff_requested', 'visitor_message']);
    // Finn reads the conversation's other events, never its alerts; nobody is alerted for the unassigned one.
    expect(theirs.frames.some((f) => f.event === 'message' && f.data.conversation_id === v.id)).toBe(true);
    expect(alertsOf(theirs.frames, v.id)).toEqual([]);
    for (const read of [mine, theirs, org]) expect(alertsOf(read.frames, unassigned.id)).toEqual([]);
  });
});

describe('live list', () => {
  it('lists text conversations in progress with presence', async () => {
    const { agent, member } = await team();
    const v = await visit(agent);
    await v.poll();
    const row = await eventually(async () => (await member.get(`${REST}/conversations/live`)).body.data.find((c: any) => c.id === v.id));
    expect(row).toMatchObject({ presence: 'online', status: 'active', mode: 'agent', needs_human: false, last_message: { role: 'agent' } });
    await svc.sql`update conversations set visitor_seen_at = now() - interval '31 seconds', last_activity_at = now() - interval '31 seconds' where id = ${v.id}`;
    expect((await member.get(`${REST}/conversations/live`)).body.data.find((c: any) => c.id === v.id).presence).toBe('offline');
    expect(client(svc.url).get).toBeTypeOf('function');
  });
});

/** A live stream read as it arrives: `until(text)` waits for text matching, `end()` for the server to end it (answering all it sent). */
async function liveStream(base: string, token: string) {
  const res = await fetch(`${base}${REST}/conversations/live/stream`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status, await (res.ok ? Promise.resolve('') : res.text())).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let ended = false;
  const read = async (stop: () => boolean) => {
    while (!ended && !stop()) {
      const chunk = await reader.read();
      if (chunk.done) ended = true;
      else text += decoder.decode(chunk.value, { stream: true });
    }
    return text;
  };
  return {
    until: (needle: string) => read(() => text.includes(needle)),
    end: () => read(() => false),
    cancel: () => reader.cancel(),
  };
}

describe('live streams: revocation (issue 40, D18) and caps (I17)', () => {
  // A second API replica whose streams would stay open for an hour: only the revocation can end them in a test's time.
  let replica: TestService;
  let capped: TestService;
  beforeAll(async () => {
    [replica, capped] = await Promise.all([
      startTestService({ LIVE_STREAM_MAX_SECONDS: 3600 }, { worker: false }),
      startTestService({ LIVE_STREAMS_PER_KEY: 2, LIVE_STREAMS_PER_ADDRESS: 3, LIVE_STREAM_HEARTBEAT_SECONDS: 1 }, { worker: false }),
    ]);
  });
  afterAll(async () => { await Promise.all([replica?.stop(), capped?.stop()]); });

  it('ends a stream at once when its key is revoked on another replica, or its user token on this one; later messages never reach it', async () => {
    const { api, token, agent, memberEmail } = await team();
    const watcher = await keyWith(svc, api, ['conversations.read']);
    const member = await keyWith(svc, api, ['conversations.read'], { user_email: memberEmail });
    const bystander = await keyWith(svc, api, ['conversations.read']);
    // Streams on the replica; the visitor talks to this service, whose events reach the replica by NOTIFY.
    const byKey = await liveStream(replica.url, watcher.token);
    const byUserToken = await liveStream(replica.url, member.token);
    const unrelated = await liveStream(replica.url, bystander.token);
    const v = await visit(agent);
    await v.say('before revocation');
    await Promise.all([byKey, byUserToken, unrelated].map((s) => s.until('before revocation')));

    // The key revoked through another replica: the stream's replica hears it by NOTIFY. The user token through the stream's own.
    expect((await api.delete(`${REST}/api-keys/${watcher.id}`)).status).toBe(204);
    const keyText = await byKey.end();
    expect((await client(replica.url, token).delete(`${REST}/api-keys/${member.id}`)).status).toBe(204);
    const userText = await byUserToken.end();

    await v.say('after revocation: my card ends 4242');
    await unrelated.until('after revocation');
    await unrelated.cancel();
    for (const text of [keyText, userText]) expect(text).not.toContain('after revocation');
    expect((await watcher.api.get(`${REST}/conversations/live`)).status).toBe(401);
  });

  it('caps the streams open at once per key and per client address with 429, and frees a slot when a stream closes', async () => {
    const { token } = await capped.newOrg();
    const other = await keyWith(capped, token, ['conversations.read']);
    const first = await liveStream(capped.url, token);
    await liveStream(capped.url, token);
    const overKey = await call(capped.url, 'GET', `${REST}/conversations/live/stream`, { token });
    expect(overKey.status).toBe(429);
    expect(expectWellFormedProblem(overKey).code).toBe('rate_limited');
    expect(overKey.body.detail).toMatch(/2 live streams .*API key/);
    expect(overKey.headers.get('retry-after')).toBe('1');
    expect(overKey.headers.get('ratelimit-policy')).toContain('"live_streams_per_key";q=2');
    expect(overKey.headers.get('ratelimit')).toContain('"live_streams_per_key";r=0');
    // Another key from the same address: one more fits (3 per address), the next does not.
    const third = await liveStream(capped.url, other.token);
    const overAddress = await call(capped.url, 'GET', `${REST}/conversations/live/stream`, { token: other.token });
    expect(overAddress.status).toBe(429);
    expect(expectWellFormedProblem(overAddress).code).toBe('rate_limited');
    expect(overAddress.body.detail).toMatch(/3 live streams .*client address/);
    // A stream the client closes gives its slot back.
    await first.cancel();
    const reopened = await eventually(async () => {
      const res = await fetch(`${capped.url}${REST}/conversations/live/stream`, { headers: { authorization: `Bearer ${token}` } });
      if (res.status === 200) return res;
      await res.text();
      return null;
    });
    await reopened.body!.cancel();
    await third.cancel();
  });
});
