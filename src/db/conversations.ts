import type { Db, Fragment } from './index.ts';
import { newId } from '../ids.ts';
import { dispatchedUnlessReceived, isoTime, redactionStillAt } from './events.ts';
import type { MessageRole, ToolCall, TranscriptMessage } from '../runtime/types.ts';
import type { Conversation, ConversationListQuery } from '../schemas/conversations.ts';
import { redactText } from '../domain/redaction.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import { loadAgentRedaction } from './governance.ts';
import { knownAgentOf, knownRedaction, policyAt, rememberAgentOf, rememberRedaction, type KnownRedaction } from './redaction-cache.ts';
import type { RedactionSettings } from '../schemas/governance.ts';

/**
 * The conversations table's one repository: the read side (the conversations API), deletion, and
 * below, what the runtime and the lifecycle workflow write.
 *
 * A conversation of a deleted agent (agents.deleted_at set, its purge under way) is gone for the
 * API: never listed, counted, read or deleted here.
 */

interface ConversationRow {
  id: string; widget_id: string; surface: Conversation['surface']; is_simulated: boolean; status: Conversation['status'];
  started_at: Date; ended_at: Date | null; duration_seconds: number; page_url: string | null; intent: string | null;
  outcome: Conversation['outcome']; extracted_data: Conversation['extracted_data']; criteria_results: Conversation['criteria_results'];
  contact_id: string | null; labels: string[];
}

/** The API shape of a row selected with ROW_COLUMNS. */
export function toConversation(row: ConversationRow): Conversation {
  return {
    id: row.id, widget_id: row.widget_id, surface: row.surface, is_simulated: row.is_simulated, status: row.status,
    started_at: row.started_at.toISOString(), ended_at: row.ended_at ? row.ended_at.toISOString() : null,
    duration_seconds: row.duration_seconds, page_url: row.page_url, intent: row.intent, outcome: row.outcome,
    extracted_data: row.extracted_data, criteria_results: row.criteria_results, contact_id: row.contact_id,
    labels: row.labels,
  };
}

/** The list row of conversation `c`: duration in whole seconds up to the end, or to the last activity while active. */
const rowColumns = (db: Db) => db`
  c.id, c.agent_id as widget_id, c.surface, c.is_simulated, c.status, c.started_at, c.ended_at,
  greatest(0, round(extract(epoch from coalesce(c.ended_at, c.last_activity_at) - c.started_at)))::int as duration_seconds,
  c.page_url, c.intent, c.outcome, c.extracted_data, c.criteria_results, c.contact_id, c.labels`;

type ListFilter = Omit<ConversationListQuery, 'limit' | 'offset'> & {
  /** With `q`: the text-search configurations the organization's messages were read in (`searchConfigs`). */
  configs?: string[];
};

/** The configurations an organization's messages were read in (migration 043): what a search expands its words into. */
export async function searchConfigs(db: Db, orgId: string): Promise<string[]> {
  const rows = await db<{ config: string }[]>`select config::text as config from conversation_languages where org_id = ${orgId} order by 1`;
  return rows.length ? rows.map((r) => r.config) : ['english'];
}

/** The annotation filters (`tag`, `label`), matched case-folded against the GIN-indexed arrays. */
function annotationCondition(db: Db, q: ListFilter & { agent_scope?: readonly string[] | null }) {
  const tag = q.tag ? db`and tags @> array[${q.tag.trim().toLowerCase()}]::text[]` : db``;
  const label = q.label ? db`and labels @> array[${q.label.trim().toLowerCase()}]::text[]` : db``;
  // An operator serving some agents (issue 45) lists only their conversations.
  const scope = q.agent_scope ? db`and agent_id = any(${q.agent_scope as string[]}::uuid[])` : db``;
  return db`${tag} ${label} ${scope}`;
}

/**
 * The search filters of issue 45: the started_at range, surface, status, outcome, contact, assignee, team,
 * and `q`, the transcript's words (migration 043: `transcript_tsv @@ ams_search_query(q)`, one GIN scan).
 */
