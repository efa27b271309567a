import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { call, client, eventually, startTestService, type TestService } from './helpers.ts';
import { keyWith, newAgent, newOrg } from './support/orgs.ts';
import { expectProblem } from './support/problems.ts';
import { assigneeOf, historyOf, newMember, visitorAsking } from './support/members.ts';
import { recordFixture, replayAll } from './support/replay.ts';
import { watchLiveStream } from './support/live-stream.ts';
import { listCarrierOperations } from '../src/db/carrier-operations.ts';
import { workflowIds } from '../src/temporal/index.ts';
import { createAuthenticator } from '../src/auth/authenticator.ts';

const REST = '/api/v1/rest';

let svc: TestService;
beforeAll(async () => {
  // A long accept window here: assignments stay put unless a test moves them (the timeout has its own service below).
  svc = await startTestService({ ASSIGNMENT_ACCEPT_SECONDS: 600, ASSIGNMENT_RECHECK_SECONDS: 600, CONVERSATION_INACTIVITY_SECONDS: 600 });
});
afterAll(async () => { await svc?.stop(); });

const eventsOf = (orgId: string) => svc.sql<{ type: string; data: any }[]>`select type, data from events where org_id = ${orgId} order by created_at, id`;

describe('members', () => {
  it('creates, lists, changes and removes members; their ut_ token carries the role\'s permissions and is issued, rotated and revoked', async () => {
    const { api } = await newOrg(svc);
    const agent = await newAgent(api, 'Front desk');
    const created = await api.post(`${REST}/members`, { email: 'Ada@Example.com', name: 'Ada', role: 'supervisor', agent_ids: [agent.id] });
    expect(created.status, created.text).toBe(201);
    expect(created.headers.get('location')).toBe(`${REST}/members/${created.body.id}`);
    expect(created.body).toMatchObject({
      email: 'Ada@Example.com', name: 'Ada', role: 'supervisor', availability: 'offline', agent_ids: [agent.id], team_ids: [],
      max_conversations: 5, open_conversations: 0, phone: null,
      notification_preferences: { assigned: true, waiting: true, email: true, sms: false, browser: true, sound: true },
    });
    const id = created.body.id as string;
    const dup = await api.post(`${REST}/members`, { email: 'ada@example.com', name: 'Other' });
    expectProblem(dup, 409, 'member_exists');
    expect(dup.body.member_id).toBe(id);
    const bad = await api.post(`${REST}/members`, { email: 'x@example.com', name: 'X', role: 'boss', agent_ids: ['00000000-0000-7000-8000-000000000000'] });
    expectProblem(bad, 400, 'validation_error');
    const unknownAgent = await api.post(`${REST}/members`, { email: 'x@example.com', name: 'X', agent_ids: ['00000000-0000-7000-8000-000000000000'] });
    expectProblem(unknownAgent, 400, 'validation_error');
    expect(unknownAgent.body.errors[0].field).toBe('agent_ids[0]');

    const issued = await api.post(`${REST}/members/${id}/token`, {});
    expect(issued.status, issued.text).toBe(201);
    expect(issued.body.token).toMatch(/^ut_/);
    expect(issued.body).toMatchObject({ kind: 'user', user_email: 'Ada@Example.com' });
    expect([...issued.body.permissions].sort()).toEqual(['agents.read', 'campaigns.read', 'conversations.read', 'conversations.write', 'org.read', 'reports.read', 'simulations.read', 'sites.read']);
    const ada = client(svc.url, issued.body.token);
    expect((await ada.get(`${REST}/members/me`)).body).toMatchObject({ id, role: 'supervisor' });
    expect((await ada.get(`${REST}/members`)).status).toBe(200);
    expectProblem(await ada.post(`${REST}/members`, { email: 'y@example.com', name: 'Y' }), 403, 'missing_permission');

    // A role change applies to the token at once: an operator reads no members.
    expect((await api.patch(`${REST}/members/${id}`, { role: 'operator' })).body.role).toBe('operator');
    expectProblem(await ada.get(`${REST}/members`), 403, 'missing_permission');
    expect((await ada.patch(`${REST}/members/me`, { availability: 'online', notification_preferences: { email: false } })).body)
      .toMatchObject({ availability: 'online', notification_preferences: { email: false, sms: false } });
    expectProblem(await ada.patch(`${REST}/members/me`, { role: 'admin' }), 400, 'validation_error');
    expectProblem(await api.get(`${REST}/members/me`), 403, 'user_token_required');

    // Rotate: the old token stops, the new one works; revoke: nothing works.
    const rotated = await api.post(`${REST}/members/${id}/token/rotate`, {});
    expect(rotated.status, rotated.text).toBe(200);
    expect((await ada.get(`${REST}/members/me`)).status).toBe(401);
    const ada2 = client(svc.url, rotated.body.token);
    expect((await ada2.get(`${REST}/members/me`)).status).toBe(200);
    expect((await api.delete(`${REST}/members/${id}/token`)).status).toBe(204);
    expect((await ada2.get(`${REST}/members/me`)).status).toBe(401);

    const list = await api.get(`${REST}/members?availability=online`);
    expect(list.body).toMatchObject({ total: 1, limit: 50, offset: 0 });
    expect(list.body.data[0].id).toBe(id);
    expect((await api.delete(`${REST}/members/${id}`)).status).toBe(204);
    expectProblem(await api.get(`${REST}/members/${id}`), 404, 'not_found');
    // Another organization's member is not found.
    const other = await newOrg(svc);
    const theirs = await other.api.post(`${REST}/members`, { email: 'z@example.com', name: 'Z' });
    expectProblem(await api.get(`${REST}/members/${theirs.body.id}`), 404, 'not_found');
    expectProblem(await api.patch(`${REST}/members/${theirs.body.id}`, { name: 'Mine' }), 404, 'not_found');
  });

  it('a key cannot make a member of a role holding permissions it lacks', async () => {
    const { api } = await newOrg(svc);
    const limited = await keyWith(svc, api, ['org.read', 'org.write', 'conversations.read', 'conversations.write', 'agents.read']);
    expect((await limited.api.post(`${REST}/members`, { email: 'op@example.com', name: 'Op' })).status).toBe(201);
    const admin = await limited.api.post(`${REST}/members`, { email: 'boss@example.com', name: 'Boss', role: 'admin' });
    expectProblem(admin, 403, 'missing_permission');
  });

  it('today\'s user_email keys are members; a member token\'s principal names the member', async () => {
    const { api } = await newOrg(svc);
    const key = await keyWith(svc, api, ['conversations.read'], { user_email: 'legacy@example.com' });
    const members = await api.get(`${REST}/members`);
    expect(members.body.data).toEqual([expect.objectContaining({ email: 'legacy@example.com', name: 'legacy', role: 'operator' })]);
    expect((await key.api.get(`${REST}/members/me`)).body.email).toBe('legacy@example.com');
    // What the audit log names: the principal of a member's token carries the member's id.
    const authenticator = await createAuthenticator(svc.sql);
    try {
      expect((await authenticator.authenticate(key.token))?.memberId).toBe(members.body.data[0].id);
    } finally {
      await authenticator.close();
    }
  });

  it('an operator serving some agents sees only their conversations', async () => {
    const { api } = await newOrg(svc);
    const mine = await newAgent(api, 'Mine');
    const theirs = await newAgent(api, 'Theirs');
    const { api: op } = await newMember(svc, api, { email: 'scoped@example.com', agent_ids: [mine.id] });
    const a = await visitorAsking(svc, mine);
    const b = await visitorAsking(svc, theirs);
    expect((await op.get(`${REST}/conversations/live`)).body.data.map((c: any) => c.id)).toEqual([a.id]);
    expect((await op.get(`${REST}/conversations`)).body).toMatchObject({ total: 1, data: [expect.objectContaining({ id: a.id })] });
    expect((await op.get(`${REST}/conversations/${a.id}`)).status).toBe(200);
    expectProblem(await op.get(`${REST}/conversations/${b.id}`), 404, 'not_found');
    expectProblem(await op.post(`${REST}/conversations/${b.id}/advisor`, { action: 'take_over' }), 404, 'not_found');
    expect((await op.get(`${REST}/conversations/queue`)).body.data.map((c: any) => c.id)).toEqual([a.id]);
    expect((await api.get(`${REST}/conversations/queue`)).body.data.map((c: any) => c.id).sort()).toEqual([a.id, b.id].sort());
  });
});

