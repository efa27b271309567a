import type { DateTime } from 'luxon';
import { luxonLib } from '../domain/luxon-lib.ts';
import type { ReportData } from '../schemas/reports.ts';

/**
 * Dates as a reader of the document and the presentation reads them ("6 December 2026"), in the
 * report's time zone (luxon, British English). The raw artifact keeps ISO 8601.
 */

const inZone = (at: Date, tz: string): DateTime => luxonLib().DateTime.fromJSDate(at, { zone: tz }).setLocale('en-GB');

/** `at` as "6 December 2026" in `tz`. */
export function humanDate(at: Date, tz: string): string {
  return inZone(at, tz).toFormat('d MMMM yyyy');
}

/**
 * The period as "1 December 2026 to 6 December 2026 (Europe/Paris)": the last day shown is the
 * last one covered (the end is exclusive, so a period ending at midnight shows the day before).
 */
export function periodText(data: Pick<ReportData, 'period'>): string {
  const tz = data.period.timezone;
  const start = new Date(data.period.start);
  const last = new Date(new Date(data.period.end).getTime() - 1);
  const first = humanDate(start, tz);
  const end = humanDate(last, tz);
  return `${first === end ? first : `${first} to ${end}`} (${tz})`;
}

/** "Generated 6 December 2026 at 05:45 UTC", in the report's time zone (the zone's short name, as the locale writes it). */
export function generatedText(data: Pick<ReportData, 'generated_at' | 'period'>): string {
  const at = new Date(data.generated_at);
  const tz = data.period.timezone;
  return `Generated ${humanDate(at, tz)} at ${inZone(at, tz).toFormat('HH:mm ZZZZ')}`;
}
