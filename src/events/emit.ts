import { randomBytes } from 'node:crypto';
import type { Db } from '../db/index.ts';
import { insertEvent } from '../db/events.ts';
import type { EventType } from '../schemas/events.ts';
import { checkEventShape } from './shapes.ts';
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
  // The agent's redaction with the `webhooks` target masks the payload before it is stored and sent (issue 47), as this
  // process knows it; the write checks that is still the agent's version, else the settings are read again.
  if (!agentId) {
    await insertEvent(tx, { id, orgId: input.orgId, type: input.type, agentId, data: input.data });
    return id;
  }
  const masked = (known: KnownRedaction) => {
    const policy = policyAt(known.settings, 'webhooks');
    return policy ? redactValue(input.data, policy, PAYLOAD_KEPT_FIELDS) : input.data;
  };
  const known = knownRedaction(agentId) ?? await loadAgentRedaction(tx, agentId);
  if (await insertEvent(tx, { id, orgId: input.orgId, type: input.type, agentId, data: masked(known) }, known.version)) return id;
  await insertEvent(tx, { id, orgId: input.orgId, type: input.type, agentId, data: masked(await loadAgentRedaction(tx, agentId)) });
  return id;
}
