import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from './helpers.ts';
import { keyWith, newAgent, orgWithAgent } from './support/orgs.ts';
import { eventsOf } from './support/campaigns.ts';
import { expectFieldError, expectProblem } from './support/problems.ts';
import { newId } from '../src/ids.ts';

const PUBLIC = '/api/v1/public/widgets';
const REST = '/api/v1/rest';

let svc: TestService;
beforeAll(async () => { svc = await startTestService({ CONVERSATION_INACTIVITY_SECONDS: 600 }, { worker: false }); });
afterAll(async () => { await svc?.stop(); });

/** A visitor's conversation through the public endpoints, with one exchange: the agent's reply has an id to vote on. */
async function visit(publicKey: string) {
  const started = await call(svc.url, 'POST', `${PUBLIC}/${publicKey}/conversations`, { body: { page_url: 'https://example.com/' } });
  expect(started.status, started.text).toBe(201);
  const id = started.body.conversation_id as string;
  const headers = { 'x-visitor-token': started.body.visitor_token as string };
  const said = await call(svc.url, 'POST', `${PUBLIC}/${publicKey}/conversations/${id}/messages`, { body: { text: 'What are your opening hours?' }, headers });
  expect(said.status, said.text).toBe(200);
  const reply = (said.body.messages as { id: string; role: string }[]).find((m) => m.role === 'agent')!;
  const post = (path: string, body: unknown, h = headers) => call(svc.url, 'POST', `${PUBLIC}/${publicKey}/conversations/${id}${path}`, { body, headers: h });
  return { id, headers, reply, post };
}

