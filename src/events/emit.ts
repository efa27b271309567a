import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Db } from '../db/index.ts';
import type { EventType } from '../schemas/events.ts';
import { dispatchEvents, type DispatchDeps } from './dispatch.ts';

export { dispatchEvents, type DispatchDeps } from './dispatch.ts';

/** An event to emit: `data` holds the affected resources as the API returns them. */
export interface EventInput {
  orgId: string;
  type: EventType;
  data: Record<string, unknown>;
  /** The agent the event concerns (its workflows carry it as the AgentId search attribute); default `data.agent.id`. */
  agentId?: string | null;
}

/** `evt_` and 24 URL-safe random characters. */
export function newEventId(): string {
  return 'evt_' + randomBytes(18).toString('base64url');
}

function agentIdOf(data: Record<string, unknown>): string | null {
  const agent = data.agent as { id?: unknown } | undefined;
  return typeof agent?.id === 'string' ? agent.id : null;
}

/**
 * Writes an event into the outbox inside the caller's transaction, so it exists exactly when
 * the change it reports commits. After commit, hand the returned id to `dispatchEvents` (or
 * `dispatchAfterCommit`); if that never happens, the recovery sweep dispatches it.
 */
export async function emitEvent(tx: Db, input: EventInput): Promise<string> {
  const id = newEventId();
  // A json parameter (serialized once by the driver) into a json column: the payload keeps the API's key order.
  await tx`insert into events (id, org_id, type, agent_id, data)
    values (${id}, ${input.orgId}, ${input.type}, ${input.agentId ?? agentIdOf(input.data)}, ${input.data as never}::json)`;
  return id;
}

/**
 * Dispatches committed events without making the caller wait: the response does not depend on
 * it, and an event whose dispatch fails here (Temporal unreachable, process stopping) is
 * picked up by the recovery sweep.
 */
export function dispatchAfterCommit(deps: DispatchDeps & { log: Logger }, eventIds: string[]): void {
  if (eventIds.length === 0) return;
  dispatchEvents(deps, eventIds).catch((err: unknown) => {
    deps.log.warn({ err, event_ids: eventIds }, 'event dispatch failed; the recovery sweep will retry it');
  });
}
