import { basename, dirname } from 'node:path';
import type { Db, Sql } from '../db/index.ts';
import type { RetentionScope } from '../db/retention.ts';
import type { RetentionKey } from '../schemas/governance.ts';
import type { Config } from '../config.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import { CODE_EXT } from '../infra/paths.ts';
import { importFromEachFolder } from '../modules.ts';

/**
 * Retention and a person's data are plug-ins (issue 47): each family says where its data lives, in
 * its own folder, and the governance use cases find them there (as an agent's delete finds its
 * hooks, src/agents/delete-hooks.ts):
 * - `src/<family>/retention.ts` exports `retentionSteps`: per step name, the settings key whose
 *   days apply and a batch delete of what is older than the cutoff;
 * - `src/<family>/contact-data.ts` exports `contactDataSteps`: per step name, what a contact's
 *   export shows and what its erase deletes.
 * Step names are unique across families.
 */

/** What a step may need besides the database: files under DATA_DIR (the mail spool), the secrets key (sealed captured data). */
export interface StepContext { config: Pick<Config, 'DATA_DIR'>; secrets: SecretBox }

/** One kind of data a retention run deletes, a bounded batch at a time. */
export interface RetentionStep {
  /** The retention settings key whose days apply (`recordings`, `audit_log`: their families declare their steps). */
  key: RetentionKey;
  /** True when the rows belong to an agent, so that an agent's override applies to them. */
  perAgent: boolean;
  /** Runs once before the batches of a scope (e.g. reports count the days about to go). Idempotent. */
  prepare?(sql: Sql, scope: RetentionScope): Promise<void>;
  /** Deletes up to `batchSize` rows of the scope in the caller's transaction; answers how many went. */
  deleteBatch(tx: Db, scope: RetentionScope, batchSize: number, ctx: StepContext): Promise<number>;
}

/** Who the person is, as the steps of a contact's export and erase find their data. */
export interface ContactRef { orgId: string; id: string; phone: string | null; email: string | null; visitorIds: string[] }

/** What a step's erase did: rows deleted or scrubbed, and the Temporal workflow ids whose histories hold the person's data. */
export interface ErasedPart { deleted: number; histories?: string[] }

/** One place a person's data lives: what the export shows of it, and its erase (in the erase's one transaction). */
export interface ContactDataStep {
  /** Runs first in the erase (before steps without it): its rows may be what later steps look for. */
  order?: number;
  export?(db: Db, contact: ContactRef, ctx: StepContext): Promise<unknown>;
  erase(tx: Db, contact: ContactRef, ctx: StepContext): Promise<ErasedPart>;
}

const SRC = new URL('../', import.meta.url);

function merge<T>(modules: { path: string; exports: Record<string, unknown> }[], key: string): Record<string, T> {
  const merged: Record<string, T> = {};
  for (const { path, exports } of modules) {
    for (const [name, value] of Object.entries((exports[key] ?? {}) as Record<string, T>)) {
      if (name in merged) throw new Error(`${key} step ${name} is declared twice (again in src/${basename(dirname(path))})`);
      merged[name] = value;
    }
  }
  return merged;
}

let retention: Promise<Record<string, RetentionStep>> | undefined;
let contactData: Promise<Record<string, ContactDataStep>> | undefined;

/** Every family's retention steps, by folder name then step name; loaded once. */
export function retentionSteps(): Promise<Record<string, RetentionStep>> {
  return retention ??= importFromEachFolder(SRC, `retention${CODE_EXT}`).then((m) => merge<RetentionStep>(m, 'retentionSteps'));
}

/** Every family's contact-data steps, in erase order (`order`, then folder and step name); loaded once. */
export function contactDataSteps(): Promise<Record<string, ContactDataStep>> {
  return contactData ??= importFromEachFolder(SRC, `contact-data${CODE_EXT}`).then((m) => {
    const steps = merge<ContactDataStep>(m, 'contactDataSteps');
    return Object.fromEntries(Object.entries(steps).sort(([, a], [, b]) => (a.order ?? 100) - (b.order ?? 100)));
  });
}
