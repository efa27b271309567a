import { timingSafeEqual } from 'node:crypto';
import type { Db } from '../db/index.ts';
import { findSimulation } from '../db/simulations.ts';
import type { SecretBox } from '../crypto/secret-box.ts';

/**
 * The header by which a web simulation's browser tells the public widget API that the conversation it
 * starts is simulated (real-clients D13): only the simulation browser adds it (to requests to the
 * service's own origin), so `conversation.started` already says `is_simulated: true`.
 */
export const SIMULATION_HEADER = 'x-simulation-token';

const macOf = (secrets: SecretBox, simulationId: string, publicKey: string) =>
  secrets.mac(`web-simulation:${simulationId}:${publicKey}`).toString('base64url');

/** The token a run's browser sends: the run's id and a MAC binding it to the agent's public key. */
export function simulationToken(secrets: SecretBox, simulationId: string, publicKey: string): string {
  return `${simulationId}.${macOf(secrets, simulationId, publicKey)}`;
}

/**
 * Whether `token` names a web simulation of this organization and agent that is still running. A token
 * that does not verify, or a run that has ended, makes an ordinary (real) conversation: a visitor
 * cannot hide a conversation by sending the header.
 */
export async function isSimulationToken(db: Db, secrets: SecretBox, token: string, agent: { id: string; orgId: string; publicKey: string }): Promise<boolean> {
  const [simulationId, mac] = token.split('.');
  if (!simulationId || !mac || !/^[0-9a-f-]{36}$/i.test(simulationId)) return false;
  const given = Buffer.from(mac);
  const expected = Buffer.from(macOf(secrets, simulationId, agent.publicKey));
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return false;
  const run = await findSimulation(db, agent.orgId, simulationId);
  return run !== null && run.kind === 'web' && run.status === 'running' && run.agentId === agent.id;
}
