import type { DateTime } from 'luxon';
import { luxonLib } from './luxon-lib.ts';

/**
 * The period a report run covers: the day, week (Monday to Sunday) or calendar month that closed
 * last before a moment, in the report's time zone. Boundaries are local midnights turned into
 * UTC instants (so a day across a daylight-saving change is 23 or 25 hours long); the end is
 * exclusive. The zone arithmetic is luxon's.
 */

export type PeriodFrequency = 'manual' | 'daily' | 'weekly' | 'monthly';
export interface Period { start: Date; end: Date }

/** Whether `tz` is an IANA time zone this runtime knows. */
export function isTimeZone(tz: string): boolean {
  return luxonLib().IANAZone.isValidZone(tz);
}

/** `at` on the wall clock of `tz`. */
const inZone = (at: Date, tz: string): DateTime => luxonLib().DateTime.fromJSDate(at, { zone: tz });

/** Local midnight starting the day of `local` (a midnight skipped by a daylight-saving change: the first instant of that day). */
const midnight = (local: DateTime): Date => local.startOf('day').toJSDate();

/**
 * The instant of local midnight starting `year-month-day` in `tz` (month 1-12; out-of-range days
 * and months roll over as Date.UTC does). A midnight skipped by a daylight-saving change is the
 * first instant of that day.
 */
export function localMidnight(year: number, month: number, day: number, tz: string): Date {
  const date = new Date(Date.UTC(year, month - 1, day));
  return midnight(luxonLib().DateTime.fromObject({ year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate(), hour: 12 }, { zone: tz }));
}

/** The period just closed at `at` for `frequency` in `tz` (a Schedule's firing; `manual`: the last month). A run asked for without a period takes `periodToDate`. */
export function closedPeriod(frequency: PeriodFrequency, at: Date, tz: string): Period {
  const now = inZone(at, tz);
  const unit = frequency === 'daily' ? 'day' : frequency === 'weekly' ? 'week' : 'month';
  // luxon's week is the ISO week: Monday to Sunday.
  const end = now.startOf(unit);
  return { start: end.minus({ [`${unit}s`]: 1 }).startOf(unit).toJSDate(), end: end.toJSDate() };
}

/**
 * The period a run asked for now covers when it names none: the current one up to the end of
 * today, in `tz`: today (`daily`), this week from Monday (`weekly`), this calendar month
 * (`monthly` and `manual`). A newcomer's first run then shows the data they just made, not an
 * empty last month (issue 42). Scheduled runs keep `closedPeriod`.
 */
export function periodToDate(frequency: PeriodFrequency, at: Date, tz: string): Period {
  const now = inZone(at, tz);
  const unit = frequency === 'daily' ? 'day' : frequency === 'weekly' ? 'week' : 'month';
  return { start: now.startOf(unit).toJSDate(), end: midnight(now.plus({ days: 1 })) };
}

/** `YYYY-MM-DD` of `at` in `tz`. */
export function localDay(at: Date, tz: string): string {
  return inZone(at, tz).toISODate()!;
}
