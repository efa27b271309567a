import type { Db } from './index.ts';
import { newId } from '../ids.ts';
import type { Assignment } from '../schemas/assignments.ts';
import type { NotificationPreferences } from '../schemas/members.ts';

/**
 * Assignment (issue 45): which team a conversation is routed to, which member gets it (round-robin
 * among the team's online members under their cap), the assignment history, the queue, and the
 * notices members receive on the live stream. Decisions are taken under the conversation's row lock
 * and an organization-wide advisory lock, so two assigners never both see a free slot.
 */

/** What an assignment decides on, locked for its transaction. */
export interface WaitingConversation {
  id: string; orgId: string; agentId: string; surface: string; status: 'active' | 'ended'; mode: 'agent' | 'human';
  needsHuman: boolean; assignedMemberId: string | null; teamId: string | null; isSimulated: boolean;
}

export async function lockWaiting(db: Db, conversationId: string, orgId?: string): Promise<WaitingConversation | null> {
  const [row] = await db<{ id: string; org_id: string; agent_id: string; surface: string; status: 'active' | 'ended'; mode: 'agent' | 'human';
    needs_human: boolean; assigned_member_id: string | null; team_id: string | null; is_simulated: boolean }[]>`
    select c.id, c.org_id, c.agent_id, c.surface, c.status, c.mode, c.needs_human, c.assigned_member_id, c.team_id, c.is_simulated
    from conversations c join agents a on a.id = c.agent_id and a.deleted_at is null
    where c.id = ${conversationId} ${orgId ? db`and c.org_id = ${orgId}` : db``} for update of c`;
  if (!row) return null;
  // Serializes assignment decisions within the organization: caps are counted across conversations.
  await db`select pg_advisory_xact_lock(hashtext('assignment:' || ${row.org_id}))`;
  return {
    id: row.id, orgId: row.org_id, agentId: row.agent_id, surface: row.surface, status: row.status, mode: row.mode, needsHuman: row.needs_human,
    assignedMemberId: row.assigned_member_id, teamId: row.team_id, isSimulated: row.is_simulated,
  };
}

/** The team a conversation goes to: the oldest team naming its agent, else the oldest taking its channel; null when none. */
export async function routedTeam(db: Db, orgId: string, agentId: string, surface: string): Promise<string | null> {
  const [row] = await db<{ id: string }[]>`select t.id from teams t where t.org_id = ${orgId}
      and (exists (select 1 from team_agents ta where ta.team_id = t.id and ta.agent_id = ${agentId}) or ${surface} = any(t.surfaces))
    order by exists (select 1 from team_agents ta where ta.team_id = t.id and ta.agent_id = ${agentId}) desc, t.created_at, t.id limit 1`;
  return row?.id ?? null;
}

/** Members who may take the conversation: of the team (or, with no team, of the organization), serving the agent. */
const eligible = (db: Db, orgId: string, agentId: string, teamId: string | null) => db`m.org_id = ${orgId}
  and (not exists (select 1 from member_agents ma where ma.member_id = m.id) or exists (select 1 from member_agents ma where ma.member_id = m.id and ma.agent_id = ${agentId}))
  ${teamId ? db`and exists (select 1 from team_members tm where tm.team_id = ${teamId} and tm.member_id = m.id)` : db``}`;

/**
 * The next member round-robin: online, under their cap of open conversations, not in `exclude`,
 * the one assigned longest ago (never assigned first). Null when nobody is free.
 */
export async function nextMember(db: Db, c: { orgId: string; agentId: string; teamId: string | null }, exclude: string[]): Promise<{ id: string; email: string } | null> {
  const [row] = await db<{ id: string; email: string }[]>`select m.id, m.email from members m
    where ${eligible(db, c.orgId, c.agentId, c.teamId)} and m.availability = 'online' and m.id <> all(${exclude}::uuid[])
      and (select count(*) from conversations o where o.assigned_member_id = m.id and o.status = 'active') < m.max_conversations
    order by m.last_assigned_at nulls first, m.id limit 1`;
  return row ?? null;
}

