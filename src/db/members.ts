import { listPage, type Db } from './index.ts';
import { newId } from '../ids.ts';
import type { Availability, MemberRole, NotificationPreferences } from '../schemas/members.ts';

/**
 * Members (issue 45: name, role, availability, the agents they serve, a cap, notification preferences)
 * and teams (members, agents and channels routed to them). Returns rows or refusal values.
 */

export interface MemberRow {
  id: string; org_id: string; email: string; name: string; role: MemberRole; availability: Availability;
  agent_ids: string[]; team_ids: string[]; max_conversations: number; open_conversations: number; phone: string | null;
  notification_preferences: Partial<NotificationPreferences>; created_at: Date; updated_at: Date;
}

const memberColumns = (db: Db) => db`m.id, m.org_id, m.email, m.name, m.role, m.availability, m.max_conversations, m.phone,
  m.notification_preferences, m.created_at, m.updated_at,
  array(select agent_id from member_agents where member_id = m.id order by agent_id) as agent_ids,
  array(select team_id from team_members where member_id = m.id order by team_id) as team_ids,
  (select count(*)::int from conversations c where c.assigned_member_id = m.id and c.status = 'active') as open_conversations`;

export async function findMemberRow(db: Db, orgId: string, id: string): Promise<MemberRow | null> {
  const [row] = await db<MemberRow[]>`select ${memberColumns(db)} from members m where m.org_id = ${orgId} and m.id = ${id}`;
  return row ?? null;
}

export async function listMemberRows(db: Db, orgId: string, q: { limit: number; offset: number; availability?: string; role?: string }):
  Promise<{ data: MemberRow[]; total: number }> {
  return listPage<MemberRow, MemberRow>(db, {
    limit: q.limit, offset: q.offset,
    columns: memberColumns(db),
    from: db`from members m where m.org_id = ${orgId}
      ${q.availability ? db`and m.availability = ${q.availability}` : db``} ${q.role ? db`and m.role = ${q.role}` : db``}`,
    order: db`m.created_at desc, m.id desc`,
  }, (row) => row);
}

/** Inserts a member; the id of the member already holding the e-mail instead, when one does. */
export async function insertMember(db: Db, orgId: string, m: {
  email: string; name: string; role: MemberRole; availability: Availability; maxConversations: number; phone: string | null;
  preferences: Partial<NotificationPreferences>;
}): Promise<{ id: string } | { exists: string }> {
  const [row] = await db<{ id: string }[]>`
    insert into members (id, org_id, email, name, role, availability, max_conversations, phone, notification_preferences)
    values (${newId()}, ${orgId}, ${m.email}, ${m.name}, ${m.role}, ${m.availability}, ${m.maxConversations}, ${m.phone}, ${db.json(m.preferences)})
    on conflict (org_id, lower(email)) do nothing returning id`;
  if (row) return { id: row.id };
  const [existing] = await db<{ id: string }[]>`select id from members where org_id = ${orgId} and lower(email) = lower(${m.email})`;
  return { exists: existing!.id };
}

export async function updateMember(db: Db, orgId: string, id: string, patch: {
  name?: string; role?: MemberRole; availability?: Availability; maxConversations?: number; phone?: string | null;
  preferences?: Partial<NotificationPreferences>;
}): Promise<{ roleChanged: boolean } | null> {
  const [before] = await db<{ role: MemberRole }[]>`select role from members where org_id = ${orgId} and id = ${id} for update`;
  if (!before) return null;
  await db`update members set
      name = coalesce(${patch.name ?? null}, name),
      role = coalesce(${patch.role ?? null}, role),
      availability = coalesce(${patch.availability ?? null}, availability),
      max_conversations = coalesce(${patch.maxConversations ?? null}::int, max_conversations),
      phone = case when ${patch.phone !== undefined} then ${patch.phone ?? null} else phone end,
      notification_preferences = notification_preferences || ${db.json(patch.preferences ?? {})},
      updated_at = now()
    where id = ${id}`;
  return { roleChanged: patch.role !== undefined && patch.role !== before.role };
}

export async function setMemberAgents(db: Db, memberId: string, agentIds: string[]): Promise<void> {
  await db`delete from member_agents where member_id = ${memberId}`;
  if (agentIds.length) await db`insert into member_agents (member_id, agent_id) select ${memberId}, unnest(${agentIds}::uuid[])`;
}

/** Those of `ids` that are no live agent of the organization. */
export async function unknownAgents(db: Db, orgId: string, ids: string[]): Promise<string[]> {
  if (!ids.length) return [];
  const rows = await db<{ id: string }[]>`select id from unnest(${ids}::uuid[]) as ids(id)
    where not exists (select 1 from agents a where a.id = ids.id and a.org_id = ${orgId} and a.deleted_at is null)`;
  return rows.map((r) => r.id);
}

/** Those of `ids` that are no member of the organization. */
export async function unknownMembers(db: Db, orgId: string, ids: string[]): Promise<string[]> {
  if (!ids.length) return [];
  const rows = await db<{ id: string }[]>`select id from unnest(${ids}::uuid[]) as ids(id)
    where not exists (select 1 from members m where m.id = ids.id and m.org_id = ${orgId})`;
  return rows.map((r) => r.id);
}

