import type { Db, Fragment } from './index.ts';

/** The events table, the outbox: an event row is written in the transaction of the change it reports. */

/**
 * An event written by the statement of the change it reports (src/db/agents.ts, writeAgentChange): its data already
 * masked and as JSON text, and the version of its agent's redaction settings it was masked with.
 */
export interface OutboxEvent { id: string; orgId: string; type: string; agentId: string; json: string; redactionVersion: number }

/**
 * The condition that the agent's redaction settings are still at `version` (the version a payload or a message was
 * masked with): a statement guarded by it writes nothing once they changed.
 */
export const redactionStillAt = (db: Db, agentId: unknown, version: number) =>
  db`coalesce((select version from agent_governance where agent_id = ${agentId as string}), 0) = ${version}`;

/**
 * A time column as JSON text the way the API writes times (Date's toISOString: UTC, to the millisecond), for event
 * payloads PostgreSQL builds; null stays null.
 */
export const isoTime = (db: Db, column: Fragment) => db`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * An event's `dispatched_at` as it is written: null, for the dispatchers to fan it out, or now when no endpoint of
 * `orgId` would receive its `type` (event_has_receivers, migration 062): no dispatcher is woken for it. Either may be a
 * value or a column (`db\`c.org_id\``).
 */
export const dispatchedUnlessReceived = (db: Db, orgId: unknown, type: unknown) =>
  db`case when event_has_receivers(${orgId as string}::uuid, ${type as string}::text) then null else now() end`;

export interface NewEvent { id: string; orgId: string; type: string; agentId: string | null; data: Record<string, unknown> }

/**
 * Writes an event. With `redactionVersion` (the version of its agent's redaction settings its payload was masked with),
 * it is written only while that is still the agent's version: answers false, writing nothing, when it changed.
 */
export async function insertEvent(tx: Db, event: NewEvent, redactionVersion?: number): Promise<boolean> {
  // A json parameter (serialized once by the driver) into a json column: the payload keeps the API's key order.
  // The clock, not the transaction's start: two events of one transaction keep the order they were written in.
  const guard = redactionVersion === undefined || !event.agentId ? tx`` : tx`where ${redactionStillAt(tx, event.agentId, redactionVersion)}`;
  const written = await tx`insert into events (id, org_id, type, agent_id, data, created_at, dispatched_at)
    select ${event.id}::text, ${event.orgId}::uuid, ${event.type}::text, ${event.agentId}::uuid, ${event.data as never}::json, clock_timestamp(),
      ${dispatchedUnlessReceived(tx, event.orgId, event.type)} ${guard}`;
  return written.count === 1;
}