/** Members to tell that a conversation waits: online or away, of its team (or organization), serving its agent. */
export async function membersToTell(db: Db, c: { orgId: string; agentId: string; teamId: string | null }):
  Promise<{ id: string; email: string; name: string; phone: string | null; prefs: Partial<NotificationPreferences> }[]> {
  return db`select m.id, m.email, m.name, m.phone, m.notification_preferences as prefs from members m
    where ${eligible(db, c.orgId, c.agentId, c.teamId)} and m.availability <> 'offline' order by m.id`;
}

export async function memberForNotice(db: Db, id: string): Promise<{ id: string; email: string; name: string; phone: string | null; prefs: Partial<NotificationPreferences> } | null> {
  const [row] = await db<{ id: string; email: string; name: string; phone: string | null; prefs: Partial<NotificationPreferences> }[]>`
    select id, email, name, phone, notification_preferences as prefs from members where id = ${id}`;
  return row ?? null;
}

export async function memberAvailability(db: Db, id: string): Promise<string | null> {
  const [row] = await db<{ availability: string }[]>`select availability from members where id = ${id}`;
  return row?.availability ?? null;
}

/**
 * Sets (or clears) the assignee and the routed team; the member's round-robin turn moves on. A cleared
 * assignee puts the conversation back in the queue, unless `requeue` is false (handed back to the agent).
 */
export async function setAssignee(db: Db, conversationId: string, memberId: string | null, teamId: string | null, opts: { requeue?: boolean } = {}): Promise<void> {
  const requeue = memberId === null && opts.requeue !== false;
  await db`update conversations set assigned_member_id = ${memberId}, team_id = coalesce(${teamId}, team_id),
    assigned_at = case when ${memberId}::uuid is null then null else now() end,
    needs_human = case when ${requeue} and mode = 'agent' and status = 'active' then true else needs_human end,
    queued_at = case when ${requeue} then coalesce(queued_at, now()) else queued_at end
    where id = ${conversationId}`;
  if (memberId) await db`update members set last_assigned_at = clock_timestamp() where id = ${memberId}`;
}

export async function setRoutedTeam(db: Db, conversationId: string, teamId: string | null): Promise<void> {
  await db`update conversations set team_id = ${teamId} where id = ${conversationId} and team_id is distinct from ${teamId}`;
}

interface AssignmentRow { id: string; conversation_id: string; action: Assignment['action']; member_id: string | null; member_email: string | null;
  team_id: string | null; reason: Assignment['reason']; by_member_id: string | null; created_at: Date }

const toAssignment = (r: AssignmentRow): Assignment => ({ ...r, created_at: r.created_at.toISOString() });

export async function insertAssignment(db: Db, a: {
  orgId: string; conversationId: string; action: Assignment['action']; memberId: string | null; teamId: string | null; reason: Assignment['reason']; byMemberId: string | null;
}): Promise<Assignment> {
  const [row] = await db<AssignmentRow[]>`with a as (
      insert into conversation_assignments (id, org_id, conversation_id, action, member_id, team_id, reason, by_member_id)
      values (${newId()}, ${a.orgId}, ${a.conversationId}, ${a.action}, ${a.memberId}, ${a.teamId}, ${a.reason}, ${a.byMemberId}) returning *)
    select a.id, a.conversation_id, a.action, a.member_id, (select email from members where id = a.member_id) as member_email,
      a.team_id, a.reason, a.by_member_id, a.created_at from a`;
  return toAssignment(row!);
}

/** Whether the conversation was ever assigned before (a new assignment is then a reassignment). */
export async function wasAssigned(db: Db, conversationId: string): Promise<boolean> {
  const [row] = await db`select 1 from conversation_assignments where conversation_id = ${conversationId} and action <> 'released' limit 1`;
  return Boolean(row);
}

