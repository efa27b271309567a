/**
 * Monthly billing periods of a phone number, anchored at its purchase: period n starts n calendar
 * months after it, in UTC, a month from the 29th to the 31st clamping to the last day of a shorter
 * month (the 31st of January, then the 28th or 29th of February, then the 31st of March).
 */

/** `from` plus `months` calendar months, the day clamped to the target month's length. */
export function addMonths(from: Date, months: number): Date {
  const y = from.getUTCFullYear();
  const m = from.getUTCMonth() + months;
  const lastDay = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  return new Date(Date.UTC(y, m, Math.min(from.getUTCDate(), lastDay), from.getUTCHours(), from.getUTCMinutes(), from.getUTCSeconds(), from.getUTCMilliseconds()));
}

/** The period that `asOf` falls in: its index (0 = the purchase's own month) and start. */
export function billingPeriodAt(anchor: Date, asOf: Date): { index: number; start: Date } {
  if (asOf < anchor) return { index: 0, start: anchor };
  let index = Math.max(0, (asOf.getUTCFullYear() - anchor.getUTCFullYear()) * 12 + asOf.getUTCMonth() - anchor.getUTCMonth());
  while (index > 0 && addMonths(anchor, index) > asOf) index -= 1;
  return { index, start: addMonths(anchor, index) };
}

/** The ledger reference of a number's period: one charge per number and period, whoever asks twice. */
export function billingReference(numberId: string, periodStart: Date): string {
  return `number-billing:${numberId}:${periodStart.toISOString().slice(0, 10)}`;
}
