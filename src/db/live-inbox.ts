import type { Db } from './index.ts';
import { newId } from '../ids.ts';
import type { MessageRole } from '../runtime/types.ts';
import type { Annotations, ConversationMode, LiveConversation, Note } from '../schemas/live-inbox.ts';

/**
 * The live inbox's reads and writes on conversations: mode (agent or human), assignment, presence,
 * what members have read, annotations, and the live event log the stream replays. The triggers of
 * migration 016 turn these changes (and every message) into `live_events` rows and NOTIFYs.
 */

/** Text surfaces: what the live inbox shows and a member may take over. */
export const TEXT_SURFACES = ['web', 'sms', 'email'] as const;

/** Seconds since the visitor's last poll or message within which they count as `online`. */
const ONLINE_SECONDS = 30;

interface LiveRow {
  id: string; widget_id: string; surface: LiveConversation['surface']; status: LiveConversation['status']; started_at: Date;
  last_activity_at: Date; online: boolean; unread_count: number; assigned_to: string | null; mode: ConversationMode;
  held_by: string | null; needs_human: boolean; contact_id: string | null;
  last_id: string | null; last_role: MessageRole | null; last_text: string | null; last_ts: Date | null;
}

const toLive = (r: LiveRow): LiveConversation => ({
  id: r.id, widget_id: r.widget_id, surface: r.surface, status: r.status, started_at: r.started_at.toISOString(),
  last_activity_at: r.last_activity_at.toISOString(), presence: r.online ? 'online' : 'offline', unread_count: r.unread_count,
  assigned_to: r.assigned_to, mode: r.mode, held_by: r.held_by, needs_human: r.needs_human, contact_id: r.contact_id,
  last_message: r.last_id ? { id: r.last_id, role: r.last_role!, text: r.last_text!, ts: r.last_ts!.toISOString() } : null,
});

/** The live row of conversations `c` (joined to agent `a`) for `memberId` (null: an org key, which reads nothing). */
const liveSelect = (db: Db, memberId: string | null) => db`
  select c.id, c.agent_id as widget_id, c.surface, c.status, c.started_at, c.last_activity_at,
    coalesce(c.visitor_seen_at > now() - make_interval(secs => ${ONLINE_SECONDS}), false) as online,
    (select count(*)::int from conversation_messages m where m.conversation_id = c.id and m.role in ('visitor', 'caller')
      and m.ts > coalesce((select r.read_at from conversation_reads r where r.conversation_id = c.id and r.member_id = ${memberId}), '-infinity')
    ) as unread_count,
    (select email from members where id = c.assigned_member_id) as assigned_to, c.mode,
    (select email from members where id = c.held_by_member_id) as held_by, c.needs_human, c.contact_id,
    l.id as last_id, l.role as last_role, l.text as last_text, l.ts as last_ts
  from conversations c
  join agents a on a.id = c.agent_id and a.deleted_at is null
  left join lateral (select id, role, text, ts from conversation_messages where conversation_id = c.id order by ts desc, id desc limit 1) l on true`;

/** The organization's conversations in progress on text surfaces, most recently active first (500 at most). */
export async function listLiveConversations(db: Db, orgId: string, memberId: string | null, agentScope: readonly string[] | null = null): Promise<LiveConversation[]> {
  const rows = await db<LiveRow[]>`${liveSelect(db, memberId)}
    where c.org_id = ${orgId} ${agentScope ? db`and c.agent_id = any(${agentScope as string[]}::uuid[])` : db``} and c.status = 'active' and not c.is_simulated and c.surface = any(${TEXT_SURFACES as unknown as string[]})
    order by c.last_activity_at desc, c.id desc limit 500`;
  return rows.map(toLive);
}

/** One conversation as the live inbox shows it (any surface, any state); null when not in the organization. */
export async function findLiveConversation(db: Db, orgId: string, id: string, memberId: string | null): Promise<LiveConversation | null> {
  const [row] = await db<LiveRow[]>`${liveSelect(db, memberId)} where c.id = ${id} and c.org_id = ${orgId}`;
  return row ? toLive(row) : null;
}

