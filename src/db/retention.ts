import type { Db } from './index.ts';
import { findConversationRows } from './conversations.ts';
import type { Conversation } from '../schemas/conversations.ts';

/**
 * The deletes of retention runs (issue 47), one bounded batch each, and the exact count of what a
 * run deleted. A batch selects its rows with SKIP LOCKED, so two runs (a retry beside a worker
 * that is not quite dead) never wait on each other nor delete a row twice.
 */

/** Which rows of an organization a step's batch may take: older than `cutoff`, of one agent or of all but some. */
export interface RetentionScope { orgId: string; cutoff: Date; agentId: string | null; excludeAgentIds: string[] }

const agentCondition = (db: Db, s: RetentionScope) => (s.agentId
  ? db`and agent_id = ${s.agentId}`
  : db`and not (agent_id = any(${s.excludeAgentIds}::uuid[]))`);

/** Keeps reports' daily rollups as they are counted while this transaction deletes conversations (migration 049). */
export async function keepRollups(db: Db): Promise<void> {
  await db`select set_config('ams.keep_rollups', 'on', true)`;
}

/**
 * Deletes up to `batchSize` ended conversations (and what cascades: messages, notes, live events,
 * mail ids) whose last activity is before the cutoff, of every surface or of `surface` only.
 * Answers the deleted conversations as the list shows them, read before they go.
 */
export async function deleteOldConversationsBatch(db: Db, s: RetentionScope, batchSize: number, surface?: string): Promise<Conversation[]> {
  const only = surface ? db`and surface = ${surface}` : db``;
  const ids = (await db<{ id: string }[]>`select id from conversations
    where org_id = ${s.orgId} and status = 'ended' and coalesce(ended_at, last_activity_at) < ${s.cutoff} ${agentCondition(db, s)} ${only}
    order by started_at limit ${batchSize} for update skip locked`).map((r) => r.id);
  if (ids.length === 0) return [];
  const rows = await findConversationRows(db, ids);
  await deleteConversationsById(db, ids);
  return rows;
}

/** Deletes conversations by id with their tool-call log (which holds arguments); usage records stay, unlinked. */
export async function deleteConversationsById(db: Db, ids: string[]): Promise<number> {
  await keepRollups(db);
  await db`delete from agent_tool_calls where conversation_id = any(${ids}::uuid[])`;
  const { count } = await db`delete from conversations where id = any(${ids}::uuid[])`;
  await db`update usage_records set conversation_id = null where conversation_id = any(${ids}::uuid[])`;
  return count;
}

/** The days (in `tz`) of the conversations a conversations step will delete: what reports must count first. */
export async function daysOfOldConversations(db: Db, s: RetentionScope, tz: string, surface?: string): Promise<string[]> {
  const only = surface ? db`and surface = ${surface}` : db``;
  return (await db<{ day: string }[]>`select distinct to_char((started_at at time zone ${tz})::date, 'YYYY-MM-DD') as day from conversations
    where org_id = ${s.orgId} and status = 'ended' and not is_simulated and coalesce(ended_at, last_activity_at) < ${s.cutoff}
      ${agentCondition(db, s)} ${only} order by 1`).map((r) => r.day);
}

/** The time zones an organization's reports count days in (UTC always among them). */
export async function reportTimeZones(db: Db, orgId: string): Promise<string[]> {
  const rows = await db<{ timezone: string }[]>`select distinct timezone from reports where org_id = ${orgId}
    union select distinct timezone from report_rollup_days where org_id = ${orgId} union select 'UTC'`;
  return rows.map((r) => r.timezone);
}

/** Deletes up to `batchSize` finished report runs (with their artifact and figures) created before the cutoff. */
export async function deleteOldReportRunsBatch(db: Db, s: RetentionScope, batchSize: number): Promise<number> {
  return (await db`delete from report_runs where id in (select id from report_runs
    where org_id = ${s.orgId} and status <> 'generating' and created_at < ${s.cutoff} limit ${batchSize} for update skip locked)`).count;
}

/**
 * Deletes up to `batchSize` events older than the cutoff whose deliveries are all finished (and so
 * their deliveries and attempts): an event still being delivered stays until it is done.
 */
export async function deleteOldWebhookEventsBatch(db: Db, s: RetentionScope, batchSize: number): Promise<number> {
  return (await db`delete from events where id in (select e.id from events e
    where e.org_id = ${s.orgId} and e.created_at < ${s.cutoff} and e.dispatched_at is not null
      and not exists (select 1 from webhook_deliveries d where d.event_id = e.id and d.status = 'pending')
    limit ${batchSize} for update skip locked)`).count;
}

/** Adds `deleted` to a run's count of a step, in the transaction that deleted them. */
export async function recordRetentionProgress(db: Db, runKey: string, step: string, deleted: number): Promise<void> {
  await db`insert into retention_run_progress (run_key, step, deleted) values (${runKey}, ${step}, ${deleted})
    on conflict (run_key, step) do update set deleted = retention_run_progress.deleted + excluded.deleted, updated_at = now()`;
}

/** What a run deleted, per step. */
export async function retentionProgress(db: Db, runKey: string): Promise<Record<string, number>> {
  const rows = await db<{ step: string; deleted: number }[]>`select step, deleted from retention_run_progress where run_key = ${runKey} order by step`;
  return Object.fromEntries(rows.map((r) => [r.step, Number(r.deleted)]));
}

/** Forgets the counts of runs finished long ago. */
export async function pruneRetentionProgress(db: Db, olderThanDays: number): Promise<void> {
  await db`delete from retention_run_progress where updated_at < now() - make_interval(days => ${olderThanDays})`;
}