function searchCondition(db: Db, q: ListFilter) {
  return db`${q.from ? db`and started_at >= ${new Date(q.from)}` : db``} ${q.to ? db`and started_at < ${new Date(q.to)}` : db``}
    ${q.surface ? db`and surface = ${q.surface}` : db``} ${q.status ? db`and status = ${q.status}` : db``}
    ${q.outcome ? db`and outcome = ${q.outcome}` : db``} ${q.contact_id ? db`and contact_id = ${q.contact_id}` : db``}
    ${q.assignee_id ? db`and assigned_member_id = ${q.assignee_id}` : db``} ${q.team_id ? db`and team_id = ${q.team_id}` : db``}
    ${q.q ? db`and transcript_tsv @@ ams_search_query(${q.q}, ${q.configs ?? ['english']}::regconfig[])` : db``}`;
}

const SEARCH_KEYS = ['tag', 'label', 'from', 'to', 'surface', 'status', 'outcome', 'contact_id', 'assignee_id', 'team_id', 'q'] as const;

/** `is_simulated` as the `simulated` parameter asks: absent = real ones, `1` = simulations, `all` = both (no condition). */
function simulatedCondition(db: Db, column: string, simulated: ListFilter['simulated']) {
  if (simulated === 'all') return db``;
  return db`and ${db(column)} = ${simulated === '1'}`;
}

/**
 * The two queries of a list page, not yet run (bench:conversations and bench:search EXPLAIN them).
 *
 * `rows` pages through an index in list order and reads only ids (and the agent, from the index
 * too, to leave out deleted agents), so the rows skipped by `offset` cost no table reads; only
 * the page's rows are fetched. `total` sums the counters the triggers of migration 008 keep,
 * instead of counting hundreds of thousands of rows; with a filter the counters know nothing of, it counts.
 */
export function conversationListQueries(db: Db, orgId: string, q: ListFilter & { limit: number; offset: number; agent_scope?: readonly string[] | null }) {
  const filters = db`${simulatedCondition(db, 'is_simulated', q.simulated)} ${annotationCondition(db, q)} ${searchCondition(db, q)}`;
  const page = q.widget_id
    ? db`select id from conversations
        where agent_id = ${q.widget_id} ${filters}
          and exists (select 1 from agents where id = ${q.widget_id} and org_id = ${orgId} and deleted_at is null)
        order by started_at desc, id desc limit ${q.limit} offset ${q.offset}`
    : db`select id from conversations
        where org_id = ${orgId} ${filters}
          and agent_id <> all(array(select id from agents where org_id = ${orgId} and deleted_at is not null))
        order by started_at desc, id desc limit ${q.limit} offset ${q.offset}`;
  const agent = q.widget_id ? db`and n.agent_id = ${q.widget_id}` : db``;
  const rows = db<ConversationRow[]>`select ${rowColumns(db)} from (${page}) page join conversations c on c.id = page.id
      order by c.started_at desc, c.id desc`;
  // Filtered lists (annotations, search, an operator's agents) are counted directly: the counters know nothing of them.
  if (q.agent_scope || SEARCH_KEYS.some((k) => q[k] !== undefined)) {
    return {
      rows,
      total: db<{ total: number }[]>`select count(*)::bigint as total from conversations
        where org_id = ${orgId} ${q.widget_id ? db`and agent_id = ${q.widget_id}` : db``} ${filters}
          and agent_id <> all(array(select id from agents where org_id = ${orgId} and deleted_at is not null))`,
    };
  }
  return {
    rows,
    total: db<{ total: number }[]>`select coalesce(sum(n.n), 0)::bigint as total
      from conversation_counts n join agents a on a.id = n.agent_id and a.deleted_at is null
      where n.org_id = ${orgId} ${agent} ${simulatedCondition(db, 'n.is_simulated', q.simulated)}`,
  };
}

/**
 * The conversations an export covers (the list's filters, no page), newest first, in batches through a cursor;
 * with `transcripts`, each batch's messages are read in one statement.
 */
