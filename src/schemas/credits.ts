import { Type, type Static } from '@sinclair/typebox';
import { Nullable, PageQueryProps, Timestamp, Uuid } from './common.ts';

export const LedgerEntrySchema = Type.Object({
  id: Uuid,
  amount_cents: Type.Integer({ description: 'Positive adds credits, negative spends them' }),
  reason: Type.String({ description: 'Why: `starting_credits`, `phone_number_purchase`, `phone_number_monthly`, `report_run`, or an adjustment\'s own reason' }),
  reference: Nullable(Type.String({ description: 'What the entry is for, e.g. `phone-number:<id>:purchase` or `number-billing:<id>:2026-12`; at most one entry per reference' })),
  created_at: Timestamp,
}, { $id: 'LedgerEntry', additionalProperties: false });
export type LedgerEntry = Static<typeof LedgerEntrySchema>;

export const CreditsSchema = Type.Object({
  balance_cents: Type.Integer({ description: 'The sum of every ledger entry (it may be below zero after a monthly renewal)' }),
  ledger: Type.Array(LedgerEntrySchema, { description: 'Ledger entries, newest first (`limit` and `offset` page through them)' }),
}, { $id: 'Credits', additionalProperties: false });
export type Credits = Static<typeof CreditsSchema>;

export const CreditsQuery = Type.Object(PageQueryProps, { additionalProperties: false });

export const CreditAdjustmentSchema = Type.Object({
  amount_cents: Type.Integer({ minimum: -100_000_000, maximum: 100_000_000, not: { const: 0 }, 'x-code': 'invalid_amount', description: 'Credits to add (positive) or remove (negative); not zero' }),
  reason: Type.String({ minLength: 1, maxLength: 500, pattern: '\\S', description: 'Why, 1 to 500 characters' }),
}, { $id: 'CreditAdjustment', additionalProperties: false });
