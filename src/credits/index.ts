import type { Db } from '../db/index.ts';
import {
  appendLedgerEntry, creditBalance, ensureStartingCredits, findLedgerEntry, ledgerEntryByReference, listLedger, lockCredits,
} from '../db/credits.ts';
import type { FamilyDeps } from '../deps.ts';
import { AppError, notFound } from '../errors.ts';
import type { Credits, LedgerEntry } from '../schemas/credits.ts';

/**
 * Credits: what pays for phone numbers (at purchase and monthly) and report runs. Every change
 * is a ledger entry written in the caller's transaction; the balance is always read from the
 * ledger. Reports charge through `chargeCredits` too.
 */

export interface CreditsConfig { AMS_STARTING_CREDITS: number }

type Deps = { sql: FamilyDeps['sql']; config: CreditsConfig };

/** The balance and a page of the ledger, newest first; the starting credits are written on the first read. */
export async function readCredits(deps: Deps, orgId: string, page: { limit: number; offset: number }): Promise<Credits> {
  await ensureStartingCredits(deps.sql, orgId, deps.config.AMS_STARTING_CREDITS);
  const [balance, ledger] = await Promise.all([creditBalance(deps.sql, orgId), listLedger(deps.sql, orgId, page)]);
  return { balance_cents: balance, ledger };
}

/** An admin's adjustment: one ledger entry (after the starting credits), in one transaction. */
export async function adjustCredits(deps: Deps, orgId: string, input: { amount_cents: number; reason: string }): Promise<LedgerEntry> {
  return deps.sql.begin(async (tx) => {
    await ensureStartingCredits(tx, orgId, deps.config.AMS_STARTING_CREDITS);
    return (await appendLedgerEntry(tx, orgId, { amountCents: input.amount_cents, reason: input.reason, reference: null }))!;
  });
}

/** One ledger entry of the organization. */
export async function getLedgerEntry(deps: Pick<Deps, 'sql'>, orgId: string, id: string): Promise<LedgerEntry> {
  const entry = await findLedgerEntry(deps.sql, orgId, id);
  if (!entry) throw notFound('ledger entry');
  return entry;
}

export function insufficientCredits(balance: number, needed: number): AppError {
  return new AppError(402, 'insufficient_credits', `this needs ${needed} credits and the balance is ${balance}; add credits with POST /api/v1/rest/credits/adjustments`);
}

/**
 * Spends `amountCents` for `reference` in the caller's transaction. `mustCover`: refused with 402
 * `insufficient_credits` (nothing written) unless the balance covers it (purchases, report runs);
 * otherwise recorded even below zero (monthly renewals). A reference already charged is not
 * charged again: the answer is then the existing entry, with `repeated`.
 */
export async function chargeCredits(tx: Db, config: CreditsConfig, orgId: string, charge: {
  amountCents: number; reason: string; reference: string; mustCover: boolean;
}): Promise<{ entry: LedgerEntry; repeated: boolean }> {
  await lockCredits(tx, orgId);
  await ensureStartingCredits(tx, orgId, config.AMS_STARTING_CREDITS);
  const existing = await ledgerEntryByReference(tx, orgId, charge.reference);
  if (existing) return { entry: existing, repeated: true };
  if (charge.mustCover) {
    const balance = await creditBalance(tx, orgId);
    if (balance <= 0 || balance < charge.amountCents) throw insufficientCredits(balance, charge.amountCents);
  }
  const entry = await appendLedgerEntry(tx, orgId, { amountCents: -charge.amountCents, reason: charge.reason, reference: charge.reference });
  return { entry: entry!, repeated: false };
}
