import { adjustCredits, getLedgerEntry, readCredits } from '../../src/credits/index.ts';
import { IdParams } from '../../src/schemas/common.ts';
import { CreditAdjustmentSchema, CreditsQuery, CreditsSchema, LedgerEntrySchema } from '../../src/schemas/credits.ts';
import { route, type RouteFamily } from '../routing.ts';

const BASE = '/api/v1/rest';

export const creditsFamily: RouteFamily = {
  base: BASE,
  order: 180,
  tag: 'Credits',
  description: 'The organization\'s credits: an append-only ledger whose sum is the balance. Phone numbers cost their `monthly_cost_cents` at purchase and each month after; report runs cost `REPORT_RUN_COST_CENTS`.',
  routes: [
    route({
      method: 'GET', path: '/credits', operationId: 'get_credits', summary: 'The credit balance and the ledger, newest first',
      permissions: ['org.read'], query: CreditsQuery,
      responses: { 200: { description: 'Balance and ledger entries', schema: CreditsSchema } },
      async handler({ query, principal, deps }) {
        return { status: 200, body: await readCredits(deps, principal.orgId, query) };
      },
    }),
    route({
      method: 'POST', path: '/credits/adjustments', operationId: 'adjust_credits', summary: 'Add (positive) or remove (negative) credits',
      permissions: ['org.write'], body: CreditAdjustmentSchema,
      responses: { 201: { description: 'The new ledger entry', schema: LedgerEntrySchema } },
      async handler({ body, principal, deps }) {
        const entry = await adjustCredits(deps, principal.orgId, body);
        return { status: 201, body: entry, headers: { Location: `${BASE}/credits/adjustments/${entry.id}` } };
      },
    }),
    route({
      method: 'GET', path: '/credits/adjustments/:id', operationId: 'get_credit_entry', summary: 'One ledger entry',
      permissions: ['org.read'], params: IdParams,
      responses: { 200: { description: 'The entry', schema: LedgerEntrySchema } },
      async handler({ params, principal, deps }) {
        return { status: 200, body: await getLedgerEntry(deps, principal.orgId, params.id) };
      },
    }),
  ],
};
