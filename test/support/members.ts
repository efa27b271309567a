import { expect } from 'vitest';
import { call, client, type TestService } from '../helpers.ts';
import type { Api } from './orgs.ts';

const REST = '/api/v1/rest';
const PUBLIC = '/api/v1/public/widgets';

/** Adds a member through the API (201 expected) and issues their `ut_` token: the member, and a client holding the token. */
export async function newMember(svc: TestService, admin: Api, body: Record<string, unknown>) {
  const made = await admin.post(`${REST}/members`, { name: String(body.email).split('@')[0], ...body });
  expect(made.status, made.text).toBe(201);
  const token = await admin.post(`${REST}/members/${made.body.id}/token`, {});
  expect(token.status, token.text).toBe(201);
  return { member: made.body as Record<string, any>, token: token.body.token as string, api: client(svc.url, token.body.token) };
}

/** A visitor of `agent`'s widget who asks for a person at once; `say` writes again, `end` leaves. */
export async function visitorAsking(svc: TestService, agent: Record<string, any>) {
  const started = await call(svc.url, 'POST', `${PUBLIC}/${agent.public_key}/conversations`, { body: { page_url: 'https://example.com/' } });
  expect(started.status, started.text).toBe(201);
  const id = started.body.conversation_id as string;
  const headers = { 'x-visitor-token': started.body.visitor_token as string };
  const say = (text: string) => call(svc.url, 'POST', `${PUBLIC}/${agent.public_key}/conversations/${id}/messages`, { body: { text }, headers });
  expect((await say('Can I talk to a human please?')).status).toBe(200);
  const end = () => call(svc.url, 'POST', `${PUBLIC}/${agent.public_key}/conversations/${id}/end`, { headers });
  return { id, say, end };
}

/** The assignment history of a conversation, through the API. */
export async function historyOf(api: Api, conversationId: string): Promise<Record<string, any>[]> {
  const res = await api.get(`${REST}/conversations/${conversationId}/assignments`);
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

/** The e-mail a conversation is assigned to now (null: nobody), through the queue's `all` view or the live list. */
export async function assigneeOf(api: Api, conversationId: string): Promise<string | null> {
  const res = await api.get(`${REST}/conversations/queue?assigned=all`);
  expect(res.status, res.text).toBe(200);
  return res.body.data.find((c: any) => c.id === conversationId)?.assigned_to ?? null;
}