export async function* streamConversations(db: Db, orgId: string, q: ListFilter, opts: { transcripts: boolean; batch?: number }):
  AsyncGenerator<(Conversation & { messages?: TranscriptMessage[] })[]> {
  if (q.q && !q.configs) q = { ...q, configs: await searchConfigs(db, orgId) };
  const filters = db`${simulatedCondition(db, 'is_simulated', q.simulated)} ${annotationCondition(db, q)} ${searchCondition(db, q)}`;
  const rows = db<ConversationRow[]>`select ${rowColumns(db)} from conversations c
    where c.org_id = ${orgId} ${q.widget_id ? db`and c.agent_id = ${q.widget_id}` : db``} ${filters}
      and c.agent_id <> all(array(select id from agents where org_id = ${orgId} and deleted_at is not null))
    order by c.started_at desc, c.id desc`;
  for await (const batch of rows.cursor(opts.batch ?? 500)) {
    const conversations = batch.map(toConversation);
    if (!opts.transcripts) {
      yield conversations;
      continue;
    }
    const messages = await db<(MessageRow & { conversation_id: string })[]>`select conversation_id, id, role, text, ts from conversation_messages
      where conversation_id = any(${conversations.map((c) => c.id)}::uuid[]) order by conversation_id, ts, id`;
    const byConversation = new Map<string, TranscriptMessage[]>();
    for (const m of messages) {
      const list = byConversation.get(m.conversation_id) ?? [];
      list.push(toMessage(m));
      byConversation.set(m.conversation_id, list);
    }
    yield conversations.map((c) => ({ ...c, messages: byConversation.get(c.id) ?? [] }));
  }
}

/** A page of an organization's conversations, newest first, with the exact total. */
export async function listConversations(db: Db, orgId: string, q: ListFilter & { limit: number; offset: number; agent_scope?: readonly string[] | null }):
  Promise<{ data: Conversation[]; total: number }> {
  const queries = conversationListQueries(db, orgId, q.q ? { ...q, configs: await searchConfigs(db, orgId) } : q);
  const [rows, [count]] = await Promise.all([queries.rows, queries.total]);
  return { data: rows.map(toConversation), total: count?.total ?? 0 };
}

/** One conversation with its transcript (oldest first) and tool calls; null when absent. */
export async function findConversation(db: Db, orgId: string, id: string):
  Promise<(Conversation & { messages: TranscriptMessage[]; tool_calls: ToolCall[]; usage: ConversationUsage }) | null> {
  const [[row], messages, turns] = await Promise.all([
    db<(ConversationRow & { tool_calls: ToolCall[]; input_tokens: string; output_tokens: string })[]>`select ${rowColumns(db)}, c.tool_calls,
      c.input_tokens, c.output_tokens
      from conversations c join agents a on a.id = c.agent_id and a.deleted_at is null
      where c.id = ${id} and c.org_id = ${orgId}`,
    transcript(db, id),
    messageTokens(db, id),
  ]);
  if (!row) return null;
  const { input_tokens: input, output_tokens: output, ...rest } = row;
  return { ...toConversation(rest as ConversationRow), messages, tool_calls: row.tool_calls,
    usage: { input_tokens: Number(input), output_tokens: Number(output), turns } };
}

/** The tokens a conversation's model used: in all, and per turn (by the turn's first agent message). */
export interface ConversationUsage {
  input_tokens: number; output_tokens: number;
  turns: { message_id: string; input_tokens: number; output_tokens: number }[];
}

/** The list row of one conversation by id alone (the `conversation` of conversation.* events); null when absent. */
export async function findConversationRow(db: Db, id: string): Promise<Conversation | null> {
  const [row] = await db<ConversationRow[]>`select ${rowColumns(db)} from conversations c where c.id = ${id}`;
  return row ? toConversation(row) : null;
}

