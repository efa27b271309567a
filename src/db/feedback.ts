import type { Db } from './index.ts';
import { newId } from '../ids.ts';
import type { Feedback, SatisfactionRow } from '../schemas/feedback.ts';

/** The feedback table's one repository: a visitor's rating or vote (replacing their earlier one), reads, and the CSAT report. */

interface Row {
  id: string; conversation_id: string; agent_id: string; kind: Feedback['kind']; rating: number | null; thumbs: Feedback['thumbs'];
  message_id: string | null; comment: string | null; created_at: Date; updated_at: Date;
}

const toFeedback = (r: Row): Feedback => ({
  id: r.id, conversation_id: r.conversation_id, widget_id: r.agent_id, kind: r.kind, rating: r.rating, thumbs: r.thumbs,
  message_id: r.message_id, comment: r.comment, created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString(),
});

const COLUMNS = ['id', 'conversation_id', 'agent_id', 'kind', 'rating', 'thumbs', 'message_id', 'comment', 'created_at', 'updated_at'];

/** The conversation's end-of-chat rating, replacing an earlier one. */
export async function upsertRating(db: Db, c: { orgId: string; agentId: string; conversationId: string }, rating: number, comment: string | null): Promise<Feedback> {
  const [row] = await db<Row[]>`insert into feedback (id, org_id, agent_id, conversation_id, kind, rating, comment)
    values (${newId()}, ${c.orgId}, ${c.agentId}, ${c.conversationId}, 'rating', ${rating}, ${comment})
    on conflict (conversation_id) where kind = 'rating'
      do update set rating = excluded.rating, comment = excluded.comment, updated_at = clock_timestamp()
    returning ${db(COLUMNS)}`;
  return toFeedback(row!);
}

/**
 * A vote on one reply of the conversation (an `agent` or `human_agent` message), replacing an earlier one;
 * null when the message is not such a reply of this conversation.
 */
export async function upsertThumbs(db: Db, c: { orgId: string; agentId: string; conversationId: string }, messageId: string,
  thumbs: 'up' | 'down', comment: string | null): Promise<Feedback | null> {
  const [row] = await db<Row[]>`insert into feedback (id, org_id, agent_id, conversation_id, message_id, kind, thumbs, comment)
    select ${newId()}, ${c.orgId}, ${c.agentId}, ${c.conversationId}, m.id, 'thumbs', ${thumbs}, ${comment}
    from conversation_messages m where m.id = ${messageId} and m.conversation_id = ${c.conversationId} and m.role in ('agent', 'human_agent')
    on conflict (message_id) where kind = 'thumbs'
      do update set thumbs = excluded.thumbs, comment = excluded.comment, updated_at = clock_timestamp()
    returning ${db(COLUMNS)}`;
  return row ? toFeedback(row) : null;
}

/** A conversation's feedback, oldest first (the caller has checked the conversation is the organization's). */
export async function listConversationFeedback(db: Db, orgId: string, conversationId: string): Promise<Feedback[]> {
  const rows = await db<Row[]>`select ${db(COLUMNS)} from feedback where org_id = ${orgId} and conversation_id = ${conversationId}
    order by created_at, id`;
  return rows.map(toFeedback);
}

/**
 * CSAT per agent, assigned member or team over the feedback given in a time range: ratings, their mean, the share
 * of 4s and 5s, and the thumbs. A deleted agent's feedback is gone with it.
 */
export async function satisfactionReport(db: Db, orgId: string, q: { groupBy: 'agent' | 'member' | 'team'; from?: Date; to?: Date }):
  Promise<SatisfactionRow[]> {
  const key = { agent: db`f.agent_id`, member: db`c.assigned_member_id`, team: db`c.team_id` }[q.groupBy];
  const rows = await db<{ id: string; ratings: number; average_rating: number | null; csat: number | null; thumbs_up: number; thumbs_down: number }[]>`
    select ${key} as id,
      count(*) filter (where f.kind = 'rating')::int as ratings,
      round(avg(f.rating) filter (where f.kind = 'rating'), 2)::float8 as average_rating,
      round(avg(case when f.rating >= 4 then 1 else 0 end) filter (where f.kind = 'rating'), 4)::float8 as csat,
      count(*) filter (where f.thumbs = 'up')::int as thumbs_up,
      count(*) filter (where f.thumbs = 'down')::int as thumbs_down
    from feedback f join conversations c on c.id = f.conversation_id
      join agents a on a.id = f.agent_id and a.deleted_at is null
    where f.org_id = ${orgId} and ${key} is not null
      ${q.from ? db`and f.updated_at >= ${q.from}` : db``} ${q.to ? db`and f.updated_at < ${q.to}` : db``}
    group by 1 order by 2 desc, 1`;
  return rows.map((r) => ({ group_by: q.groupBy, ...r }));
}

/** Whether the conversation is the organization's (and its agent not deleted). */
export async function conversationInOrg(db: Db, orgId: string, conversationId: string): Promise<boolean> {
  const [row] = await db`select 1 from conversations c join agents a on a.id = c.agent_id and a.deleted_at is null
    where c.id = ${conversationId} and c.org_id = ${orgId}`;
  return !!row;
}
