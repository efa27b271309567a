import type { Db } from './index.ts';

/** The events table, the outbox: an event row is written in the transaction of the change it reports. */

export interface NewEvent { id: string; orgId: string; type: string; agentId: string | null; data: Record<string, unknown> }

export async function insertEvent(tx: Db, event: NewEvent): Promise<void> {
  // A json parameter (serialized once by the driver) into a json column: the payload keeps the API's key order.
  // The clock, not the transaction's start: two events of one transaction keep the order they were written in.
  await tx`insert into events (id, org_id, type, agent_id, data, created_at)
    values (${event.id}, ${event.orgId}, ${event.type}, ${event.agentId}, ${event.data as never}::json, clock_timestamp())`;
}