async function transcript(db: Db, conversationId: string): Promise<TranscriptMessage[]> {
  const rows = await db<MessageRow[]>`
    select id, role, text, ts, cut from conversation_messages where conversation_id = ${conversationId} order by ts, id`;
  return rows.map(toMessage);
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

/** Deletes up to `batchSize` conversations of an agent (messages cascade; usage records stay); returns how many. */
export async function deleteConversationsOfAgentBatch(db: Db, agentId: string, batchSize: number): Promise<number> {
  return (await db`
    delete from conversations where id in (
      select id from conversations where agent_id = ${agentId} limit ${batchSize})`).count;
}

// ---- the write side: what the runtime and the lifecycle workflow record

export interface ConversationRecord {
  id: string; orgId: string; agentId: string; surface: string; isSimulated: boolean;
  status: 'active' | 'ended'; visitorId: string | null; contactId: string | null; language: string | null;
  tokenHash: Buffer | null; captured: Record<string, unknown>; pageUrl: string | null;
  startedAt: Date; endedAt: Date | null; lastActivityAt: Date;
  /** `human` while a member holds it (live inbox): the agent does not answer. */
  mode: 'agent' | 'human';
}

interface RecordRow {
  id: string; org_id: string; agent_id: string; surface: string; is_simulated: boolean; status: 'active' | 'ended';
  visitor_id: string | null; contact_id: string | null; language: string | null; visitor_token_hash: Buffer | null;
  captured_data: Record<string, unknown>; page_url: string | null; started_at: Date; ended_at: Date | null; last_activity_at: Date;
  mode: 'agent' | 'human';
}

const toRecord = (r: RecordRow): ConversationRecord => ({
  id: r.id, orgId: r.org_id, agentId: r.agent_id, surface: r.surface, isSimulated: r.is_simulated, status: r.status,
  visitorId: r.visitor_id, contactId: r.contact_id, language: r.language, tokenHash: r.visitor_token_hash,
  captured: r.captured_data, pageUrl: r.page_url, startedAt: r.started_at, endedAt: r.ended_at, lastActivityAt: r.last_activity_at,
  mode: r.mode,
});

const RECORD_COLUMNS = ['id', 'org_id', 'agent_id', 'surface', 'is_simulated', 'status', 'visitor_id', 'contact_id', 'language',
  'visitor_token_hash', 'captured_data', 'page_url', 'started_at', 'ended_at', 'last_activity_at', 'mode'];

export async function insertConversation(db: Db, input: {
  orgId: string; agentId: string; surface: string; pageUrl: string | null; visitorId: string | null; contactId: string | null;
  language: string | null; tokenHash: Buffer | null; isSimulated?: boolean;
}): Promise<ConversationRecord> {
  const [row] = await db<RecordRow[]>`
    insert into conversations (id, org_id, agent_id, surface, is_simulated, page_url, visitor_id, contact_id, language, visitor_token_hash)
    values (${newId()}, ${input.orgId}, ${input.agentId}, ${input.surface}, ${input.isSimulated ?? false}, ${input.pageUrl},
      ${input.visitorId}, ${input.contactId}, ${input.language}, ${input.tokenHash})
    returning ${db(RECORD_COLUMNS)}`;
  // A conversation's agent never changes: its first message needs no lookup of it (transcriptRedaction).
  rememberAgentOf(row!.id, input.agentId);
  return toRecord(row!);
}

/** A conversation by id alone (workflows and activities), or within an agent (public endpoints). */
export async function findConversationRecord(db: Db, id: string, opts: { agentId?: string; forUpdate?: boolean } = {}): Promise<ConversationRecord | null> {
  const agent = opts.agentId ? db`and agent_id = ${opts.agentId}` : db``;
  const lock = opts.forUpdate ? db`for update` : db``;
  const [row] = await db<RecordRow[]>`select ${db(RECORD_COLUMNS)} from conversations where id = ${id} ${agent} ${lock}`;
  return row ? toRecord(row) : null;
}

/** The conversation of campaign call `callId`, unless it has none or it has been evaluated. */
export async function findCallConversationToEvaluate(db: Db, callId: string): Promise<{ conversation: ConversationRecord; messages: TranscriptMessage[] } | null> {
  // The transcript with it, in listMessages' order (one statement).
  const [row] = await db<(RecordRow & { transcript: (Omit<MessageRow, 'ts'> & { ts: string })[] })[]>`select ${db(RECORD_COLUMNS)},
    (select coalesce(json_agg(json_build_object('id', m.id, 'role', m.role, 'text', m.text, 'ts', m.ts) order by m.ts, m.id), '[]')
      from conversation_messages m where m.conversation_id = conversations.id) as transcript
    from conversations where id = (select conversation_id from campaign_calls where id = ${callId}) and evaluation_status <> 'completed'`;
  return row ? { conversation: toRecord(row), messages: row.transcript.map((m) => toMessage({ ...m, ts: new Date(m.ts) })) } : null;
}

interface MessageRow { id: string; role: MessageRole; text: string; ts: Date; cut?: boolean }
const toMessage = (m: MessageRow): TranscriptMessage => ({ id: m.id, role: m.role, text: m.text, ts: m.ts.toISOString(), ...(m.cut ? { cut: true } : {}) });

/** A message to append: `cut` for a streamed reply the visitor aborted, `usage` the tokens of the turn that wrote it. */
export interface NewMessage { role: MessageRole; text: string; cut?: boolean; usage?: { input_tokens: number; output_tokens: number } | undefined }

/** The agent of a conversation and its redaction settings, as this process knows them (src/db/redaction-cache.ts), or read. */
async function transcriptRedaction(db: Db, conversationId: string): Promise<{ agentId: string; known: KnownRedaction } | null> {
  const agentId = knownAgentOf(conversationId);
  const known = agentId ? knownRedaction(agentId) : undefined;
  if (agentId && known) return { agentId, known };
  const [row] = await db<{ agent_id: string; redaction: RedactionSettings | null; version: number | null }[]>`select c.agent_id, g.redaction, g.version
    from conversations c left join agent_governance g on g.agent_id = c.agent_id where c.id = ${conversationId}`;
  if (!row) return null;
  const read = { settings: row.redaction, version: row.version ?? 0 };
  rememberAgentOf(conversationId, row.agent_id);
  rememberRedaction(row.agent_id, read);
  return { agentId: row.agent_id, known: read };
}

async function insertMessage(db: Db, conversationId: string, m: NewMessage, guard: { agentId: string; version: number } | null): Promise<MessageRow | undefined> {
  const check = guard ? db`where ${redactionStillAt(db, guard.agentId, guard.version)}` : db``;
  const [row] = await db<MessageRow[]>`insert into conversation_messages (id, conversation_id, role, text, ts, cut, input_tokens, output_tokens)
    select ${newId()}::uuid, ${conversationId}::uuid, ${m.role}::text, ${m.text}::text, clock_timestamp(), ${m.cut ?? false}::boolean,
      ${m.usage?.input_tokens ?? null}::integer, ${m.usage?.output_tokens ?? null}::integer ${check}
    returning id, role, text, ts, cut`;
  return row;
}

/**
 * Appends messages in order (ids are time-ordered, and each gets its own timestamp), masked as the
 * agent's redaction asks for its transcript. The settings come from this process's cache: each
 * insert checks they are still the agent's version, else they are read again and the insert retried.
 */
export async function insertMessages(db: Db, conversationId: string, messages: NewMessage[]): Promise<TranscriptMessage[]> {
  const out: TranscriptMessage[] = [];
  if (!messages.length) return out;
  const found = await transcriptRedaction(db, conversationId);
  for (const raw of messages) {
    const masked = (known: KnownRedaction | undefined) => {
      const policy = policyAt(known?.settings, 'transcript');
      return policy ? { ...raw, text: redactText(raw.text, policy) } : raw;
    };
    let row = found ? await insertMessage(db, conversationId, masked(found.known), { agentId: found.agentId, version: found.known.version }) : undefined;
    if (!row) {
      // The settings changed since they were read (or the conversation is unknown: the plain insert says so).
      if (found) found.known = await loadAgentRedaction(db, found.agentId);
      row = await insertMessage(db, conversationId, masked(found?.known), null);
    }
    out.push(toMessage(row!));
  }
  return out;
}

/** The tokens each model-written message's turn used, by message id (the conversation detail shows them). */
export async function messageTokens(db: Db, conversationId: string): Promise<{ message_id: string; input_tokens: number; output_tokens: number }[]> {
  return db<{ message_id: string; input_tokens: number; output_tokens: number }[]>`
    select id as message_id, input_tokens, output_tokens from conversation_messages
    where conversation_id = ${conversationId} and input_tokens is not null order by ts, id`;
}

/** The transcript, oldest first; with `after`, only the messages that follow that one. */
export async function listMessages(db: Db, conversationId: string, opts: { after?: string | undefined } = {}): Promise<TranscriptMessage[]> {
  const after = opts.after
    ? db`and (ts, id) > (select ts, id from conversation_messages where id = ${opts.after} and conversation_id = ${conversationId})`
    : db``;
  const rows = await db<MessageRow[]>`select id, role, text, ts, cut from conversation_messages
    where conversation_id = ${conversationId} ${after} order by ts, id`;
  return rows.map(toMessage);
}

/** Appends calls to a conversation's `tool_calls` (the agent's tools called after a turn). */
export async function appendToolCalls(db: Db, id: string, calls: ToolCall[]): Promise<void> {
  if (calls.length) await db`update conversations set tool_calls = tool_calls || ${db.json(calls as never)} where id = ${id}`;
}

const SEALED = 'sealed:';
const capturedContext = (conversationId: string, field: string) => `conversations.captured_data:${conversationId}:${field}`;

/**
 * The captured data as stored (issue 47): each value sealed with the secrets key (bound to its
 * conversation and field), so what the data schema captured, a phone number say, is kept for the
 * agent and its callers but never lies in the database in the clear. Sealed values stay as they are.
 */
export function sealCaptured(secrets: SecretBox, conversationId: string, captured: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(captured).map(([k, v]) => [k,
    v === null || v === undefined || (typeof v === 'string' && v.startsWith(SEALED)) ? v : SEALED + secrets.seal(JSON.stringify(v), capturedContext(conversationId, k))]));
}

