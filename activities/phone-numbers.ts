import { chargeNumberPeriod } from '../src/telephony/billing.ts';
import type { ActivityDeps, ActivityRegistration } from './index.ts';

export function createPhoneNumberActivities(deps: Pick<ActivityDeps, 'sql' | 'config'>) {
  return {
    /** Charges a number's current (or `asOf`) billing period once; idempotent by the period's ledger reference. */
    chargeNumberPeriod: (input: { phoneNumberId: string; asOf?: string | undefined }) => chargeNumberPeriod(deps.sql, deps.config, input),
  };
}
export type PhoneNumberActivities = ReturnType<typeof createPhoneNumberActivities>;

/** Run by the maintenance queue's worker (activities/index.ts finds this module). */
export const registration: ActivityRegistration = { queue: 'maintenance', create: createPhoneNumberActivities };