describe('teams', () => {
  it('creates teams with members, agents and channels; names are unique; unknown ids are 400', async () => {
    const { api } = await newOrg(svc);
    const agent = await newAgent(api, 'Sales bot');
    const { member } = await newMember(svc, api, { email: 'sam@example.com' });
    const team = await api.post(`${REST}/teams`, { name: 'Sales', member_ids: [member.id], agent_ids: [agent.id], surfaces: ['sms'] });
    expect(team.status, team.text).toBe(201);
    expect(team.body).toMatchObject({ name: 'Sales', member_ids: [member.id], agent_ids: [agent.id], surfaces: ['sms'] });
    expect((await api.get(`${REST}/members/${member.id}`)).body.team_ids).toEqual([team.body.id]);
    expectProblem(await api.post(`${REST}/teams`, { name: 'sales' }), 409, 'name_taken');
    const unknown = await api.post(`${REST}/teams`, { name: 'Support', member_ids: ['00000000-0000-7000-8000-000000000000'] });
    expectProblem(unknown, 400, 'validation_error');
    expect(unknown.body.errors[0].field).toBe('member_ids[0]');
    const patched = await api.patch(`${REST}/teams/${team.body.id}`, { member_ids: [] });
    expect(patched.body.member_ids).toEqual([]);
    expect((await api.get(`${REST}/teams`)).body.total).toBe(1);
    expect((await api.delete(`${REST}/teams/${team.body.id}`)).status).toBe(204);
    expectProblem(await api.get(`${REST}/teams/${team.body.id}`), 404, 'not_found');
  });
});

