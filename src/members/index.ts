import type { Authenticator, Principal } from '../auth/authenticator.ts';
import { KEY_REVOKED_CHANNEL } from '../auth/authenticator.ts';
import { createApiKey, type ApiKey } from '../auth/keys.ts';
import type { FamilyDeps } from '../deps.ts';
import type { Db } from '../db/index.ts';
import {
  deleteMemberRow, findMemberRow, findTeamRow, insertMember, insertTeam, listMemberRows, listTeamRows, liveKeysOfMember, markKeyRoleBound,
  rebindMemberTokens, revokeMemberTokens, setMemberAgents, setTeamAgents, setTeamMembers, unknownAgents, unknownMembers, updateMember, updateTeam,
  deleteTeamRow, type MemberRow, type TeamRow,
} from '../db/members.ts';
import { AppError, fieldError, missingPermission, notFound } from '../errors.ts';
import {
  DEFAULT_PREFERENCES, ROLE_PERMISSIONS, type Member, type MemberCreate, type MemberPatch, type MemberRole, type Team, type TeamCreate, type TeamPatch,
} from '../schemas/members.ts';
import { pokeWaitingConversations } from '../assignments/index.ts';

/**
 * Members and teams (issue 45). A member signs in with a `ut_` token this resource issues, rotates
 * and revokes; the token's permissions are the member's role's, and follow the role when it changes.
 * An operator serving some agents sees only their conversations (the principal's `agentScope`).
 */

type Deps = Pick<FamilyDeps, 'sql' | 'temporal' | 'config' | 'log'> & { authenticator: Pick<Authenticator, 'forget'> };

export const toMember = (r: MemberRow): Member => ({
  id: r.id, email: r.email, name: r.name, role: r.role, availability: r.availability, agent_ids: r.agent_ids, team_ids: r.team_ids,
  max_conversations: r.max_conversations, open_conversations: r.open_conversations, phone: r.phone,
  notification_preferences: { ...DEFAULT_PREFERENCES, ...r.notification_preferences },
  created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString(),
});

const toTeam = (r: TeamRow): Team => ({
  id: r.id, name: r.name, member_ids: r.member_ids, agent_ids: r.agent_ids, surfaces: r.surfaces as Team['surfaces'],
  created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString(),
});

/** A principal may hand out only a role whose every permission it holds itself. */
function checkGrant(principal: Pick<Principal, 'permissions'>, role: MemberRole): void {
  const lacking = ROLE_PERMISSIONS[role].find((p) => !principal.permissions.has(p));
  if (lacking) throw missingPermission(lacking);
}

async function checkAgents(db: Db, orgId: string, ids: string[] | undefined, field = 'agent_ids'): Promise<void> {
  const unknown = await unknownAgents(db, orgId, ids ?? []);
  if (unknown.length) throw fieldError(`${field}[${ids!.indexOf(unknown[0]!)}]`, 'unknown_agent', `agent ${unknown[0]} is not an agent of this organization`);
}

export async function getMember(db: Db, orgId: string, id: string): Promise<Member> {
  const row = await findMemberRow(db, orgId, id);
  if (!row) throw notFound('member');
  return toMember(row);
}

export async function listMembers(db: Db, orgId: string, q: { limit: number; offset: number; availability?: string; role?: string }) {
  const page = await listMemberRows(db, orgId, q);
  return { data: page.data.map(toMember), total: page.total };
}

export async function createMember(deps: Deps, principal: Principal, body: MemberCreate): Promise<Member> {
  const role = body.role ?? 'operator';
  checkGrant(principal, role);
  const member = await deps.sql.begin(async (tx) => {
    await checkAgents(tx, principal.orgId, body.agent_ids);
    const made = await insertMember(tx, principal.orgId, {
      email: body.email, name: body.name, role, availability: body.availability ?? 'offline', maxConversations: body.max_conversations ?? 5,
      phone: body.phone ?? null, preferences: body.notification_preferences ?? {},
    });
    if ('exists' in made) {
      throw new AppError(409, 'member_exists', `a member with e-mail ${body.email} already exists`, { extra: { member_id: made.exists } });
    }
    if (body.agent_ids?.length) await setMemberAgents(tx, made.id, body.agent_ids);
    return getMember(tx, principal.orgId, made.id);
  });
  if (member.availability === 'online') await pokeWaitingConversations(deps, principal.orgId);
  return member;
}

/** Changes a member; a role change rewrites the member's tokens' permissions, and a scope change reaches every replica. */
export async function changeMember(deps: Deps, principal: Principal, id: string, patch: MemberPatch): Promise<Member> {
  if (patch.role) checkGrant(principal, patch.role);
  const member = await deps.sql.begin(async (tx) => {
    await checkAgents(tx, principal.orgId, patch.agent_ids);
    const changed = await updateMember(tx, principal.orgId, id, {
      name: patch.name, role: patch.role, availability: patch.availability, maxConversations: patch.max_conversations, phone: patch.phone,
      preferences: patch.notification_preferences,
    });
    if (!changed) throw notFound('member');
    if (patch.agent_ids) await setMemberAgents(tx, id, patch.agent_ids);
    if (changed.roleChanged) await rebindMemberTokens(tx, id, [...ROLE_PERMISSIONS[patch.role!]], KEY_REVOKED_CHANNEL);
    return getMember(tx, principal.orgId, id);
  });
  // Cached principals carry the role's scope: this replica forgets them now, the others on NOTIFY.
  if (patch.role || patch.agent_ids) for (const key of await liveKeysOfMember(deps.sql, id)) deps.authenticator.forget(key);
  if (patch.availability || patch.max_conversations) await pokeWaitingConversations(deps, principal.orgId);
  return member;
}

