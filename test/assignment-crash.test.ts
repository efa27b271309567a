import { expect, it } from 'vitest';
import { crashStage } from './support/crash-stage.ts';
import { eventually } from './helpers.ts';
import { newAgent, newOrg } from './support/orgs.ts';
import { historyOf, newMember, visitorAsking } from './support/members.ts';

/**
 * Issue 45: a worker killed with SIGKILL while the assignment workflows of many waiting conversations
 * are deciding, then restarted: every conversation is assigned exactly once.
 */

const SETTINGS = { ASSIGNMENT_ACCEPT_SECONDS: 600, ASSIGNMENT_RECHECK_SECONDS: 600, CONVERSATION_INACTIVITY_SECONDS: 600 } as const;
const SECRETS_KEY = Buffer.alloc(32, 45).toString('base64');
const CONVERSATIONS = 12;

const stage = crashStage(SETTINGS, SECRETS_KEY);
const { startWorkerProcess } = stage;

it('kill -9 of the worker mid-assignment: after a restart every waiting conversation is assigned exactly once', async () => {
  const worker = await startWorkerProcess();
  const { api: admin, orgId } = await newOrg(stage.api);
  const agent = await newAgent(admin, 'Support');
  // Nobody online yet (away: told, not assigned): every conversation waits in the queue, its workflow asleep.
  const emails = ['p@example.com', 'q@example.com', 'r@example.com'];
  const members = await Promise.all(emails.map((email) => newMember(stage.api, admin, { email, availability: 'away', max_conversations: 100 })));
  const visitors = [];
  for (let i = 0; i < CONVERSATIONS; i++) visitors.push(await visitorAsking(stage.api, agent));
  // Each workflow has decided once (queued) when it has told the three members.
  await eventually(async () => {
    const [row] = await stage.api.sql<{ n: number }[]>`select count(*)::int as n from live_events where org_id = ${orgId} and type = 'notification'`;
    return row!.n === CONVERSATIONS * emails.length;
  }, 60_000);
  // Members come online: every workflow is woken and assigns, while the worker is killed under it.
  await Promise.all(members.map((m) => m.api.patch('/api/v1/rest/members/me', { availability: 'online' })));
  await eventually(async () => {
    const [row] = await stage.api.sql<{ n: number }[]>`select count(*)::int as n from conversation_assignments where org_id = ${orgId}`;
    return row!.n > 0;
  }, 60_000, 5);
  worker.kill('SIGKILL');
  const [atKill] = await stage.api.sql<{ n: number }[]>`select count(*)::int as n from conversation_assignments where org_id = ${orgId}`;
  const restarted = await startWorkerProcess();
  await eventually(async () => (await admin.get('/api/v1/rest/conversations/queue?assigned=0')).body.data.length === 0, 120_000, 200);
  for (const v of visitors) {
    const steps = await historyOf(admin, v.id);
    expect(steps.map((s) => s.action), v.id).toEqual(['assigned']);
  }
  const events = await stage.api.sql<{ n: number }[]>`select count(*)::int as n from events where org_id = ${orgId} and type = 'conversation.assigned'`;
  expect(events[0]!.n).toBe(CONVERSATIONS);
  const open = await Promise.all(members.map(async (m) => (await m.api.get('/api/v1/rest/members/me')).body.open_conversations as number));
  expect(open.reduce((a, b) => a + b, 0)).toBe(CONVERSATIONS);
  expect(atKill!.n).toBeLessThanOrEqual(CONVERSATIONS);
  restarted.kill('SIGTERM');
}, 240_000);
