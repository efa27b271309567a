import type { Db } from './index.ts';
import type { MessageRole, ToolCall, TranscriptMessage } from '../runtime/types.ts';
import type { Conversation, ConversationListQuery } from '../schemas/conversations.ts';

/**
 * The read side of conversations (the conversations API) and their deletion. What the runtime and
 * the lifecycle workflow write is src/conversations/store.ts.
 *
 * A conversation of a deleted agent (agents.deleted_at set, its purge under way) is gone for the
 * API: never listed, counted, read or deleted here.
 */

interface ConversationRow {
  id: string; widget_id: string; surface: Conversation['surface']; is_simulated: boolean; status: Conversation['status'];
  started_at: Date; ended_at: Date | null; duration_seconds: number; page_url: string | null; intent: string | null;
  outcome: Conversation['outcome']; extracted_data: Conversation['extracted_data']; criteria_results: Conversation['criteria_results'];
  contact_id: string | null;
}

/** The API shape of a row selected with ROW_COLUMNS. */
export function toConversation(row: ConversationRow): Conversation {
  return {
    id: row.id, widget_id: row.widget_id, surface: row.surface, is_simulated: row.is_simulated, status: row.status,
    started_at: row.started_at.toISOString(), ended_at: row.ended_at ? row.ended_at.toISOString() : null,
    duration_seconds: row.duration_seconds, page_url: row.page_url, intent: row.intent, outcome: row.outcome,
    extracted_data: row.extracted_data, criteria_results: row.criteria_results, contact_id: row.contact_id,
  };
}

/** The list row of conversation `c`: duration in whole seconds up to the end, or to the last activity while active. */
const rowColumns = (db: Db) => db`
  c.id, c.agent_id as widget_id, c.surface, c.is_simulated, c.status, c.started_at, c.ended_at,
  greatest(0, round(extract(epoch from coalesce(c.ended_at, c.last_activity_at) - c.started_at)))::int as duration_seconds,
  c.page_url, c.intent, c.outcome, c.extracted_data, c.criteria_results, c.contact_id`;

type ListFilter = Pick<ConversationListQuery, 'widget_id' | 'simulated'>;

/** `is_simulated` as the `simulated` parameter asks: absent = real ones, `1` = simulations, `all` = both (no condition). */
function simulatedCondition(db: Db, column: string, simulated: ListFilter['simulated']) {
  if (simulated === 'all') return db``;
  return db`and ${db(column)} = ${simulated === '1'}`;
}

/**
 * The two queries of a list page, not yet run (bench:conversations EXPLAINs them).
 *
 * `rows` pages through an index in list order and reads only ids (and the agent, from the index
 * too, to leave out deleted agents), so the rows skipped by `offset` cost no table reads; only
 * the page's rows are fetched. `total` sums the counters the triggers of migration 008 keep,
 * instead of counting hundreds of thousands of rows.
 */
export function conversationListQueries(db: Db, orgId: string, q: ListFilter & { limit: number; offset: number }) {
  const page = q.widget_id
    ? db`select id from conversations
        where agent_id = ${q.widget_id} ${simulatedCondition(db, 'is_simulated', q.simulated)}
          and exists (select 1 from agents where id = ${q.widget_id} and org_id = ${orgId} and deleted_at is null)
        order by started_at desc, id desc limit ${q.limit} offset ${q.offset}`
    : db`select id from conversations
        where org_id = ${orgId} ${simulatedCondition(db, 'is_simulated', q.simulated)}
          and agent_id <> all(array(select id from agents where org_id = ${orgId} and deleted_at is not null))
        order by started_at desc, id desc limit ${q.limit} offset ${q.offset}`;
  const agent = q.widget_id ? db`and n.agent_id = ${q.widget_id}` : db``;
  return {
    rows: db<ConversationRow[]>`select ${rowColumns(db)} from (${page}) page join conversations c on c.id = page.id
      order by c.started_at desc, c.id desc`,
    total: db<{ total: number }[]>`select coalesce(sum(n.n), 0)::bigint as total
      from conversation_counts n join agents a on a.id = n.agent_id and a.deleted_at is null
      where n.org_id = ${orgId} ${agent} ${simulatedCondition(db, 'n.is_simulated', q.simulated)}`,
  };
}

