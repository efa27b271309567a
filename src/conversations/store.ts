import type { Db } from '../db/index.ts';
import { newId } from '../ids.ts';
import type { MessageRole, ToolCall, TranscriptMessage } from '../runtime/types.ts';

/**
 * The write side of conversations: what the runtime and the lifecycle workflow record. The read
 * side (the conversations API) is src/db/conversations.ts.
 */

export interface ConversationRecord {
  id: string; orgId: string; agentId: string; surface: string; isSimulated: boolean;
  status: 'active' | 'ended'; visitorId: string | null; contactId: string | null; language: string | null;
  tokenHash: Buffer | null; captured: Record<string, unknown>; pageUrl: string | null;
  startedAt: Date; endedAt: Date | null; lastActivityAt: Date;
}

interface Row {
  id: string; org_id: string; agent_id: string; surface: string; is_simulated: boolean; status: 'active' | 'ended';
  visitor_id: string | null; contact_id: string | null; language: string | null; visitor_token_hash: Buffer | null;
  captured_data: Record<string, unknown>; page_url: string | null; started_at: Date; ended_at: Date | null; last_activity_at: Date;
}

const toRecord = (r: Row): ConversationRecord => ({
  id: r.id, orgId: r.org_id, agentId: r.agent_id, surface: r.surface, isSimulated: r.is_simulated, status: r.status,
  visitorId: r.visitor_id, contactId: r.contact_id, language: r.language, tokenHash: r.visitor_token_hash,
  captured: r.captured_data, pageUrl: r.page_url, startedAt: r.started_at, endedAt: r.ended_at, lastActivityAt: r.last_activity_at,
});

const COLUMNS = ['id', 'org_id', 'agent_id', 'surface', 'is_simulated', 'status', 'visitor_id', 'contact_id', 'language',
  'visitor_token_hash', 'captured_data', 'page_url', 'started_at', 'ended_at', 'last_activity_at'];

export async function insertConversation(db: Db, input: {
  orgId: string; agentId: string; surface: string; pageUrl: string | null; visitorId: string | null; contactId: string | null;
  language: string | null; tokenHash: Buffer | null; isSimulated?: boolean;
}): Promise<ConversationRecord> {
  const [row] = await db<Row[]>`
    insert into conversations (id, org_id, agent_id, surface, is_simulated, page_url, visitor_id, contact_id, language, visitor_token_hash)
    values (${newId()}, ${input.orgId}, ${input.agentId}, ${input.surface}, ${input.isSimulated ?? false}, ${input.pageUrl},
      ${input.visitorId}, ${input.contactId}, ${input.language}, ${input.tokenHash})
    returning ${db(COLUMNS)}`;
  return toRecord(row!);
}

/** A conversation by id alone (workflows and activities), or within an agent (public endpoints). */
export async function findConversationRecord(db: Db, id: string, opts: { agentId?: string; forUpdate?: boolean } = {}): Promise<ConversationRecord | null> {
  const agent = opts.agentId ? db`and agent_id = ${opts.agentId}` : db``;
  const lock = opts.forUpdate ? db`for update` : db``;
  const [row] = await db<Row[]>`select ${db(COLUMNS)} from conversations where id = ${id} ${agent} ${lock}`;
  return row ? toRecord(row) : null;
}

interface MessageRow { id: string; role: MessageRole; text: string; ts: Date }
const toMessage = (m: MessageRow): TranscriptMessage => ({ id: m.id, role: m.role, text: m.text, ts: m.ts.toISOString() });

/** Appends messages in order (ids are time-ordered, and each gets its own timestamp). */
export async function insertMessages(db: Db, conversationId: string, messages: { role: MessageRole; text: string }[]): Promise<TranscriptMessage[]> {
  const out: TranscriptMessage[] = [];
  for (const m of messages) {
    const [row] = await db<MessageRow[]>`insert into conversation_messages (id, conversation_id, role, text, ts)
      values (${newId()}, ${conversationId}, ${m.role}, ${m.text}, clock_timestamp()) returning id, role, text, ts`;
    out.push(toMessage(row!));
  }
  return out;
}

/** The transcript, oldest first; with `after`, only the messages that follow that one. */
export async function listMessages(db: Db, conversationId: string, opts: { after?: string | undefined } = {}): Promise<TranscriptMessage[]> {
  const after = opts.after
    ? db`and (ts, id) > (select ts, id from conversation_messages where id = ${opts.after} and conversation_id = ${conversationId})`
    : db``;
  const rows = await db<MessageRow[]>`select id, role, text, ts from conversation_messages
    where conversation_id = ${conversationId} ${after} order by ts, id`;
  return rows.map(toMessage);
}

/** Records a turn's effects: tool calls appended, captured data replaced, activity time moved. */
export async function recordTurn(db: Db, id: string, turn: { toolCalls: ToolCall[]; captured: Record<string, unknown> }): Promise<void> {
  await db`update conversations set tool_calls = tool_calls || ${db.json(turn.toolCalls as never)},
    captured_data = ${db.json(turn.captured as never)}, last_activity_at = now() where id = ${id}`;
}

/**
 * Ends an active conversation and writes its usage record (which outlives it). Answers the
 * ended record, or null when it was already ended (ending twice is a no-op).
 */
export async function markEnded(db: Db, id: string, reason: 'visitor' | 'inactivity' | 'agent'): Promise<ConversationRecord | null> {
  const [row] = await db<Row[]>`update conversations set status = 'ended', ended_reason = ${reason},
      -- A conversation left idle ended at its last activity, not when the timer noticed.
      ended_at = case when ${reason} = 'inactivity' then last_activity_at else now() end
    where id = ${id} and status = 'active' returning ${db(COLUMNS)}`;
  if (!row) return null;
  const record = toRecord(row);
  const [count] = await db<{ n: number }[]>`select count(*)::int as n from conversation_messages where conversation_id = ${id}`;
  const n = count?.n ?? 0;
  await db`insert into usage_records (id, org_id, agent_id, conversation_id, surface, duration_seconds, messages)
    values (${newId()}, ${record.orgId}, ${record.agentId}, ${id}, ${record.surface},
      ${Math.max(0, Math.round((record.endedAt!.getTime() - record.startedAt.getTime()) / 1000))}, ${n})`;
  return record;
}

/** Stores an evaluation's results. */
export async function recordEvaluation(db: Db, id: string, evaluation: {
  extracted_data: Record<string, unknown>; criteria_results: unknown[]; intent: string; outcome: string;
}): Promise<void> {
  await db`update conversations set extracted_data = ${db.json(evaluation.extracted_data as never)},
    criteria_results = ${db.json(evaluation.criteria_results as never)}, intent = ${evaluation.intent}, outcome = ${evaluation.outcome},
    evaluation_status = 'completed', evaluated_at = now() where id = ${id}`;
}