describe('canned responses', () => {
  it('stores replies by short code and expands their variables from the conversation and the member', async () => {
    const { api } = await newOrg(svc);
    const agent = await newAgent(api, 'Acme help');
    const { api: op } = await newMember(svc, api, { email: 'grace@example.com', name: 'Grace' });
    const made = await op.post(`${REST}/canned-responses`, { short_code: 'greet', text: 'Hi {{visitor.name}}, {{member.name}} from {{agent.name}} here. Order {{order}}?' });
    expect(made.status, made.text).toBe(201);
    expect(made.body).toMatchObject({ short_code: 'greet', title: 'greet', variables: ['visitor.name', 'member.name', 'agent.name', 'order'] });
    expectProblem(await op.post(`${REST}/canned-responses`, { short_code: 'GREET', text: 'x' }), 409, 'name_taken');
    expectProblem(await op.post(`${REST}/canned-responses`, { short_code: 'has space', text: 'x' }), 400, 'validation_error');
    const visitor = await visitorAsking(svc, agent);
    const expanded = await op.post(`${REST}/canned-responses/expand`, { short_code: '/greet', conversation_id: visitor.id, variables: { order: '#42' } });
    expect(expanded.status, expanded.text).toBe(200);
    expect(expanded.body).toEqual({ text: 'Hi {{visitor.name}}, Grace from Acme help here. Order #42?', missing: ['visitor.name'] });
    expectProblem(await op.post(`${REST}/canned-responses/expand`, { short_code: 'nope' }), 400, 'validation_error');
    expect((await op.get(`${REST}/canned-responses?q=gr`)).body.total).toBe(1);
    expect((await op.get(`${REST}/canned-responses?q=x`)).body.total).toBe(0);
    expect((await op.patch(`${REST}/canned-responses/${made.body.id}`, { text: 'Hello' })).body.variables).toEqual([]);
    expect((await op.delete(`${REST}/canned-responses/${made.body.id}`)).status).toBe(204);
    const other = await newOrg(svc);
    expectProblem(await other.api.get(`${REST}/canned-responses/${made.body.id}`), 404, 'not_found');
  });
});