/** A page of an organization's conversations, newest first, with the exact total. */
export async function listConversations(db: Db, orgId: string, q: ListFilter & { limit: number; offset: number }):
  Promise<{ data: Conversation[]; total: number }> {
  const queries = conversationListQueries(db, orgId, q);
  const [rows, [count]] = await Promise.all([queries.rows, queries.total]);
  return { data: rows.map(toConversation), total: count?.total ?? 0 };
}

/** One conversation with its transcript (oldest first) and tool calls; null when absent. */
export async function findConversation(db: Db, orgId: string, id: string):
  Promise<(Conversation & { messages: TranscriptMessage[]; tool_calls: ToolCall[] }) | null> {
  const [[row], messages] = await Promise.all([
    db<(ConversationRow & { tool_calls: ToolCall[] })[]>`select ${rowColumns(db)}, c.tool_calls
      from conversations c join agents a on a.id = c.agent_id and a.deleted_at is null
      where c.id = ${id} and c.org_id = ${orgId}`,
    transcript(db, id),
  ]);
  if (!row) return null;
  return { ...toConversation(row), messages, tool_calls: row.tool_calls };
}

/** The list row of one conversation by id alone (the `conversation` of conversation.* events); null when absent. */
export async function findConversationRow(db: Db, id: string): Promise<Conversation | null> {
  const [row] = await db<ConversationRow[]>`select ${rowColumns(db)} from conversations c where c.id = ${id}`;
  return row ? toConversation(row) : null;
}

async function transcript(db: Db, conversationId: string): Promise<TranscriptMessage[]> {
  const rows = await db<{ id: string; role: MessageRole; text: string; ts: Date }[]>`
    select id, role, text, ts from conversation_messages where conversation_id = ${conversationId} order by ts, id`;
  return rows.map((m) => ({ id: m.id, role: m.role, text: m.text, ts: m.ts.toISOString() }));
}

/** What the transcript card shows. By id alone: the card's signed URL is the authorization. */
export interface ConversationCard {
  id: string; agentName: string; surface: string; isSimulated: boolean; startedAt: Date; endedAt: Date | null;
  messages: TranscriptMessage[];
}

export async function findConversationCard(db: Db, id: string): Promise<ConversationCard | null> {
  const [[row], messages] = await Promise.all([
    db<{ agent_name: string; surface: string; is_simulated: boolean; started_at: Date; ended_at: Date | null }[]>`
      select a.name as agent_name, c.surface, c.is_simulated, c.started_at, c.ended_at
      from conversations c join agents a on a.id = c.agent_id and a.deleted_at is null where c.id = ${id}`,
    transcript(db, id),
  ]);
  if (!row) return null;
  return {
    id, agentName: row.agent_name, surface: row.surface, isSimulated: row.is_simulated,
    startedAt: row.started_at, endedAt: row.ended_at, messages,
  };
}

/**
 * Deletes a conversation and its transcript (ON DELETE CASCADE); its usage records stay, with
 * their conversation reference cleared. Run it in a transaction. False when absent.
 *
 * The row goes first: a lifecycle step ending the conversation at the same moment either
 * committed its usage record before (and the update below clears it) or waits for this delete and
 * then finds nothing to end.
 */
export async function deleteConversation(db: Db, orgId: string, id: string): Promise<boolean> {
  const deleted = await db`delete from conversations c using agents a
    where c.id = ${id} and c.org_id = ${orgId} and a.id = c.agent_id and a.deleted_at is null returning c.id`;
  if (deleted.length === 0) return false;
  await db`update usage_records set conversation_id = null where conversation_id = ${id}`;
  return true;
}