describe('satisfaction', () => {
  it('takes an end-of-chat rating where the agent asks for one, replaces it, and emits conversation.feedback', async () => {
    const { api, orgId, agent } = await orgWithAgent(svc, 'Desk');
    expect((await api.patch(`${REST}/agents/${agent.id}`, { satisfaction_survey: true })).body.satisfaction_survey).toBe(true);
    const config = await call(svc.url, 'GET', `${PUBLIC}/${agent.public_key}/config`);
    expect(config.body.satisfaction_survey).toBe(true);
    const v = await visit(agent.public_key);
    expect((await v.post('/end', undefined)).status).toBe(200);

    const rated = await v.post('/rating', { rating: 2, comment: '  Slow answers ' });
    expect(rated.status, rated.text).toBe(200);
    expect(rated.body).toMatchObject({ kind: 'rating', rating: 2, comment: 'Slow answers', thumbs: null, message_id: null, conversation_id: v.id, widget_id: agent.id });
    const again = await v.post('/rating', { rating: 4 });
    expect(again.body).toMatchObject({ id: rated.body.id, rating: 4, comment: null });

    const stored = await api.get(`${REST}/conversations/${v.id}/feedback`);
    expect(stored.status, stored.text).toBe(200);
    expect(stored.body.data).toEqual([again.body]);
    const events = (await eventsOf(svc, orgId)).filter((e) => e.type === 'conversation.feedback');
    expect(events.map((e) => e.data.feedback.rating)).toEqual([2, 4]);
    expect(events[0]!.data.conversation).toMatchObject({ id: v.id, status: 'ended' });
  });

  it('refuses a rating the agent does not ask for, a bad one, a wrong token, and a vote on a visitor line', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const v = await visit(agent.public_key);
    expectProblem(await v.post('/rating', { rating: 5 }), 409, 'invalid_state');
    await api.patch(`${REST}/agents/${agent.id}`, { satisfaction_survey: true });
    expectFieldError(await v.post('/rating', { rating: 6 }), 'rating');
    expectFieldError(await v.post('/rating', { rating: 3, comment: 'x'.repeat(2001) }), 'comment');
    expectProblem(await v.post('/rating', { rating: 3 }, { 'x-visitor-token': 'nope' }), 401, 'unauthorized');
    const [visitorLine] = await svc.sql<[{ id: string }]>`select id from conversation_messages where conversation_id = ${v.id} and role = 'visitor'`;
    expectProblem(await v.post(`/messages/${visitorLine.id}/feedback`, { thumbs: 'up' }), 404, 'not_found');
    expectProblem(await v.post(`/messages/${newId()}/feedback`, { thumbs: 'up' }), 404, 'not_found');
    expectFieldError(await v.post(`/messages/${v.reply.id}/feedback`, { thumbs: 'sideways' }), 'thumbs');
    expect((await api.get(`${REST}/conversations/${v.id}/feedback`)).body.data).toEqual([]);
  });

  it('takes thumbs on replies and reports CSAT per agent, member and team', async () => {
    const { api, orgId, agent } = await orgWithAgent(svc, 'Happy desk');
    const other = await newAgent(api, 'Grumpy desk');
    for (const a of [agent, other]) await api.patch(`${REST}/agents/${a.id}`, { satisfaction_survey: true });
    const [member] = await svc.sql<[{ id: string }]>`insert into members (id, org_id, email, name) values (${newId()}, ${orgId}, ${`m-${newId()}@example.com`}, 'Member') returning id`;
    const team = newId();
    await svc.sql`insert into teams (id, org_id, name) values (${team}, ${orgId}, ${`Team ${team}`})`;
    const ratings: [string, number, 'up' | 'down'][] = [[agent.public_key, 5, 'up'], [agent.public_key, 4, 'up'], [agent.public_key, 2, 'down'], [other.public_key, 1, 'down']];
    for (const [key, rating, vote] of ratings) {
      const v = await visit(key);
      const voted = await v.post(`/messages/${v.reply.id}/feedback`, { thumbs: vote === 'up' ? 'down' : 'up' });
      expect(voted.status, voted.text).toBe(200);
      const changed = await v.post(`/messages/${v.reply.id}/feedback`, { thumbs: vote, comment: 'changed my mind' });
      expect(changed.body).toMatchObject({ id: voted.body.id, kind: 'thumbs', thumbs: vote, message_id: v.reply.id, rating: null });
      expect((await v.post('/rating', { rating })).status).toBe(200);
      if (key === agent.public_key) await svc.sql`update conversations set assigned_member_id = ${member.id}, team_id = ${team} where id = ${v.id}`;
    }
    const byAgent = await api.get(`${REST}/satisfaction`);
    expect(byAgent.status, byAgent.text).toBe(200);
    expect(byAgent.body.data).toEqual([
      { group_by: 'agent', id: agent.id, ratings: 3, average_rating: 3.67, csat: 0.6667, thumbs_up: 2, thumbs_down: 1 },
      { group_by: 'agent', id: other.id, ratings: 1, average_rating: 1, csat: 0, thumbs_up: 0, thumbs_down: 1 },
    ]);
    expect((await api.get(`${REST}/satisfaction?group_by=member`)).body.data).toEqual([
      { group_by: 'member', id: member.id, ratings: 3, average_rating: 3.67, csat: 0.6667, thumbs_up: 2, thumbs_down: 1 },
    ]);
    expect((await api.get(`${REST}/satisfaction?group_by=team`)).body.data.map((r: { id: string }) => r.id)).toEqual([team]);
    expect((await api.get(`${REST}/satisfaction?to=2020-01-01T00:00:00.000Z`)).body.data).toEqual([]);
    expectFieldError(await api.get(`${REST}/satisfaction?group_by=planet`), 'group_by');
    // Another organization sees nothing of it; reading needs conversations.read.
    const stranger = await orgWithAgent(svc);
    expect((await stranger.api.get(`${REST}/satisfaction`)).body.data).toEqual([]);
    const conversationId = (await svc.sql<[{ id: string }]>`select conversation_id as id from feedback where org_id = ${orgId} limit 1`)[0].id;
    expectProblem(await stranger.api.get(`${REST}/conversations/${conversationId}/feedback`), 404, 'not_found');
    const agentsOnly = await keyWith(svc, api, ['agents.read']);
    expectProblem(await agentsOnly.api.get(`${REST}/satisfaction`), 403, 'missing_permission');
  });
});