/** The live keys of a member (what a delete or role change must tell every replica about). */
export async function liveKeysOfMember(db: Db, memberId: string, opts: { roleBound?: boolean } = {}): Promise<string[]> {
  const rows = await db<{ id: string }[]>`select id from api_keys where member_id = ${memberId} and revoked_at is null
    ${opts.roleBound ? db`and role_bound` : db``}`;
  return rows.map((r) => r.id);
}

/** Rewrites the permissions of the member's role-bound tokens and announces each on `channel`, so caches forget them. */
export async function rebindMemberTokens(db: Db, memberId: string, permissions: string[], channel: string): Promise<void> {
  const rows = await db<{ id: string }[]>`update api_keys set permissions = ${permissions}
    where member_id = ${memberId} and role_bound and revoked_at is null returning id`;
  for (const r of rows) await db`select pg_notify(${channel}, ${r.id})`;
}

/** Marks the member's live tokens (role-bound only, or all) revoked and announces each on `channel`. */
export async function revokeMemberTokens(db: Db, memberId: string, channel: string, opts: { roleBound?: boolean } = {}): Promise<number> {
  const rows = await db<{ id: string }[]>`update api_keys set revoked_at = now()
    where member_id = ${memberId} and revoked_at is null ${opts.roleBound ? db`and role_bound` : db``} returning id`;
  for (const r of rows) await db`select pg_notify(${channel}, ${r.id})`;
  return rows.length;
}

export async function markKeyRoleBound(db: Db, keyId: string): Promise<void> {
  await db`update api_keys set role_bound = true where id = ${keyId}`;
}

export async function deleteMemberRow(db: Db, orgId: string, id: string): Promise<boolean> {
  const rows = await db`delete from members where org_id = ${orgId} and id = ${id} returning id`;
  return rows.length > 0;
}

/** What authentication adds to a member token: the role and the agents served (an operator's scope). */
export async function memberScope(db: Db, memberId: string): Promise<{ role: MemberRole; agent_ids: string[] } | null> {
  const [row] = await db<{ role: MemberRole; agent_ids: string[] }[]>`select role,
    array(select agent_id from member_agents where member_id = m.id) as agent_ids from members m where id = ${memberId}`;
  return row ?? null;
}

// ---- teams

export interface TeamRow { id: string; name: string; member_ids: string[]; agent_ids: string[]; surfaces: string[]; created_at: Date; updated_at: Date }

const teamColumns = (db: Db) => db`t.id, t.name, t.surfaces, t.created_at, t.updated_at,
  array(select member_id from team_members where team_id = t.id order by member_id) as member_ids,
  array(select agent_id from team_agents where team_id = t.id order by agent_id) as agent_ids`;

export async function findTeamRow(db: Db, orgId: string, id: string): Promise<TeamRow | null> {
  const [row] = await db<TeamRow[]>`select ${teamColumns(db)} from teams t where t.org_id = ${orgId} and t.id = ${id}`;
  return row ?? null;
}

export async function listTeamRows(db: Db, orgId: string, q: { limit: number; offset: number }): Promise<{ data: TeamRow[]; total: number }> {
  return listPage<TeamRow, TeamRow>(db, {
    ...q, columns: teamColumns(db), from: db`from teams t where t.org_id = ${orgId}`, order: db`t.created_at desc, t.id desc`,
  }, (row) => row);
}

/** Inserts a team, or answers `taken` when the organization has one of that name. */
export async function insertTeam(db: Db, orgId: string, t: { name: string; surfaces: string[] }): Promise<string | 'taken'> {
  const [row] = await db<{ id: string }[]>`insert into teams (id, org_id, name, surfaces) values (${newId()}, ${orgId}, ${t.name}, ${t.surfaces})
    on conflict (org_id, lower(name)) do nothing returning id`;
  return row?.id ?? 'taken';
}

export async function updateTeam(db: Db, orgId: string, id: string, t: { name?: string; surfaces?: string[] }): Promise<boolean | 'taken'> {
  if (t.name !== undefined) {
    const [clash] = await db`select 1 from teams where org_id = ${orgId} and lower(name) = lower(${t.name}) and id <> ${id}`;
    if (clash) return 'taken';
  }
  const rows = await db`update teams set name = coalesce(${t.name ?? null}, name), surfaces = coalesce(${t.surfaces ?? null}::text[], surfaces),
    updated_at = now() where org_id = ${orgId} and id = ${id} returning id`;
  return rows.length > 0;
}

export async function setTeamMembers(db: Db, teamId: string, memberIds: string[]): Promise<void> {
  await db`delete from team_members where team_id = ${teamId}`;
  if (memberIds.length) await db`insert into team_members (team_id, member_id) select ${teamId}, unnest(${memberIds}::uuid[])`;
}

export async function setTeamAgents(db: Db, teamId: string, agentIds: string[]): Promise<void> {
  await db`delete from team_agents where team_id = ${teamId}`;
  if (agentIds.length) await db`insert into team_agents (team_id, agent_id) select ${teamId}, unnest(${agentIds}::uuid[])`;
}

export async function deleteTeamRow(db: Db, orgId: string, id: string): Promise<boolean> {
  const rows = await db`delete from teams where org_id = ${orgId} and id = ${id} returning id`;
  return rows.length > 0;
}
