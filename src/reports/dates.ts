import type { ReportData } from '../schemas/reports.ts';

/**
 * Dates as a reader of the document and the presentation reads them ("6 December 2026"), in the
 * report's time zone. The raw artifact keeps ISO 8601.
 */

const dayFormat = (tz: string) => new Intl.DateTimeFormat('en-GB', { timeZone: tz, day: 'numeric', month: 'long', year: 'numeric' });

/** `at` as "6 December 2026" in `tz`. */
export function humanDate(at: Date, tz: string): string {
  return dayFormat(tz).format(at);
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

/** "Generated 6 December 2026 at 05:45 UTC", in the report's time zone. */
export function generatedText(data: Pick<ReportData, 'generated_at' | 'period'>): string {
  const at = new Date(data.generated_at);
  const tz = data.period.timezone;
  const time = new Intl.DateTimeFormat('en-GB', { timeZone: tz, hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZoneName: 'short' }).format(at);
  return `Generated ${humanDate(at, tz)} at ${time}`;
}