/** The captured data as captured: sealed values opened (values stored before sealing pass as they are). */
export function openCaptured(secrets: SecretBox, conversationId: string, captured: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(captured).map(([k, v]) => [k,
    typeof v === 'string' && v.startsWith(SEALED) ? JSON.parse(secrets.open(v.slice(SEALED.length), capturedContext(conversationId, k))) as unknown : v]));
}

/** Records a turn's effects: tool calls appended, captured data replaced (sealed), activity time moved. */
export async function recordTurn(db: Db, secrets: SecretBox, id: string, turn: {
  toolCalls: ToolCall[]; captured: Record<string, unknown>; usage?: { input_tokens: number; output_tokens: number } | undefined;
}): Promise<void> {
  await db`update conversations set tool_calls = tool_calls || ${db.json(turn.toolCalls as never)},
    captured_data = ${db.json(sealCaptured(secrets, id, turn.captured) as never)}, last_activity_at = now(),
    input_tokens = input_tokens + ${turn.usage?.input_tokens ?? 0}, output_tokens = output_tokens + ${turn.usage?.output_tokens ?? 0} where id = ${id}`;
}

/**
 * Ends an active conversation and writes its usage record (which outlives it), in one statement.
 * Answers the ended record with its list row as it now reads (the `conversation` of
 * `conversation.ended`), or null when it was already ended (ending twice is a no-op).
 *
 * With `event` (issue 48), the same statement writes `conversation.ended`, its data (`{conversation}`, the list row) built
 * by PostgreSQL, while the conversation's agent is `event.agentId` and its redaction settings are still at
 * `event.redactionVersion`: `event` in the answer is the data as stored, or null when it was not written (then the caller
 * emits it, in the same transaction).
 */