/** What an advisor action decides on, locked for the action's transaction. */
export interface AdvisableConversation {
  id: string; orgId: string; agentId: string; surface: string; status: 'active' | 'ended'; mode: ConversationMode;
  heldBy: string | null; isSimulated: boolean; lastSeenAt: Date; emailInboxId: string | null;
}

export async function lockAdvisable(db: Db, orgId: string, id: string): Promise<AdvisableConversation | null> {
  const [row] = await db<{ id: string; org_id: string; agent_id: string; surface: string; status: 'active' | 'ended'; mode: ConversationMode;
    held_by_member_id: string | null; is_simulated: boolean; last_seen_at: Date; email_inbox_id: string | null }[]>`
    select c.id, c.org_id, c.agent_id, c.surface, c.status, c.mode, c.held_by_member_id, c.is_simulated, c.email_inbox_id,
      greatest(c.last_activity_at, coalesce(c.visitor_seen_at, c.last_activity_at)) as last_seen_at
    from conversations c join agents a on a.id = c.agent_id and a.deleted_at is null
    where c.id = ${id} and c.org_id = ${orgId} for update of c`;
  return row ? {
    id: row.id, orgId: row.org_id, agentId: row.agent_id, surface: row.surface, status: row.status, mode: row.mode,
    heldBy: row.held_by_member_id, isSimulated: row.is_simulated, lastSeenAt: row.last_seen_at, emailInboxId: row.email_inbox_id,
  } : null;
}

/** Who answers: `human` with the member holding it, or back to the agent. */
export async function setConversationMode(db: Db, id: string, mode: ConversationMode, memberId: string | null): Promise<void> {
  await db`update conversations set mode = ${mode}, held_by_member_id = ${memberId},
    needs_human = case when ${mode} = 'human' then false else needs_human end where id = ${id}`;
}

/** The member has read everything up to now. */
export async function markConversationRead(db: Db, id: string, memberId: string): Promise<void> {
  await db`insert into conversation_reads (conversation_id, member_id, read_at) values (${id}, ${memberId}, clock_timestamp())
    on conflict (conversation_id, member_id) do update set read_at = excluded.read_at`;
}

/** The visitor polled or wrote: they are here. */
export async function touchVisitor(db: Db, id: string): Promise<void> {
  await db`update conversations set visitor_seen_at = now() where id = ${id}`;
}

/** The visitor asked for a person (or the agent offered one): the inbox flags it until a member takes over. */
export async function flagNeedsHuman(db: Db, id: string): Promise<void> {
  await db`update conversations set needs_human = true, queued_at = coalesce(queued_at, now()) where id = ${id} and mode = 'agent' and not needs_human`;
}

/** Seconds a member's last look at the live inbox keeps it staffed: longer than a live stream lasts before it reconnects. */
export const STAFFED_SECONDS = 600;

/** The member is looking at the live inbox (its list, its stream, an advisor action). */
export async function touchInboxMember(db: Db, memberId: string): Promise<void> {
  await db`update members set live_inbox_seen_at = now() where id = ${memberId}
    and (live_inbox_seen_at is null or live_inbox_seen_at < now() - interval '5 seconds')`;
}

/** Whether a member of the organization looked at the live inbox in the last STAFFED_SECONDS: a person can join. */
export async function inboxStaffed(db: Db, orgId: string): Promise<boolean> {
  const [row] = await db<{ staffed: boolean }[]>`select exists (select 1 from members where org_id = ${orgId}
    and live_inbox_seen_at > now() - make_interval(secs => ${STAFFED_SECONDS})) as staffed`;
  return row?.staffed ?? false;
}

/** Moves the conversation's activity time (a member's reply counts as activity). */
export async function touchActivity(db: Db, id: string): Promise<void> {
  await db`update conversations set last_activity_at = now() where id = ${id}`;
}

