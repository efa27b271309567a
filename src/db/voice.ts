import type { Db } from './index.ts';
import { newId } from '../ids.ts';

/** Streamed calls (issue 44): stream tokens, per-turn latency timings, recordings. */

export interface StreamTokenBinding { id: string; orgId: string; conversationId: string; callSid: string }

export async function insertStreamToken(db: Db, input: { tokenHash: string; orgId: string; conversationId: string; callSid: string; ttlSeconds: number }): Promise<void> {
  await db`insert into voice_stream_tokens (id, token_hash, org_id, conversation_id, call_sid, expires_at)
    values (${newId()}, ${input.tokenHash}, ${input.orgId}, ${input.conversationId}, ${input.callSid}, now() + make_interval(secs => ${input.ttlSeconds}))`;
}

/** Spends the token: its binding the first time, while it has not expired; null for an unknown, expired or spent one. */
export async function consumeStreamToken(db: Db, tokenHash: string): Promise<StreamTokenBinding | null> {
  const [row] = await db<{ id: string; org_id: string; conversation_id: string; call_sid: string }[]>`
    update voice_stream_tokens set used_at = now()
    where token_hash = ${tokenHash} and used_at is null and expires_at > now()
    returning id, org_id, conversation_id, call_sid`;
  return row ? { id: row.id, orgId: row.org_id, conversationId: row.conversation_id, callSid: row.call_sid } : null;
}

export interface TurnTimings { turn: number; speechEndedAt: Date; transcriptAt: Date; replyAt: Date; firstAudioAt: Date | null; interrupted: boolean }

export async function recordTurnTimings(db: Db, input: TurnTimings & { orgId: string; agentId: string; conversationId: string }): Promise<void> {
  await db`insert into voice_turn_timings (id, org_id, agent_id, conversation_id, turn, speech_ended_at, transcript_at, reply_at, first_audio_at, interrupted)
    values (${newId()}, ${input.orgId}, ${input.agentId}, ${input.conversationId}, ${input.turn}, ${input.speechEndedAt}, ${input.transcriptAt},
      ${input.replyAt}, ${input.firstAudioAt}, ${input.interrupted})
    on conflict (conversation_id, turn) do nothing`;
}

export async function listTurnTimings(db: Db, orgId: string, conversationId: string): Promise<TurnTimings[]> {
  const rows = await db<{ turn: number; speech_ended_at: Date; transcript_at: Date; reply_at: Date; first_audio_at: Date | null; interrupted: boolean }[]>`
    select turn, speech_ended_at, transcript_at, reply_at, first_audio_at, interrupted from voice_turn_timings
    where org_id = ${orgId} and conversation_id = ${conversationId} order by turn`;
  return rows.map((r) => ({
    turn: r.turn, speechEndedAt: r.speech_ended_at, transcriptAt: r.transcript_at, replyAt: r.reply_at, firstAudioAt: r.first_audio_at, interrupted: r.interrupted,
  }));
}

/** p50 and p95 of end of speech → first audio byte (ms) for the agent's streamed turns in [from, to). */
export async function turnLatencyPercentiles(db: Db, orgId: string, agentId: string, from: Date, to: Date): Promise<{ turns: number; p50Ms: number | null; p95Ms: number | null }> {
  const [row] = await db<{ turns: number; p50: number | null; p95: number | null }[]>`
    select count(*)::int as turns,
      percentile_cont(0.5) within group (order by extract(epoch from first_audio_at - speech_ended_at) * 1000) as p50,
      percentile_cont(0.95) within group (order by extract(epoch from first_audio_at - speech_ended_at) * 1000) as p95
    from voice_turn_timings
    where org_id = ${orgId} and agent_id = ${agentId} and first_audio_at is not null and speech_ended_at >= ${from} and speech_ended_at < ${to}`;
  return { turns: row?.turns ?? 0, p50Ms: row?.p50 === null || row?.p50 === undefined ? null : Math.round(row.p50), p95Ms: row?.p95 === null || row?.p95 === undefined ? null : Math.round(row.p95) };
}

export interface CallRecording { conversationId: string; orgId: string; agentId: string; blobKey: string; contentType: string; bytes: number; durationMs: number }

export async function upsertCallRecording(db: Db, r: CallRecording): Promise<void> {
  await db`insert into call_recordings (conversation_id, org_id, agent_id, blob_key, content_type, bytes, duration_ms)
    values (${r.conversationId}, ${r.orgId}, ${r.agentId}, ${r.blobKey}, ${r.contentType}, ${r.bytes}, ${r.durationMs})
    on conflict (conversation_id) do update set blob_key = excluded.blob_key, content_type = excluded.content_type, bytes = excluded.bytes, duration_ms = excluded.duration_ms`;
}