/** Deletes a member: their tokens stop working at once, their conversations go back to the queue. */
export async function removeMember(deps: Deps, principal: Principal, id: string): Promise<void> {
  const existing = await findMemberRow(deps.sql, principal.orgId, id);
  if (!existing) throw notFound('member');
  checkGrant(principal, existing.role);
  const keys = await liveKeysOfMember(deps.sql, id);
  await deps.sql.begin(async (tx) => {
    await revokeMemberTokens(tx, id, KEY_REVOKED_CHANNEL);
    if (!(await deleteMemberRow(tx, principal.orgId, id))) throw notFound('member');
  });
  for (const key of keys) deps.authenticator.forget(key);
  await pokeWaitingConversations(deps, principal.orgId);
}

/**
 * Issues the member a `ut_` token holding the role's permissions (shown once). `rotate` first revokes
 * the tokens this resource issued before: the new one replaces them.
 */
export async function issueMemberToken(deps: Deps, principal: Principal, id: string, opts: { rotate: boolean }): Promise<ApiKey & { token: string }> {
  const existing = await findMemberRow(deps.sql, principal.orgId, id);
  if (!existing) throw notFound('member');
  checkGrant(principal, existing.role);
  const before = opts.rotate ? await liveKeysOfMember(deps.sql, id, { roleBound: true }) : [];
  const key = await deps.sql.begin(async (tx) => {
    if (opts.rotate) await revokeMemberTokens(tx, id, KEY_REVOKED_CHANNEL, { roleBound: true });
    const issued = await createApiKey(tx, principal.orgId, { name: `${existing.name} (member token)`, permissions: ROLE_PERMISSIONS[existing.role], userEmail: existing.email });
    await markKeyRoleBound(tx, issued.id);
    return issued;
  });
  for (const k of before) deps.authenticator.forget(k);
  return key;
}

/** Revokes every token the member resource issued to the member. */
export async function revokeMemberToken(deps: Deps, principal: Principal, id: string): Promise<void> {
  const existing = await findMemberRow(deps.sql, principal.orgId, id);
  if (!existing) throw notFound('member');
  checkGrant(principal, existing.role);
  const keys = await liveKeysOfMember(deps.sql, id, { roleBound: true });
  await deps.sql.begin((tx) => revokeMemberTokens(tx, id, KEY_REVOKED_CHANNEL, { roleBound: true }));
  for (const k of keys) deps.authenticator.forget(k);
}

// ---- teams

async function checkTeamRefs(db: Db, orgId: string, body: { member_ids?: string[]; agent_ids?: string[] }): Promise<void> {
  const members = await unknownMembers(db, orgId, body.member_ids ?? []);
  if (members.length) throw fieldError(`member_ids[${body.member_ids!.indexOf(members[0]!)}]`, 'unknown_member', `member ${members[0]} is not a member of this organization`);
  await checkAgents(db, orgId, body.agent_ids);
}

export async function getTeam(db: Db, orgId: string, id: string): Promise<Team> {
  const row = await findTeamRow(db, orgId, id);
  if (!row) throw notFound('team');
  return toTeam(row);
}

export async function listTeams(db: Db, orgId: string, q: { limit: number; offset: number }) {
  const page = await listTeamRows(db, orgId, q);
  return { data: page.data.map(toTeam), total: page.total };
}

const nameTaken = (name: string) => new AppError(409, 'name_taken', `a team named "${name}" already exists`);

export async function createTeam(deps: Deps, orgId: string, body: TeamCreate): Promise<Team> {
  const team = await deps.sql.begin(async (tx) => {
    await checkTeamRefs(tx, orgId, body);
    const id = await insertTeam(tx, orgId, { name: body.name, surfaces: body.surfaces ?? [] });
    if (id === 'taken') throw nameTaken(body.name);
    if (body.member_ids?.length) await setTeamMembers(tx, id, body.member_ids);
    if (body.agent_ids?.length) await setTeamAgents(tx, id, body.agent_ids);
    return getTeam(tx, orgId, id);
  });
  await pokeWaitingConversations(deps, orgId);
  return team;
}

export async function changeTeam(deps: Deps, orgId: string, id: string, patch: TeamPatch): Promise<Team> {
  const team = await deps.sql.begin(async (tx) => {
    await checkTeamRefs(tx, orgId, patch);
    const done = await updateTeam(tx, orgId, id, { name: patch.name, surfaces: patch.surfaces });
    if (done === 'taken') throw nameTaken(patch.name!);
    if (!done) throw notFound('team');
    if (patch.member_ids) await setTeamMembers(tx, id, patch.member_ids);
    if (patch.agent_ids) await setTeamAgents(tx, id, patch.agent_ids);
    return getTeam(tx, orgId, id);
  });
  await pokeWaitingConversations(deps, orgId);
  return team;
}

export async function removeTeam(deps: Deps, orgId: string, id: string): Promise<void> {
  if (!(await deleteTeamRow(deps.sql, orgId, id))) throw notFound('team');
  await pokeWaitingConversations(deps, orgId);
}
