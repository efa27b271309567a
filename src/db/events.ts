import type { Db } from './index.ts';

/** The events table, the outbox: an event row is written in the transaction of the change it reports. */

/**
 * An event written by the statement of the change it reports (src/db/agents.ts, writeAgentChange): its data already
 * masked and as JSON text, and the version of its agent's redaction settings it was masked with.
 */
export interface OutboxEvent { id: string; orgId: string; type: string; agentId: string; json: string; redactionVersion: number }

export interface NewEvent { id: string; orgId: string; type: string; agentId: string | null; data: Record<string, unknown> }

/**
 * Writes an event. With `redactionVersion` (the version of its agent's redaction settings its payload was masked with),
 * it is written only while that is still the agent's version: answers false, writing nothing, when it changed.
 */
export async function insertEvent(tx: Db, event: NewEvent, redactionVersion?: number): Promise<boolean> {
  // A json parameter (serialized once by the driver) into a json column: the payload keeps the API's key order.
  // The clock, not the transaction's start: two events of one transaction keep the order they were written in.
  const guard = redactionVersion === undefined || !event.agentId
    ? tx``
    : tx`where coalesce((select version from agent_governance where agent_id = ${event.agentId}), 0) = ${redactionVersion}`;
  // An event no endpoint would receive is written dispatched: no dispatcher is woken for it (event_has_receivers, migration 062).
  const written = await tx`insert into events (id, org_id, type, agent_id, data, created_at, dispatched_at)
    select ${event.id}::text, ${event.orgId}::uuid, ${event.type}::text, ${event.agentId}::uuid, ${event.data as never}::json, clock_timestamp(),
      case when event_has_receivers(${event.orgId}::uuid, ${event.type}::text) then null else now() end ${guard}`;
  return written.count === 1;
}
