import type { Db } from './index.ts';
import { newId } from '../ids.ts';
import type { LedgerEntry } from '../schemas/credits.ts';

/**
 * The credits ledger: append-only (a trigger refuses updates), the balance is the sum of its
 * entries. Charges take the organization's row lock first, so two purchases cannot both spend
 * the last credits.
 */

interface LedgerRow { id: string; amount_cents: number; reason: string; reference: string | null; created_at: Date }
const COLUMNS = ['id', 'amount_cents', 'reason', 'reference', 'created_at'];

const toEntry = (r: LedgerRow): LedgerEntry => ({
  id: r.id, amount_cents: Number(r.amount_cents), reason: r.reason, reference: r.reference, created_at: r.created_at.toISOString(),
});

export const STARTING_CREDITS_REFERENCE = 'starting-credits';

/** Gives an organization its starting credits, once (the first time its ledger is read or charged). */
export async function ensureStartingCredits(db: Db, orgId: string, amountCents: number): Promise<void> {
  await db`insert into credit_ledger (id, org_id, amount_cents, reason, reference)
    values (${newId()}, ${orgId}, ${amountCents}, 'starting_credits', ${STARTING_CREDITS_REFERENCE})
    on conflict (org_id, reference) where reference is not null do nothing`;
}

export async function creditBalance(db: Db, orgId: string): Promise<number> {
  const [row] = await db<{ balance: number }[]>`select coalesce(sum(amount_cents), 0)::bigint as balance from credit_ledger where org_id = ${orgId}`;
  return Number(row?.balance ?? 0);
}

/** Holds the organization's credits until the transaction ends (charges are decided one at a time). */
export async function lockCredits(db: Db, orgId: string): Promise<void> {
  await db`select id from organizations where id = ${orgId} for update`;
}

export async function listLedger(db: Db, orgId: string, q: { limit: number; offset: number }): Promise<LedgerEntry[]> {
  const rows = await db<LedgerRow[]>`select ${db(COLUMNS)} from credit_ledger where org_id = ${orgId}
    order by created_at desc, id desc limit ${q.limit} offset ${q.offset}`;
  return rows.map(toEntry);
}

export async function findLedgerEntry(db: Db, orgId: string, id: string): Promise<LedgerEntry | null> {
  const [row] = await db<LedgerRow[]>`select ${db(COLUMNS)} from credit_ledger where org_id = ${orgId} and id = ${id}`;
  return row ? toEntry(row) : null;
}

/** Appends an entry; null when one with this reference already exists (a repeated charge). */
export async function appendLedgerEntry(db: Db, orgId: string, entry: { amountCents: number; reason: string; reference: string | null }): Promise<LedgerEntry | null> {
  const [row] = await db<LedgerRow[]>`insert into credit_ledger (id, org_id, amount_cents, reason, reference)
    values (${newId()}, ${orgId}, ${entry.amountCents}, ${entry.reason}, ${entry.reference})
    on conflict (org_id, reference) where reference is not null do nothing
    returning ${db(COLUMNS)}`;
  return row ? toEntry(row) : null;
}

export async function ledgerEntryByReference(db: Db, orgId: string, reference: string): Promise<LedgerEntry | null> {
  const [row] = await db<LedgerRow[]>`select ${db(COLUMNS)} from credit_ledger where org_id = ${orgId} and reference = ${reference}`;
  return row ? toEntry(row) : null;
}
