import { proxyActivities } from '@temporalio/workflow';
import type { PhoneNumberActivities } from '../activities/phone-numbers.ts';
import { scheduleIds, workflowKind } from '../src/temporal/ids.ts';

const { chargeNumberPeriod } = proxyActivities<PhoneNumberActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', maximumInterval: '10 minutes', maximumAttempts: 50 },
});

/**
 * What a number's billing Schedule (`number-billing:<number id>`) starts each month: the charge of
 * the period it falls in. The ledger keeps one entry per period, so firing twice charges once.
 * `asOf` names another moment than now (a back-filled period).
 */
export async function billPhoneNumber(input: { phoneNumberId: string; asOf?: string }): Promise<{ charged: boolean; reference: string | null }> {
  const result = await chargeNumberPeriod(input);
  return { charged: result.charged, reference: result.reference };
}

/** What a number's billing Schedule starts (`scheduleWorkflow`): each firing is a run of its own, under the Schedule's id. */
export const billPhoneNumberKind = workflowKind(billPhoneNumber, { queue: 'maintenance', reuse: 'allowDuplicate', id: scheduleIds.numberBilling });