/** The latest assignment step of the conversation to this member (what its notice is keyed by, and why it was made); null when none. */
export async function latestAssignmentTo(db: Db, conversationId: string, memberId: string): Promise<{ id: string; reason: Assignment['reason'] } | null> {
  const [row] = await db<{ id: string; reason: Assignment['reason'] }[]>`select id, reason from conversation_assignments where conversation_id = ${conversationId}
    and member_id = ${memberId} and action <> 'released' order by created_at desc, id desc limit 1`;
  return row ?? null;
}

export async function listAssignments(db: Db, conversationId: string): Promise<Assignment[]> {
  const rows = await db<AssignmentRow[]>`select a.id, a.conversation_id, a.action, a.member_id, m.email as member_email, a.team_id, a.reason,
      a.by_member_id, a.created_at
    from conversation_assignments a left join members m on m.id = a.member_id
    where a.conversation_id = ${conversationId} order by a.created_at, a.id`;
  return rows.map(toAssignment);
}

export interface QueueRow { id: string; widget_id: string; surface: string; team_id: string | null; queued_at: Date; assigned_to: string | null; last_message: string | null }

/**
 * Conversations waiting for a person (active, answered by the agent, a person asked for), oldest first:
 * unassigned ones (`assigned` 0), those assigned but not taken over (1), or both; within `agentScope` when given.
 */
export async function listQueue(db: Db, orgId: string, q: { assigned: '0' | '1' | 'all'; teamId?: string; agentScope: readonly string[] | null }): Promise<QueueRow[]> {
  return db<QueueRow[]>`select c.id, c.agent_id as widget_id, c.surface, c.team_id, coalesce(c.queued_at, c.last_activity_at) as queued_at,
      (select email from members where id = c.assigned_member_id) as assigned_to,
      (select text from conversation_messages where conversation_id = c.id and role in ('visitor', 'caller') order by ts desc, id desc limit 1) as last_message
    from conversations c join agents a on a.id = c.agent_id and a.deleted_at is null
    where c.org_id = ${orgId} and c.status = 'active' and c.mode = 'agent' and c.needs_human and not c.is_simulated
      ${q.assigned === '0' ? db`and c.assigned_member_id is null` : q.assigned === '1' ? db`and c.assigned_member_id is not null` : db``}
      ${q.teamId ? db`and c.team_id = ${q.teamId}` : db``}
      ${q.agentScope ? db`and c.agent_id = any(${q.agentScope as string[]}::uuid[])` : db``}
    order by coalesce(c.queued_at, c.last_activity_at), c.id limit 500`;
}

/** Conversations of the organization waiting for a person (assigned or not): whose assignment workflows to wake. */
export async function waitingConversationIds(db: Db, orgId: string): Promise<string[]> {
  const rows = await db<{ id: string }[]>`select id from conversations where org_id = ${orgId} and status = 'active' and mode = 'agent'
    and needs_human and not is_simulated order by queued_at nulls last limit 1000`;
  return rows.map((r) => r.id);
}

/** The member a conversation is assigned to (null: nobody), with its organization. */
export async function conversationAssignee(db: Db, conversationId: string): Promise<{ memberId: string; orgId: string } | null> {
  const [row] = await db<{ member_id: string; org_id: string }[]>`select assigned_member_id as member_id, org_id from conversations
    where id = ${conversationId} and assigned_member_id is not null`;
  return row ? { memberId: row.member_id, orgId: row.org_id } : null;
}

/** A notice for one member (or, with no member, for every reader in scope) on the live stream. */
export async function insertNotice(db: Db, orgId: string, conversationId: string, data: Record<string, unknown>): Promise<void> {
  await db`insert into live_events (org_id, conversation_id, type, data) values (${orgId}, ${conversationId}, 'notification', ${db.json(data as never)})`;
}

/** The agent of an organization's conversation (of a live agent); null when not in the organization. */
export async function conversationAgentOf(db: Db, orgId: string, conversationId: string): Promise<string | null> {
  const [row] = await db<{ agent_id: string }[]>`select c.agent_id from conversations c join agents a on a.id = c.agent_id and a.deleted_at is null
    where c.id = ${conversationId} and c.org_id = ${orgId}`;
  return row?.agent_id ?? null;
}