describe('assignment', () => {
  it('assigns round-robin among online members of the routed team under their cap; the rest wait in the queue; events and history', async () => {
    const { api, orgId } = await newOrg(svc);
    const agent = await newAgent(api, 'Support bot');
    const a = await newMember(svc, api, { email: 'a@example.com', availability: 'online', max_conversations: 1 });
    const b = await newMember(svc, api, { email: 'b@example.com', availability: 'online', max_conversations: 1 });
    // Online, but not on the routed team: never assigned.
    await newMember(svc, api, { email: 'outsider@example.com', availability: 'online' });
    expect((await api.post(`${REST}/teams`, { name: 'Support', member_ids: [a.member.id, b.member.id], agent_ids: [agent.id] })).status).toBe(201);

    const first = await visitorAsking(svc, agent);
    const second = await visitorAsking(svc, agent);
    const third = await visitorAsking(svc, agent);
    const owners = await eventually(async () => {
      const got = await Promise.all([first, second].map((v) => assigneeOf(api, v.id)));
      return got.every(Boolean) ? got : null;
    });
    expect(owners.sort()).toEqual(['a@example.com', 'b@example.com']);
    // Both at their cap: the third waits, unassigned, and every member in scope was told.
    // The third's workflow routes it to the team and, nobody being free, leaves it queued.
    const queue = await eventually(async () => {
      const res = await api.get(`${REST}/conversations/queue`);
      return res.body.data[0]?.team_id ? res : null;
    });
    expect(queue.body.data.map((c: any) => c.id)).toEqual([third.id]);
    expect((await a.api.get(`${REST}/members/me`)).body.open_conversations).toBe(1);

    // Releasing one frees a slot: the waiting conversation goes to that member, the released one waits (not back to them).
    const released = await a.api.post(`${REST}/conversations/${owners[0] === 'a@example.com' ? first.id : second.id}/release`, {});
    expect(released.status, released.text).toBe(200);
    expect(released.body).toMatchObject({ action: 'released', reason: 'released', member_email: 'a@example.com', by_member_id: a.member.id });
    const freed = released.body.conversation_id as string;
    await eventually(async () => (await assigneeOf(api, third.id)) === 'a@example.com');
    expect(await assigneeOf(api, freed)).toBeNull();
    expectProblem(await a.api.post(`${REST}/conversations/${freed}/release`, {}), 409, 'invalid_state');

    // By hand: to the outsider (reassigned is recorded as such).
    const outsider = (await api.get(`${REST}/members?limit=100`)).body.data.find((m: any) => m.email === 'outsider@example.com');
    const byHand = await api.post(`${REST}/conversations/${freed}/assign`, { member_id: outsider.id });
    expect(byHand.status, byHand.text).toBe(200);
    expect(byHand.body).toMatchObject({ action: 'reassigned', reason: 'manual', member_email: 'outsider@example.com' });
    expect((await historyOf(api, freed)).map((s) => `${s.action}:${s.reason}:${s.member_email}`)).toEqual([
      `assigned:round_robin:a@example.com`, 'released:released:a@example.com', 'reassigned:manual:outsider@example.com',
    ]);
    expectProblem(await api.post(`${REST}/conversations/${freed}/assign`, { member_id: '00000000-0000-7000-8000-000000000000' }), 400, 'validation_error');

    // Live notices for the assignees (a member's stream carries only their own), told before the take-over below: a
    // conversation a person has taken over tells no one, so a notice still queued then is rightly never sent.
    // And by mail (no SMTP_URL here: an .eml file per notice and member, under DATA_DIR/mail).
    const toA = (await historyOf(api, third.id)).find((step) => step.member_email === 'a@example.com')!;
    await eventually(async () => (await readdir(join(svc.config.DATA_DIR, 'mail'))).some((f) => f.includes(`notice-${toA.id}-${a.member.id}`)));
    const notices = await svc.sql<{ data: any }[]>`select data from live_events where org_id = ${orgId} and type = 'notification'`;
    expect(notices.some((n) => n.data.kind === 'assigned' && n.data.member_email === 'a@example.com' && n.data.conversation_id === third.id)).toBe(true);
    expect(notices.some((n) => n.data.kind === 'waiting' && n.data.conversation_id === third.id)).toBe(true);

    // Taking over ends the workflow; its history replays.
    expect((await a.api.post(`${REST}/conversations/${third.id}/advisor`, { action: 'take_over' })).status).toBe(200);
    const handle = svc.temporal.workflow.getHandle(workflowIds.assignment(third.id));
    expect(await handle.result()).toEqual({ outcome: 'taken_over' });
    await replayAll([{ workflowId: handle.workflowId, history: await handle.fetchHistory() }]);
    await recordFixture(handle.workflowId, 'assign-conversation.json');

    const events = (await eventsOf(orgId)).filter((e) => e.type.startsWith('conversation.assigned') || e.type === 'conversation.released');
    expect(events.filter((e) => e.data.conversation.id === freed).map((e) => e.type))
      .toEqual(['conversation.assigned', 'conversation.released', 'conversation.assigned']);
    expect(events[0]!.data.assignment).toMatchObject({ conversation_id: expect.any(String), member_id: expect.any(String) });
  }, 60_000);

  it('a member going offline mid-wait loses the conversation to the next member; one coming online takes the queue', async () => {
    const { api } = await newOrg(svc);
    const agent = await newAgent(api, 'Help');
    const a = await newMember(svc, api, { email: 'first@example.com', availability: 'online' });
    const visitor = await visitorAsking(svc, agent);
    await eventually(async () => (await assigneeOf(api, visitor.id)) === 'first@example.com');
    // Nobody else online: going away leaves it waiting, unassigned.
    expect((await a.api.patch(`${REST}/members/me`, { availability: 'away' })).status).toBe(200);
    await eventually(async () => (await api.get(`${REST}/conversations/queue`)).body.data.some((c: any) => c.id === visitor.id));
    expect((await historyOf(api, visitor.id)).at(-1)).toMatchObject({ action: 'released', reason: 'offline', member_email: 'first@example.com' });
    // Someone comes online: the queue reaches them at once.
    const b = await newMember(svc, api, { email: 'second@example.com' });
    expect((await b.api.patch(`${REST}/members/me`, { availability: 'online' })).status).toBe(200);
    await eventually(async () => (await assigneeOf(api, visitor.id)) === 'second@example.com');
    const steps = await historyOf(api, visitor.id);
    expect(steps.map((s) => `${s.action}:${s.member_email}`)).toEqual(['assigned:first@example.com', 'released:first@example.com', 'reassigned:second@example.com']);
  }, 60_000);
});

