import { ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import type { Config } from '../config.ts';
import type { Db, Sql } from '../db/index.ts';
import { findPhoneNumberById, type PhoneNumberRecord } from '../db/phone-numbers.ts';
import { chargeCredits } from '../credits/index.ts';
import { billingPeriodAt, billingReference } from '../domain/billing-periods.ts';
import { scheduleIds } from '../temporal/ids.ts';
import { deleteSchedule, scheduleWorkflow } from '../temporal/start.ts';
import type { Logger } from 'pino';
import { billPhoneNumberKind } from '../../workflows/number-billing.ts';

/**
 * Monthly billing of a purchased number: one Temporal Schedule per number,
 * `number-billing:<number id>`, firing on the purchase's day of the month. Each run charges the
 * period it falls in, under the period's ledger reference, so a Schedule that fires twice (or a
 * retried activity) charges once. The purchase itself paid period 0.
 */

/** The calendar of a number's Schedule: its anniversary day each month, a minute after the purchase's time of day. */
function monthlyCalendar(anchor: Date) {
  const at = new Date(anchor.getTime() + 60_000);
  const day = at.getUTCDate();
  // Months shorter than the anniversary day bill on their last day: fire on each of the last days,
  // the charge being once per period whichever fires.
  return {
    dayOfMonth: day > 28 ? [{ start: 28, end: 31 }] : day,
    hour: at.getUTCHours(), minute: at.getUTCMinutes(),
    comment: `monthly on day ${anchor.getUTCDate()} (clamped to the month's last day)`,
  };
}

/** Creates the number's Schedule; Temporal unreachable is a 503 the caller's transaction rolls back with. */
export async function startNumberBilling(deps: { temporal: Client; config: Config; log: Logger }, number: PhoneNumberRecord): Promise<void> {
  await scheduleWorkflow(deps, billPhoneNumberKind, billPhoneNumberKind.id(number.id), [{ phoneNumberId: number.id }],
    { orgId: number.orgId, agentId: number.widget_id, summary: `Monthly billing of ${number.phone_number} (${number.monthly_cost_cents} credits)` },
    { spec: { calendars: [monthlyCalendar(number.createdAt)] }, overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '7 days' });
}

export async function stopNumberBilling(temporal: Client, numberId: string): Promise<void> {
  await deleteSchedule(temporal, scheduleIds.numberBilling(numberId));
}

/** The ledger reference of the period a number was bought in (charged by the purchase). */
export const purchaseReference = (number: PhoneNumberRecord) => billingReference(number.id, number.createdAt);

export interface PeriodCharge { charged: boolean; reference: string | null; reason?: string }

/**
 * Charges the number's period containing `asOf` (default now), unless already charged. A released
 * or vanished number is not charged (its Schedule may fire once more before it is deleted).
 */
export async function chargeNumberPeriod(sql: Sql, config: Pick<Config, 'AMS_STARTING_CREDITS'>, input: { phoneNumberId: string; asOf?: string | undefined }): Promise<PeriodCharge> {
  return sql.begin((tx) => chargeInTransaction(tx, config, input));
}

async function chargeInTransaction(tx: Db, config: Pick<Config, 'AMS_STARTING_CREDITS'>, input: { phoneNumberId: string; asOf?: string | undefined }): Promise<PeriodCharge> {
  const number = await findPhoneNumberById(tx, input.phoneNumberId);
  if (!number) return { charged: false, reference: null, reason: 'number_gone' };
  if (number.status !== 'active') return { charged: false, reference: null, reason: 'released' };
  if (number.source !== 'purchased' || number.monthly_cost_cents === 0) return { charged: false, reference: null, reason: 'not_billed' };
  const period = billingPeriodAt(number.createdAt, input.asOf ? new Date(input.asOf) : new Date());
  const reference = billingReference(number.id, period.start);
  const result = await chargeCredits(tx, config, number.orgId, {
    amountCents: number.monthly_cost_cents, reason: 'phone_number_monthly', reference, mustCover: false,
  });
  return { charged: !result.repeated, reference };
}
