import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './helpers.ts';
import { newAgent, orgWithAgent } from './support/orgs.ts';
import { expectFieldError } from './support/problems.ts';
import { newId } from '../src/ids.ts';

let svc: TestService;
beforeAll(async () => { svc = await startTestService({}, { worker: false }); });
afterAll(async () => { await svc?.stop(); });

const C = '/api/v1/rest/conversations';

interface Seed {
  startedAt: string; surface?: string; status?: 'active' | 'ended'; outcome?: string; language?: string; contactId?: string;
  assignee?: string; team?: string; messages?: { role: string; text: string; language?: string }[];
}

/** A conversation written as the runtime would: the row, then its messages (whose trigger indexes the transcript). */
async function seed(orgId: string, agentId: string, s: Seed): Promise<string> {
  const id = newId();
  await svc.sql`insert into conversations (id, org_id, agent_id, surface, started_at, last_activity_at, status, outcome, language, contact_id,
      assigned_member_id, team_id)
    values (${id}, ${orgId}, ${agentId}, ${s.surface ?? 'web'}, ${s.startedAt}, ${s.startedAt}, ${s.status ?? 'ended'}, ${s.outcome ?? null},
      ${s.language ?? null}, ${s.contactId ?? null}, ${s.assignee ?? null}, ${s.team ?? null})`;
  for (const m of s.messages ?? []) {
    await svc.sql`insert into conversation_messages (id, conversation_id, role, text, language) values (${newId()}, ${id}, ${m.role}, ${m.text}, ${m.language ?? null})`;
  }
  return id;
}

const ids = (res: { status: number; text: string; body: { data: { id: string }[] } }) => {
  expect(res.status, res.text).toBe(200);
  return res.body.data.map((c) => c.id);
};

describe('conversation search and filters', () => {
  it('finds transcripts by their words, each message stemmed in its language, within a date range', async () => {
    const { api, orgId, agent } = await orgWithAgent(svc);
    const angry = await seed(orgId, agent.id, { startedAt: '2026-03-10T09:00:00.000Z', messages: [
      { role: 'caller', text: 'I am really angry, nobody called me back' }, { role: 'agent', text: 'I am sorry, a person will call you today.' },
    ] });
    const french = await seed(orgId, agent.id, { startedAt: '2026-03-11T09:00:00.000Z', language: 'fr-FR', messages: [
      { role: 'visitor', text: 'Je voudrais annuler mes réservations' },
    ] });
    const later = await seed(orgId, agent.id, { startedAt: '2026-04-02T09:00:00.000Z', messages: [{ role: 'visitor', text: 'Still angry about the callback' }] });
    // The service's own notes are not searched.
    await seed(orgId, agent.id, { startedAt: '2026-03-12T09:00:00.000Z', messages: [{ role: 'system', text: 'angry caller escalated' }] });

    expect(ids(await api.get(`${C}?q=angry`))).toEqual([later, angry]);
    // Two words, both required; English stemming ("calls" finds "called", "call").
    expect(ids(await api.get(`${C}?q=${encodeURIComponent('angry calls')}`))).toEqual([angry]);
    const ranged = await api.get(`${C}?q=angry&from=2026-03-01T00:00:00.000Z&to=2026-04-01T00:00:00.000Z`);
    expect(ids(ranged)).toEqual([angry]);
    expect(ranged.body.total).toBe(1);
    // The French message is read as French: "réservation" finds "réservations" by the French stem.
    expect(ids(await api.get(`${C}?q=${encodeURIComponent('réservation annulée')}`))).toEqual([french]);
    const [stored] = await svc.sql<[{ language: string }]>`select language from conversation_messages where conversation_id = ${french}`;
    expect(stored.language).toBe('fr-FR');
    // A phrase, an exclusion, and a query of stop words only.
    expect(ids(await api.get(`${C}?q=${encodeURIComponent('"called me back"')}`))).toEqual([angry]);
    expect(ids(await api.get(`${C}?q=${encodeURIComponent('angry -callback')}`))).toEqual([angry]);
    const none = await api.get(`${C}?q=the`);
    expect(ids(none)).toEqual([]);
    expect(none.body.total).toBe(0);
  });

  it('filters by surface, status, outcome, contact, assignee, team and agent, and combines them', async () => {
    const { api, orgId, agent } = await orgWithAgent(svc);
    const second = await newAgent(api, 'Second desk');
    const contact = (await api.post('/api/v1/rest/contacts', { email_lower: `c-${newId()}@example.com` })).body.id as string;
    const [member] = await svc.sql<[{ id: string }]>`insert into members (id, org_id, email, name) values (${newId()}, ${orgId}, ${`m-${newId()}@example.com`}, 'Member') returning id`;
    const team = newId();
    await svc.sql`insert into teams (id, org_id, name) values (${team}, ${orgId}, ${`Team ${team}`})`;
    const a = await seed(orgId, agent.id, { startedAt: '2026-05-01T10:00:00.000Z', surface: 'sms', outcome: 'resolved', contactId: contact });
    const b = await seed(orgId, agent.id, { startedAt: '2026-05-02T10:00:00.000Z', status: 'active', assignee: member.id, team });
    const c = await seed(orgId, second.id, { startedAt: '2026-05-03T10:00:00.000Z', outcome: 'abandoned', team });

    expect(ids(await api.get(`${C}?surface=sms`))).toEqual([a]);
    expect(ids(await api.get(`${C}?status=active`))).toEqual([b]);
    expect(ids(await api.get(`${C}?outcome=abandoned`))).toEqual([c]);
    expect(ids(await api.get(`${C}?contact_id=${contact}`))).toEqual([a]);
    expect(ids(await api.get(`${C}?assignee_id=${member.id}`))).toEqual([b]);
    const teamRes = await api.get(`${C}?team_id=${team}`);
    expect(ids(teamRes)).toEqual([c, b]);
    expect(teamRes.body.total).toBe(2);
    expect(ids(await api.get(`${C}?team_id=${team}&widget_id=${agent.id}`))).toEqual([b]);
    expect(ids(await api.get(`${C}?from=2026-05-02T00:00:00.000Z&status=ended`))).toEqual([c]);
    // Another organization sees none of them.
    const other = await orgWithAgent(svc);
    expect(ids(await other.api.get(`${C}?team_id=${team}`))).toEqual([]);
  });

  it('refuses bad filters with a named field', async () => {
    const { api } = await orgWithAgent(svc);
    expectFieldError(await api.get(`${C}?surface=fax`), 'surface');
    expectFieldError(await api.get(`${C}?from=last-tuesday`), 'from');
    expectFieldError(await api.get(`${C}?assignee_id=nobody`), 'assignee_id');
    expectFieldError(await api.get(`${C}?q=${'x'.repeat(201)}`), 'q');
    expectFieldError(await api.get(`${C}?q=%20`), 'q');
  });
});
