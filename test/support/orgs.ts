import { expect } from 'vitest';
import type { Permission } from '../../src/schemas/permissions.ts';
import { client, type TestService } from '../helpers.ts';

export type Api = ReturnType<typeof client>;

/** A fresh organization: a client holding its admin token (every permission), the token and the id. */
export async function newOrg(svc: TestService): Promise<{ api: Api; token: string; orgId: string }> {
  const { token, orgId } = await svc.newOrg();
  return { api: client(svc.url, token), token, orgId };
}

/** Creates an agent through the API (201 expected), from a name or a whole body, and returns it as the API answered. */
export async function newAgent(api: Api, nameOrBody: string | Record<string, unknown> = 'Front desk'): Promise<Record<string, any>> {
  const res = await api.post('/api/v1/rest/agents', typeof nameOrBody === 'string' ? { name: nameOrBody } : nameOrBody);
  expect(res.status, res.text).toBe(201);
  return res.body as Record<string, any>;
}

/** A fresh organization with one agent. */
export async function orgWithAgent(svc: TestService, nameOrBody?: string | Record<string, unknown>) {
  const org = await newOrg(svc);
  return { ...org, agent: await newAgent(org.api, nameOrBody) };
}

/**
 * Issues a key with exactly these permissions through the API (201 expected), on behalf of `admin`
 * (a client or a token), with `api`, a client holding the new key. `extra` adds request fields, such as `user_email`.
 */
export async function keyWith(svc: TestService, admin: Api | string, permissions: readonly (Permission | string)[], extra: Record<string, unknown> = {}) {
  const issuer = typeof admin === 'string' ? client(svc.url, admin) : admin;
  const res = await issuer.post('/api/v1/rest/api-keys', { name: `scoped ${permissions.join(' ')}`.slice(0, 100), permissions, ...extra });
  expect(res.status, res.text).toBe(201);
  const key = res.body as { id: string; token: string; kind: string };
  return { ...key, api: client(svc.url, key.token) };
}