/**
 * Keeps a carrier's recording of a conversation (issue 44, a turn-by-turn call): replaces any earlier one. False when
 * the conversation is gone (deleted while its audio was downloaded): the caller deletes the blob it wrote.
 */
export async function upsertCarrierRecording(db: Db, r: CallRecording & { carrierRecordingSid: string }): Promise<boolean> {
  const rows = await db`insert into call_recordings (conversation_id, org_id, agent_id, blob_key, content_type, bytes, duration_ms, carrier_recording_sid)
    select c.id, c.org_id, c.agent_id, ${r.blobKey}, ${r.contentType}, ${r.bytes}, ${r.durationMs}, ${r.carrierRecordingSid}
    from conversations c where c.id = ${r.conversationId} and c.org_id = ${r.orgId}
    on conflict (conversation_id) do update set blob_key = excluded.blob_key, content_type = excluded.content_type, bytes = excluded.bytes,
      duration_ms = excluded.duration_ms, carrier_recording_sid = excluded.carrier_recording_sid`;
  return rows.count > 0;
}

/** The CallSids of a conversation's calls (its carrier sessions, ended or not): a recording callback must name one. */
export async function callSidsOfConversation(db: Db, conversationId: string): Promise<string[]> {
  const rows = await db<{ session_key: string }[]>`select session_key from carrier_sessions where conversation_id = ${conversationId} and channel = 'voice'`;
  return rows.map((r) => r.session_key);
}

export async function findCallRecording(db: Db, orgId: string, conversationId: string): Promise<CallRecording | null> {
  const [row] = await db<{ conversation_id: string; org_id: string; agent_id: string; blob_key: string; content_type: string; bytes: number; duration_ms: number }[]>`
    select conversation_id, org_id, agent_id, blob_key, content_type, bytes, duration_ms from call_recordings
    where org_id = ${orgId} and conversation_id = ${conversationId}`;
  return row ? {
    conversationId: row.conversation_id, orgId: row.org_id, agentId: row.agent_id, blobKey: row.blob_key, contentType: row.content_type, bytes: row.bytes, durationMs: row.duration_ms,
  } : null;
}

export async function deleteCallRecordingRow(db: Db, orgId: string, conversationId: string): Promise<string | null> {
  const [row] = await db<{ blob_key: string }[]>`delete from call_recordings where org_id = ${orgId} and conversation_id = ${conversationId} returning blob_key`;
  return row?.blob_key ?? null;
}

/** A message the caller cut short keeps what was heard of it; one not heard at all leaves the transcript. */
export async function keepHeardText(db: Db, conversationId: string, messageId: string, heard: string): Promise<void> {
  if (heard.trim()) await db`update conversation_messages set text = ${heard} where conversation_id = ${conversationId} and id = ${messageId}`;
  else await db`delete from conversation_messages where conversation_id = ${conversationId} and id = ${messageId}`;
}

/** The organization of an agent (deleted or not), for the purge of its recordings. */
export async function orgOfAgent(db: Db, agentId: string): Promise<string | null> {
  const [row] = await db<{ org_id: string }[]>`select org_id from agents where id = ${agentId}`;
  return row?.org_id ?? null;
}

export async function deleteCallRecordingRowsOfAgent(db: Db, agentId: string, batchSize: number): Promise<number> {
  const rows = await db`delete from call_recordings where conversation_id in (
    select conversation_id from call_recordings where agent_id = ${agentId} limit ${batchSize})`;
  return rows.count;
}

/** Up to `limit` recordings of the retention scope older than its cutoff: their conversations and blob keys. */
export async function oldRecordingsBatch(db: Db, scope: { orgId: string; cutoff: Date; agentId: string | null; excludeAgentIds: string[] }, limit: number):
  Promise<{ conversation_id: string; blob_key: string }[]> {
  const agent = scope.agentId ? db`and agent_id = ${scope.agentId}` : db`and not (agent_id = any(${scope.excludeAgentIds}::uuid[]))`;
  return db<{ conversation_id: string; blob_key: string }[]>`select conversation_id, blob_key from call_recordings
    where org_id = ${scope.orgId} and created_at < ${scope.cutoff} ${agent} order by created_at limit ${limit}`;
}

/** The recordings of these conversations (a person's, for their export). */
export async function recordingsOfConversations(db: Db, conversationIds: string[]): Promise<{ conversation_id: string; content_type: string; bytes: number; duration_ms: number; created_at: Date }[]> {
  if (!conversationIds.length) return [];
  return db<{ conversation_id: string; content_type: string; bytes: number; duration_ms: number; created_at: Date }[]>`
    select conversation_id, content_type, bytes, duration_ms, created_at from call_recordings
    where conversation_id = any(${conversationIds}::uuid[]) order by created_at`;
}