describe('freed capacity', () => {
  // Both windows are 600 s here: a waiting conversation assigned within the test heard of the freed slot by signal.
  it('a close, a hand-back or a visitor leaving frees the assignee\'s only slot: the next waiting conversation is assigned at once', async () => {
    const { api, orgId, token } = await newOrg(svc);
    const agent = await newAgent(api, 'Desk');
    const solo = await newMember(svc, api, { email: 'solo@example.com', availability: 'online', max_conversations: 1 });
    const stream = await watchLiveStream(svc.url, token);
    try {
      const assignedToSolo = (id: string) => stream.next((f) => f.event === 'assigned' && f.data.conversation_id === id && f.data.assigned_to === 'solo@example.com');
      // The waiting notice: the conversation's workflow found no room and waits for a signal (or its next look, in 600 s).
      const waiting = (id: string) => stream.next((f) => f.event === 'notification' && f.data.kind === 'waiting' && f.data.conversation_id === id);
      const first = await visitorAsking(svc, agent);
      await assignedToSolo(first.id);
      const second = await visitorAsking(svc, agent);
      await waiting(second.id);

      // Closed from the console's API: the second is assigned at once.
      const closed = await solo.api.post(`${REST}/conversations/${first.id}/close`, {});
      expect(closed.status, closed.text).toBe(200);
      expect(closed.body).toMatchObject({ id: first.id, status: 'ended', assigned_to: 'solo@example.com' });
      await assignedToSolo(second.id);
      expect((await stream.next((f) => f.event === 'ended' && f.data.conversation_id === first.id)).data.ended_reason).toBe('closed');
      expect((await historyOf(api, first.id)).map((s) => `${s.action}:${s.reason}:${s.member_email}:${s.by_member_id}`)).toEqual([
        'assigned:round_robin:solo@example.com:null', `released:closed:solo@example.com:${solo.member.id}`,
      ]);
      const detail = (await api.get(`${REST}/conversations/${first.id}`)).body;
      expect(detail.status).toBe('ended');
      expect(detail.messages.at(-1)).toMatchObject({ role: 'system', text: 'solo closed the conversation' });
      // Both in the close's transaction (so in no particular order between them).
      const mine = (await eventsOf(orgId)).filter((e) => e.data.conversation?.id === first.id);
      expect(mine.filter((e) => e.type === 'conversation.released').map((e) => e.data.assignment.reason)).toEqual(['closed']);
      expect(mine.filter((e) => e.type === 'conversation.ended').map((e) => e.data.conversation.status)).toEqual(['ended']);
      expect((await solo.api.get(`${REST}/members/me`)).body.open_conversations).toBe(1);

      // Handed back to the agent: released (not queued again), and the third waiting one is assigned at once.
      const third = await visitorAsking(svc, agent);
      await waiting(third.id);
      expect((await solo.api.post(`${REST}/conversations/${second.id}/advisor`, { action: 'take_over' })).status).toBe(200);
      const back = await solo.api.post(`${REST}/conversations/${second.id}/advisor`, { action: 'hand_back' });
      expect(back.status, back.text).toBe(200);
      expect(back.body).toMatchObject({ mode: 'agent', assigned_to: null, needs_human: false });
      await assignedToSolo(third.id);
      expect((await historyOf(api, second.id)).at(-1)).toMatchObject({ action: 'released', reason: 'handed_back', member_email: 'solo@example.com' });
      expect((await api.get(`${REST}/conversations/queue?assigned=all`)).body.data.map((c: any) => c.id)).toEqual([third.id]);

      // The visitor leaves: the fourth is assigned at once.
      const fourth = await visitorAsking(svc, agent);
      await waiting(fourth.id);
      expect((await third.end()).status).toBe(200);
      await assignedToSolo(fourth.id);
    } finally {
      stream.close();
    }
  }, 60_000);

  it('close: 409 once ended, 404 outside the organization or the operator\'s scope, 400 for a body, 403 without conversations.write; in OpenAPI and MCP', async () => {
    const { api, token } = await newOrg(svc);
    const agent = await newAgent(api, 'Desk');
    const other = await newAgent(api, 'Other desk');
    const visitor = await visitorAsking(svc, agent);
    const elsewhere = await visitorAsking(svc, other);
    expectProblem(await api.post(`${REST}/conversations/${visitor.id}/close`, { reason: 'done' }), 400, 'validation_error');
    const reader = await keyWith(svc, api, ['conversations.read']);
    expectProblem(await reader.api.post(`${REST}/conversations/${visitor.id}/close`, {}), 403, 'missing_permission');
    const stranger = await newOrg(svc);
    expectProblem(await stranger.api.post(`${REST}/conversations/${visitor.id}/close`, {}), 404, 'not_found');
    expectProblem(await api.post(`${REST}/conversations/00000000-0000-7000-8000-000000000000/close`, {}), 404, 'not_found');
    const { api: scoped } = await newMember(svc, api, { email: 'scoped.close@example.com', agent_ids: [agent.id] });
    expectProblem(await scoped.post(`${REST}/conversations/${elsewhere.id}/close`, {}), 404, 'not_found');
    // Nothing changed by the refusals; an organization key may close (the note says the team did).
    expect((await api.get(`${REST}/conversations/${visitor.id}`)).body.status).toBe('active');
    const closed = await api.post(`${REST}/conversations/${visitor.id}/close`, {});
    expect(closed.status, closed.text).toBe(200);
    expect((await api.get(`${REST}/conversations/${visitor.id}`)).body.messages.at(-1)).toMatchObject({ role: 'system', text: 'The team closed the conversation' });
    expectProblem(await api.post(`${REST}/conversations/${visitor.id}/close`, {}), 409, 'invalid_state');

    // In the OpenAPI document, and an MCP tool.
    const doc = (await call(svc.url, 'GET', '/api/v1/openapi.json')).body;
    expect(doc.paths['/api/v1/rest/conversations/{id}/close'].post).toMatchObject({ operationId: 'close_conversation', 'x-permissions': ['conversations.write'] });
    expect(doc.components.schemas.Assignment.properties.reason.enum).toEqual(['round_robin', 'manual', 'timeout', 'offline', 'released', 'handed_back', 'closed']);
    const tools = new McpClient({ name: 'members-test', version: '1.0.0' });
    await tools.connect(new StreamableHTTPClientTransport(new URL('/mcp', svc.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    try {
      const viaMcp = await tools.callTool({ name: 'close_conversation', arguments: { conversation_id: elsewhere.id } });
      expect(viaMcp.isError, JSON.stringify(viaMcp.content)).toBeFalsy();
      expect(viaMcp.structuredContent).toMatchObject({ id: elsewhere.id, status: 'ended' });
    } finally {
      await tools.close();
    }
  });
});

describe('notifications by SMS', () => {
  it('a member who opted into SMS is texted from the agent\'s number through the sandbox carrier when a conversation is assigned to them', async () => {
    const { api, token } = await newOrg(svc);
    const agent = await newAgent(api, 'Text desk');
    const bought = await api.post(`${REST}/phone-numbers`, { widget_id: agent.id, force: true });
    expect(bought.status, bought.text).toBe(201);
    const ours = bought.body.phone_number as string;
    const phone = `+1415555${String(Math.floor(Math.random() * 9000) + 1000)}`;
    await newMember(svc, api, { email: 'texted@example.com', availability: 'online', phone, notification_preferences: { sms: true, email: false } });
    const stream = await watchLiveStream(svc.url, token);
    try {
      const visitor = await visitorAsking(svc, agent);
      // The live notice is written first; the text follows in the same notice.
      await stream.next((f) => f.event === 'notification' && f.data.kind === 'assigned' && f.data.conversation_id === visitor.id);
      const texts = await eventually(async () => {
        const ops = (await listCarrierOperations(svc.sql, { phoneNumber: ours })).filter((op) => op.operation === 'sms');
        return ops.length ? ops : null;
      });
      expect(texts).toHaveLength(1);
      expect(texts[0]).toMatchObject({ carrier: 'sandbox', phone_number: ours, target: phone });
      expect(String(texts[0]!.details.body)).toMatch(new RegExp(`^A conversation was assigned to you \\(Text desk\\)\\. http.*/inbox#${visitor.id}$`));
    } finally {
      stream.close();
    }
  }, 60_000);
});

describe('assignment timeout', () => {
  let quick: TestService;
  beforeAll(async () => { quick = await startTestService({ ASSIGNMENT_ACCEPT_SECONDS: 1, ASSIGNMENT_RECHECK_SECONDS: 600 }); });
  afterAll(async () => { await quick?.stop(); });

  it('an assignee who does not take the conversation over in time loses it to the next member', async () => {
    const { api } = await newOrg(quick);
    const agent = await newAgent(api, 'Help');
    await newMember(quick, api, { email: 'slow@example.com', availability: 'online' });
    const visitor = await visitorAsking(quick, agent);
    await eventually(async () => (await historyOf(api, visitor.id)).length >= 2);
    expect((await historyOf(api, visitor.id)).slice(0, 2).map((s) => `${s.action}:${s.reason}`)).toEqual(['assigned:round_robin', 'released:timeout']);
    const fast = await newMember(quick, api, { email: 'fast@example.com', availability: 'online' });
    await eventually(async () => (await historyOf(api, visitor.id)).some((s) => s.member_email === 'fast@example.com' && s.action !== 'released'));
    // Taken over within the window: it stays.
    await eventually(async () => (await fast.api.post(`${REST}/conversations/${visitor.id}/advisor`, { action: 'take_over' })).status === 200);
    const handle = quick.temporal.workflow.getHandle(workflowIds.assignment(visitor.id));
    expect(await handle.result()).toEqual({ outcome: 'taken_over' });
  }, 60_000);
});
