import { basename, dirname } from 'node:path';
import type { Db } from '../db/index.ts';
import type { KnowledgeDeps } from '../knowledge/sites.ts';
import { importFromEachFolder } from '../modules.ts';
import { CODE_EXT } from '../infra/paths.ts';

/** What a family's hook is told of the agent being deleted. */
export interface AgentDeleteContext { orgId: string; agentId: string; deleteKbs: boolean }

/**
 * A family's part of an agent's delete: runs inside the delete's transaction (the agent is
 * already hidden); may answer work to do after commit (stopping workflows), which is best effort.
 */
export type AgentDeleteHook = (tx: Db, agent: AgentDeleteContext) => Promise<((deps: KnowledgeDeps) => Promise<void>) | void>;

/** A family's step of the purge: deletes up to `batchSize` of the agent's rows, answers how many went. */
export type AgentPurgeStep = (db: Db, agentId: string, batchSize: number) => Promise<number>;

/**
 * What becomes of a table's rows naming a deleted agent, as the family owning the table declares it
 * (checked at service start against the schema, agent-tables.ts):
 * - `deleteHook`: one of the family's `agentDeleteHooks` empties it, inside the delete's transaction;
 * - `purgeStep`: one of the family's `agentPurgeSteps` empties it, in batches;
 * - `withAgentRow`: its foreign key to `agents` cascades (or sets null) when the purge deletes the agent row;
 * - `kept`: the rows stay on purpose, and this says why.
 */
export type AgentRowsFate = { deleteHook: string } | { purgeStep: string } | { withAgentRow: true } | { kept: string };

/**
 * What a family declares in its own `src/<family>/agent-hooks.ts`, found there by folder (no list
 * to add it to): `agentDeleteHooks`, rows that must go at once when an agent is deleted (inside
 * the delete's transaction), and `agentPurgeSteps`, rows the purge workflow deletes afterwards in
 * batches (purge-steps.ts). Each keyed by a name unique across families.
 * @example export const agentDeleteHooks: Record<string, AgentDeleteHook> = { email_inboxes: async (tx, { agentId }) => { ... } };
 */
export interface AgentHooksModule {
  agentDeleteHooks?: Record<string, AgentDeleteHook>;
  agentPurgeSteps?: Record<string, AgentPurgeStep>;
  /** Every table of this family with an `agent_id` (or `*_agent_id`) column, and what its rows become. */
  agentTables?: Record<string, AgentRowsFate>;
}

/** A family's agent-hooks module with the family's folder name. */
export interface FamilyAgentHooks { family: string; hooks: AgentHooksModule }

const SRC = new URL('../', import.meta.url);
let declared: Promise<FamilyAgentHooks[]> | undefined;

/** Every family's agent-hooks module, by folder name; loaded once, on the first use. */
export function familyAgentHooks(): Promise<FamilyAgentHooks[]> {
  return declared ??= importFromEachFolder(SRC, `agent-hooks${CODE_EXT}`).then((modules) => modules.map(({ path, exports }) => ({
    family: basename(dirname(path)), hooks: exports as AgentHooksModule,
  })));
}

/** Merges the families' records of one kind, refusing a name declared twice. */
export function mergeDeclared<T>(records: (Record<string, T> | undefined)[], what: string): Record<string, T> {
  const merged: Record<string, T> = {};
  for (const record of records) {
    for (const [name, value] of Object.entries(record ?? {})) {
      if (name in merged) throw new Error(`the agent ${what} ${name} is declared twice`);
      merged[name] = value;
    }
  }
  return merged;
}

/**
 * The hooks of `deleteAgent`, in order: each family's, by folder name. A new family whose rows
 * must go at once (not in the purge, see purge-steps.ts) declares its hook in its own
 * src/<family>/agent-hooks.ts instead of a branch in deleteAgent.
 */
export async function agentDeleteHooks(): Promise<Record<string, AgentDeleteHook>> {
  return mergeDeclared((await familyAgentHooks()).map((m) => m.hooks.agentDeleteHooks), 'delete hook');
}
