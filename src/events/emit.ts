import { randomBytes } from 'node:crypto';
import type { Db } from '../db/index.ts';
import { insertEvent, insertEventUnlessRedacted } from '../db/events.ts';
import type { EventType } from '../schemas/events.ts';
import { checkEventShape } from './shapes.ts';
import { agentRedactionPolicy } from '../db/governance.ts';
import { PAYLOAD_KEPT_FIELDS, redactValue } from '../domain/redaction.ts';

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
 * the change it reports commits. Nothing else is needed: the commit wakes the dispatchers of the
 * worker processes (LISTEN webhook_outbox, src/events/dispatcher.ts), and the recovery sweep
 * takes what no dispatcher did.
 */
export async function emitEvent(tx: Db, input: EventInput): Promise<string> {
  checkEventShape(input.type, input.data);
  const id = newEventId();
  const agentId = input.agentId ?? agentIdOf(input.data);
  const event = { id, orgId: input.orgId, type: input.type, agentId, data: input.data };
  // The agent's redaction with the `webhooks` target masks the payload before it is stored and sent (issue 47):
  // the event is written as it is in the same statement that finds none (issue 48), else masked here.
  if (await insertEventUnlessRedacted(tx, event)) return id;
  const policy = await agentRedactionPolicy(tx, agentId, 'webhooks');
  await insertEvent(tx, { ...event, data: policy ? redactValue(input.data, policy, PAYLOAD_KEPT_FIELDS) : input.data });
  return id;
}
