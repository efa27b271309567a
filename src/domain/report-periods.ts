/**
 * The period a report run covers: the day, week (Monday to Sunday) or calendar month that closed
 * last before a moment, in the report's time zone. Boundaries are local midnights turned into
 * UTC instants (so a day across a daylight-saving change is 23 or 25 hours long); the end is
 * exclusive.
 */

export type PeriodFrequency = 'manual' | 'daily' | 'weekly' | 'monthly';
export interface Period { start: Date; end: Date }

/** Whether `tz` is an IANA time zone this runtime knows. */
export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
    });
    formatters.set(tz, f);
  }
  return f;
}

/** The wall-clock date and time of `at` in `tz`. */
export function localParts(at: Date, tz: string): { year: number; month: number; day: number; hour: number; minute: number; second: number } {
  const parts: Record<string, number> = {};
  for (const p of formatter(tz).formatToParts(at)) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return { year: parts.year!, month: parts.month!, day: parts.day!, hour: parts.hour!, minute: parts.minute!, second: parts.second! };
}

/** Minutes `tz` is ahead of UTC at `at`. */
function offsetMinutes(at: Date, tz: string): number {
  const p = localParts(at, tz);
  const asUtc = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return Math.round((asUtc - Math.floor(at.getTime() / 1000) * 1000) / 60_000);
}

/**
 * The instant of local midnight starting `year-month-day` in `tz` (month 1-12; out-of-range days
 * and months roll over as Date.UTC does). A midnight skipped by a daylight-saving change is the
 * first instant of that day.
 */
export function localMidnight(year: number, month: number, day: number, tz: string): Date {
  const guess = Date.UTC(year, month - 1, day);
  let at = guess - offsetMinutes(new Date(guess), tz) * 60_000;
  // The offset at the guess may differ from the one at the answer (a change that day): once more.
  at = guess - offsetMinutes(new Date(at), tz) * 60_000;
  const p = localParts(new Date(at), tz);
  const wanted = new Date(guess);
  if (p.day !== wanted.getUTCDate()) {
    // No midnight that day (skipped): the day begins at the first instant after the jump.
    at += (24 - p.hour) * 3_600_000 - p.minute * 60_000;
  }
  return new Date(at);
}

/** The period just closed at `at` for `frequency` in `tz` (a Schedule's firing; `manual`: the last month). A run asked for without a period takes `periodToDate`. */
export function closedPeriod(frequency: PeriodFrequency, at: Date, tz: string): Period {
  const { year, month, day } = localParts(at, tz);
  if (frequency === 'daily') {
    return { start: localMidnight(year, month, day - 1, tz), end: localMidnight(year, month, day, tz) };
  }
  if (frequency === 'weekly') {
    const weekday = (new Date(Date.UTC(year, month - 1, day)).getUTCDay() + 6) % 7; // Monday 0
    const thisMonday = day - weekday;
    return { start: localMidnight(year, month, thisMonday - 7, tz), end: localMidnight(year, month, thisMonday, tz) };
  }
  return { start: localMidnight(year, month - 1, 1, tz), end: localMidnight(year, month, 1, tz) };
}

/**
 * The period a run asked for now covers when it names none: the current one up to the end of
 * today, in `tz`: today (`daily`), this week from Monday (`weekly`), this calendar month
 * (`monthly` and `manual`). A newcomer's first run then shows the data they just made, not an
 * empty last month (issue 42). Scheduled runs keep `closedPeriod`.
 */
export function periodToDate(frequency: PeriodFrequency, at: Date, tz: string): Period {
  const { year, month, day } = localParts(at, tz);
  const end = localMidnight(year, month, day + 1, tz);
  if (frequency === 'daily') return { start: localMidnight(year, month, day, tz), end };
  if (frequency === 'weekly') {
    const weekday = (new Date(Date.UTC(year, month - 1, day)).getUTCDay() + 6) % 7; // Monday 0
    return { start: localMidnight(year, month, day - weekday, tz), end };
  }
  return { start: localMidnight(year, month, 1, tz), end };
}

/** `YYYY-MM-DD` of `at` in `tz`. */
export function localDay(at: Date, tz: string): string {
  const p = localParts(at, tz);
  return `${p.year}-${String(p.month).padStart(2, '0')}-${String(p.day).padStart(2, '0')}`;
}
