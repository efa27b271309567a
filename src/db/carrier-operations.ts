import type { Db } from './index.ts';
import { newId } from '../ids.ts';

/** One thing a carrier did for the service (the sandbox records each it plays). */
export interface CarrierOperation {
  id: string; carrier: string; operation: string; phone_number: string | null; target: string | null;
  details: Record<string, unknown>; created_at: string;
}

export async function recordCarrierOperation(db: Db, op: {
  carrier: string; operation: string; phoneNumber?: string | null; target?: string | null; details?: Record<string, unknown>;
}): Promise<void> {
  await db`insert into carrier_operations (id, carrier, operation, phone_number, target, details)
    values (${newId()}, ${op.carrier}, ${op.operation}, ${op.phoneNumber ?? null}, ${op.target ?? null}, ${db.json((op.details ?? {}) as never)})`;
}

/** The operations recorded for a number (any organization's), or for one carrier resource (`sid`), oldest first. */
export async function listCarrierOperations(db: Db, of: { phoneNumber: string } | { sid: string }): Promise<CarrierOperation[]> {
  const where = 'sid' in of ? db`details->>'sid' = ${of.sid}` : db`phone_number = ${of.phoneNumber}`;
  const rows = await db<(Omit<CarrierOperation, 'created_at'> & { created_at: Date })[]>`
    select id, carrier, operation, phone_number, target, details, created_at from carrier_operations
    where ${where} order by created_at, id`;
  return rows.map((r) => ({ ...r, created_at: r.created_at.toISOString() }));
}

/** The sid of the first call `carrier` recorded from `from` to `to` with this webhook `url`, at or after `since`. */
export async function findRecordedCall(db: Db, carrier: string, call: { from: string; to: string; url: string; since: Date }): Promise<string | null> {
  const [op] = await db<{ sid: string }[]>`select details->>'sid' as sid from carrier_operations
    where carrier = ${carrier} and operation = 'call' and phone_number = ${call.from} and target = ${call.to}
      and details->>'url' = ${call.url} and created_at >= ${call.since} order by created_at limit 1`;
  return op?.sid ?? null;
}