export interface Member { id: string; email: string; name: string }

export async function findMemberByEmail(db: Db, orgId: string, email: string): Promise<Member | null> {
  const [row] = await db<Member[]>`select id, email, name from members where org_id = ${orgId} and lower(email) = lower(${email})`;
  return row ?? null;
}

export async function findMember(db: Db, id: string): Promise<Member | null> {
  const [row] = await db<Member[]>`select id, email, name from members where id = ${id}`;
  return row ?? null;
}

// ---- annotations

export async function findAnnotations(db: Db, orgId: string, id: string): Promise<Annotations | null> {
  const [row] = await db<{ tags: string[]; labels: string[]; summary_rating: number | null }[]>`
    select c.tags, c.labels, c.summary_rating from conversations c join agents a on a.id = c.agent_id and a.deleted_at is null
    where c.id = ${id} and c.org_id = ${orgId}`;
  if (!row) return null;
  return { tags: row.tags, labels: row.labels, summary_rating: row.summary_rating, notes: await listNotes(db, id) };
}

async function listNotes(db: Db, conversationId: string): Promise<Note[]> {
  const rows = await db<{ id: string; text: string; author: string; created_at: Date }[]>`
    select id, text, author, created_at from conversation_notes where conversation_id = ${conversationId} order by created_at, id`;
  return rows.map((n) => ({ id: n.id, text: n.text, author: n.author, created_at: n.created_at.toISOString() }));
}

/** Replaces the given annotation fields (already folded); false when the conversation is not in the organization. */
export async function updateAnnotations(db: Db, orgId: string, id: string, patch: { tags?: string[]; labels?: string[]; summary_rating?: number | null }): Promise<boolean> {
  const rows = await db`update conversations c set
      tags = coalesce(${patch.tags ?? null}::text[], c.tags),
      labels = coalesce(${patch.labels ?? null}::text[], c.labels),
      summary_rating = case when ${patch.summary_rating !== undefined} then ${patch.summary_rating ?? null}::smallint else c.summary_rating end
    from agents a where a.id = c.agent_id and a.deleted_at is null and c.id = ${id} and c.org_id = ${orgId} returning c.id`;
  return rows.length > 0;
}

export async function insertNote(db: Db, conversationId: string, note: { memberId: string | null; author: string; text: string }): Promise<Note> {
  const [row] = await db<{ id: string; text: string; author: string; created_at: Date }[]>`
    insert into conversation_notes (id, conversation_id, author_member_id, author, text)
    values (${newId()}, ${conversationId}, ${note.memberId}, ${note.author}, ${note.text}) returning id, text, author, created_at`;
  return { id: row!.id, text: row!.text, author: row!.author, created_at: row!.created_at.toISOString() };
}

// ---- the live event log

export interface LiveEvent { id: string; type: string; data: Record<string, unknown>; /** The conversation's agent (an operator's stream keeps only theirs). */ agentId?: string | null }

/** An organization's live events after `afterId`, within the replay window, oldest first (1000 at most). */
export async function liveEventsAfter(db: Db, orgId: string, afterId: string, windowSeconds: number): Promise<LiveEvent[]> {
  const rows = await db<{ id: string; type: string; data: Record<string, unknown>; agentId: string | null }[]>`
    select e.id::text, e.type, e.data, c.agent_id as "agentId" from live_events e left join conversations c on c.id = e.conversation_id
    where e.org_id = ${orgId} and e.id > ${afterId}::bigint
      and e.created_at > now() - make_interval(secs => ${windowSeconds}) order by e.id limit 1000`;
  return rows;
}

export async function findLiveEvent(db: Db, id: string): Promise<LiveEvent | null> {
  const [row] = await db<{ id: string; type: string; data: Record<string, unknown>; agentId: string | null }[]>`select e.id::text, e.type, e.data,
    c.agent_id as "agentId" from live_events e left join conversations c on c.id = e.conversation_id where e.id = ${id}::bigint`;
  return row ?? null;
}
