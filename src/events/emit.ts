import type { Db } from '../db/index.ts';
import { pooledRandomBytes } from '../ids.ts';
import { insertEvent, type OutboxEvent } from '../db/events.ts';
import type { EventType } from '../schemas/events.ts';
import { checkEventShape } from './shapes.ts';
import { SHAPE_CHECKS } from '../validation.ts';
import { loadAgentRedaction } from '../db/governance.ts';
import { knownRedaction, policyAt, type KnownRedaction } from '../db/redaction-cache.ts';
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
  return 'evt_' + pooledRandomBytes(18).toString('base64url');
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
  // The agent's redaction with the `webhooks` target masks the payload before it is stored and sent (issue 47), as this
  // process knows it; the write checks that is still the agent's version, else the settings are read again.
  if (!agentId) {
    await insertEvent(tx, { id, orgId: input.orgId, type: input.type, agentId, data: input.data });
    return id;
  }
  const known = knownRedaction(agentId) ?? await loadAgentRedaction(tx, agentId);
  if (await insertEvent(tx, { id, orgId: input.orgId, type: input.type, agentId, data: masked(input.data, known) }, known.version)) return id;
  await insertEvent(tx, { id, orgId: input.orgId, type: input.type, agentId, data: masked(input.data, await loadAgentRedaction(tx, agentId)) });
  return id;
}

/** An event's data as stored and sent: masked by its agent's redaction settings with the `webhooks` target. */
function masked(data: Record<string, unknown>, known: KnownRedaction): Record<string, unknown> {
  const policy = policyAt(known.settings, 'webhooks');
  return policy ? redactValue(data, policy, PAYLOAD_KEPT_FIELDS) : data;
}

/**
 * An event of an agent made ready for a statement that writes it with the change it reports (writeAgentChange, issue 48),
 * masked with `known`, the agent's redaction settings as that change read them: the statement writes nothing unless
 * they are still the agent's version. `checked` is the data as it will be stored, for the shape check (test mode): the
 * `data` given may hold a placeholder the statement fills in.
 */
export function prepareAgentEvent(input: EventInput & { agentId: string }, known: KnownRedaction, checked: Record<string, unknown>): OutboxEvent {
  checkEventShape(input.type, checked);
  return {
    id: newEventId(), orgId: input.orgId, type: input.type, agentId: input.agentId,
    json: JSON.stringify(masked(input.data, known)), redactionVersion: known.version,
  };
}

/**
 * The id and redaction version under which the statement that makes a change of `agentId`'s may write its event too,
 * its data built by PostgreSQL (issue 48): when this process knows the agent's redaction and it leaves webhook payloads
 * as they are. Undefined otherwise: the caller emits the event as usual.
 */
export function sqlWrittenEvent(agentId: string | undefined): { id: string; agentId: string; redactionVersion: number } | undefined {
  const known = agentId ? knownRedaction(agentId) : undefined;
  return agentId && known && !policyAt(known.settings, 'webhooks') ? { id: newEventId(), agentId, redactionVersion: known.version } : undefined;
}

/**
 * In test mode, holds an event whose data PostgreSQL built (the statement that wrote the change wrote it too: issue 48)
 * to its schema, and to `expected`, the data emitEvent would have written from the row the statement returned: any
 * drift between the two fails the change in the test.
 */
export function checkWrittenEvent(type: EventType, stored: Record<string, unknown>, expected: Record<string, unknown>): void {
  if (!SHAPE_CHECKS) return;
  checkEventShape(type, stored);
  const [a, b] = [JSON.stringify(stored), JSON.stringify(expected)];
  if (a === b) return;
  const message = `event drift: ${type} data written by PostgreSQL differs from the row it reports:\n  stored:   ${a.slice(0, 2000)}\n  expected: ${b.slice(0, 2000)}`;
  process.stderr.write(`${message}\n`);
  throw new Error(message);
}
