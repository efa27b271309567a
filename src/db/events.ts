import type { Db } from './index.ts';

/** The events table, the outbox: an event row is written in the transaction of the change it reports. */

export interface NewEvent { id: string; orgId: string; type: string; agentId: string | null; data: Record<string, unknown> }

export async function insertEvent(tx: Db, event: NewEvent): Promise<void> {
  // A json parameter (serialized once by the driver) into a json column: the payload keeps the API's key order.
  // The clock, not the transaction's start: two events of one transaction keep the order they were written in.
  await tx`insert into events (id, org_id, type, agent_id, data, created_at)
    values (${event.id}, ${event.orgId}, ${event.type}, ${event.agentId}, ${event.data as never}::json, clock_timestamp())`;
}

/**
 * Writes the event unless its agent's redaction applies to `webhooks` (the same rule as `agentRedactionPolicy`: some
 * kinds, and `webhooks` among the targets), in one statement: false when it did not, and the caller masks the payload
 * and writes it with `insertEvent`. Most agents redact nothing, so most events take one round trip, not two (issue 48).
 */
export async function insertEventUnlessRedacted(tx: Db, event: NewEvent): Promise<boolean> {
  const rows = await tx`insert into events (id, org_id, type, agent_id, data, created_at)
    select ${event.id}, ${event.orgId}, ${event.type}, ${event.agentId}::uuid, ${event.data as never}::json, clock_timestamp()
    where not exists (select from agent_governance g where g.agent_id = ${event.agentId}::uuid
      and jsonb_array_length(g.redaction->'kinds') > 0 and g.redaction->'targets' ? 'webhooks')`;
  return rows.count === 1;
}