export async function markEnded(db: Db, id: string, reason: 'visitor' | 'inactivity' | 'agent' | 'closed',
  event?: { id: string; agentId: string; redactionVersion: number }):
  Promise<(ConversationRecord & { listed: Conversation; event: Record<string, unknown> | null }) | null> {
  const [row] = await db<(RecordRow & ConversationRow & { event_data?: Record<string, unknown> | null })[]>`with
    ${endConversationCtes(db, db`${id}`, reason, event)}
    select ${db(RECORD_COLUMNS)}, ${rowColumns(db)} ${event ? db`, (select data from conversation_event) as event_data` : db``} from ended_conversation c`;
  return row ? { ...toRecord(row), listed: toConversation(row), event: row.event_data ?? null } : null;
}

/**
 * The CTEs of markEnded, for a statement of its own or one that ends a campaign call with its conversation
 * (endCallAndConversation, src/db/campaigns.ts): `ended_conversation` (the conversation `id`, an SQL expression, ended
 * when active), `conversation_usage` (its usage record) and, with `event`, `conversation_event` (`conversation.ended`,
 * stamped by the clock, and never before `notBefore` when given: an event of the same statement it must follow).
 */
export function endConversationCtes(db: Db, id: Fragment, reason: 'visitor' | 'inactivity' | 'agent' | 'closed',
  event?: { id: string; agentId: string; redactionVersion: number }, notBefore?: Fragment): Fragment {
  const at = notBefore ? db`greatest(clock_timestamp(), ${notBefore} + interval '1 microsecond')` : db`clock_timestamp()`;
  const written = event ? db`, conversation_event as (
      insert into events (id, org_id, type, agent_id, data, created_at, dispatched_at)
      select ${event.id}::text, c.org_id, 'conversation.ended', c.agent_id, json_build_object('conversation', ${rowJson(db)}), ${at},
        ${dispatchedUnlessReceived(db, db`c.org_id`, 'conversation.ended')}
      from ended_conversation c
      where c.agent_id = ${event.agentId} and ${redactionStillAt(db, event.agentId, event.redactionVersion)}
      returning data)` : db``;
  // The usage record's duration: whole seconds between the two times at millisecond precision (as a Date holds them).
  return db`ended_conversation as (
      update conversations c set status = 'ended', ended_reason = ${reason},
        -- A conversation left idle ended at its last activity, not when the timer noticed.
        ended_at = case when ${reason} = 'inactivity' then last_activity_at else now() end
      where c.id = ${id} and c.status = 'active' returning *),
    conversation_usage as (
      insert into usage_records (id, org_id, agent_id, conversation_id, surface, duration_seconds, messages, input_tokens, output_tokens)
      select ${newId()}, e.org_id, e.agent_id, e.id, e.surface,
        greatest(0, round(extract(epoch from date_trunc('milliseconds', e.ended_at) - date_trunc('milliseconds', e.started_at))))::int,
        (select count(*)::int from conversation_messages m where m.conversation_id = e.id), e.input_tokens, e.output_tokens
      from ended_conversation e) ${written}`;
}

/** The list row of the conversation endConversationCtes ended, as JSON (times as PostgreSQL writes them), or null. */
export const endedConversationListed = (db: Db) => db`(select to_json(x) from (select ${rowColumns(db)} from ended_conversation c) x)`;

/**
 * Stores an evaluation's results; answers the list row as it now reads, or null when the conversation is gone.
 * Its tracking labels are added to the labels members set in the live inbox (each once, theirs first).
 */
export async function recordEvaluation(db: Db, id: string, evaluation: {
  extracted_data: Record<string, unknown>; criteria_results: unknown[]; intent: string; outcome: string; labels?: string[];
}): Promise<Conversation | null> {
  const labels = evaluation.labels ?? [];
  const [row] = await db<ConversationRow[]>`update conversations c set extracted_data = ${db.json(evaluation.extracted_data as never)},
    criteria_results = ${db.json(evaluation.criteria_results as never)}, intent = ${evaluation.intent}, outcome = ${evaluation.outcome},
    labels = array(select l from unnest(c.labels || ${labels}::text[]) with ordinality u(l, n) group by l order by min(n)),
    evaluation_status = 'completed', evaluated_at = now() where c.id = ${id} returning ${rowColumns(db)}`;
  return row ? toConversation(row) : null;
}

/**
 * The list row of conversation `c` (rowColumns) as JSON built by PostgreSQL, as toConversation gives it (keys in its
 * order; times as toISOString writes them, to the millisecond, in UTC).
 */
const rowJson = (db: Db) => db`json_build_object('id', c.id, 'widget_id', c.agent_id, 'surface', c.surface, 'is_simulated', c.is_simulated,
    'status', c.status, 'started_at', ${isoTime(db, db`c.started_at`)},
    'ended_at', ${isoTime(db, db`c.ended_at`)},
    'duration_seconds', greatest(0, round(extract(epoch from coalesce(c.ended_at, c.last_activity_at) - c.started_at)))::int,
    'page_url', c.page_url, 'intent', c.intent, 'outcome', c.outcome, 'extracted_data', c.extracted_data,
    'criteria_results', c.criteria_results, 'contact_id', c.contact_id, 'labels', c.labels)`;

/**
 * recordEvaluation and the event reporting it (`{conversation}`: the list row as the update wrote it), in one statement
 * (issue 48: begin, update, insert and commit were 4), for an event whose payload its agent's redaction does not mask.
 * Both are written only while the agent's redaction settings are still at `event.redactionVersion` (as insertEvent's
 * guard); null when nothing was written (the conversation is gone, or the settings changed: the caller takes the
 * transaction's path). Answers the list row and the event's data as stored.
 */
export async function recordEvaluationWithEvent(db: Db, id: string, evaluation: Parameters<typeof recordEvaluation>[2],
  event: { id: string; orgId: string; type: string; agentId: string; redactionVersion: number }):
  Promise<{ row: Conversation; data: Record<string, unknown> } | null> {
  const labels = evaluation.labels ?? [];
  const [row] = await db<(ConversationRow & { event_data: Record<string, unknown> })[]>`with
    evaluated as (
      update conversations c set extracted_data = ${db.json(evaluation.extracted_data as never)},
        criteria_results = ${db.json(evaluation.criteria_results as never)}, intent = ${evaluation.intent}, outcome = ${evaluation.outcome},
        labels = array(select l from unnest(c.labels || ${labels}::text[]) with ordinality u(l, n) group by l order by min(n)),
        evaluation_status = 'completed', evaluated_at = now()
      where c.id = ${id} and ${redactionStillAt(db, event.agentId, event.redactionVersion)}
      returning ${rowColumns(db)}, json_build_object('conversation', ${rowJson(db)}) as event_data),
    event as (
      insert into events (id, org_id, type, agent_id, data, created_at, dispatched_at)
      select ${event.id}::text, ${event.orgId}::uuid, ${event.type}::text, ${event.agentId}::uuid, event_data, clock_timestamp(),
        ${dispatchedUnlessReceived(db, event.orgId, event.type)} from evaluated)
    select * from evaluated`;
  if (!row) return null;
  const { event_data: data, ...listed } = row;
  return { row: toConversation(listed), data };
}

/**
 * An event of a conversation (`{conversation}`: its list row as it reads now) written in one statement, its data built
 * by PostgreSQL (issue 48: the row was read, then the event inserted), for an event whose payload its agent's redaction
 * does not mask. Written only while the agent's redaction settings are still at `event.redactionVersion`; null when
 * nothing was written (no such conversation, or the settings changed). Answers the data as stored.
 */
export async function insertConversationEvent(db: Db, conversationId: string,
  event: { id: string; orgId: string; type: string; agentId: string; redactionVersion: number }): Promise<Record<string, unknown> | null> {
  const [row] = await db<{ data: Record<string, unknown> }[]>`
    insert into events (id, org_id, type, agent_id, data, created_at, dispatched_at)
    select ${event.id}::text, ${event.orgId}::uuid, ${event.type}::text, ${event.agentId}::uuid, json_build_object('conversation', ${rowJson(db)}),
      clock_timestamp(), ${dispatchedUnlessReceived(db, event.orgId, event.type)}
    from conversations c
    where c.id = ${conversationId} and ${redactionStillAt(db, event.agentId, event.redactionVersion)}
    returning data`;
  return row ? row.data : null;
}

/** The list rows of conversations by id (the `conversation` of conversation.deleted events), in no particular order. */
export async function findConversationRows(db: Db, ids: string[]): Promise<Conversation[]> {
  if (ids.length === 0) return [];
  const rows = await db<ConversationRow[]>`select ${rowColumns(db)} from conversations c where c.id = any(${ids}::uuid[])`;
  return rows.map(toConversation);
}
