import { describe, expect, it } from 'vitest';
import { closedPeriod, isTimeZone, localMidnight, periodToDate } from '../src/domain/report-periods.ts';

const iso = (p: { start: Date; end: Date }) => [p.start.toISOString(), p.end.toISOString()];

describe('report periods (pure)', () => {
  it('daily: yesterday, in UTC and in a zone ahead of and behind UTC', () => {
    expect(iso(closedPeriod('daily', new Date('2026-03-10T06:00:00Z'), 'UTC'))).toEqual(['2026-03-09T00:00:00.000Z', '2026-03-10T00:00:00.000Z']);
    // 06:00 in Tokyo on the 10th is 21:00 UTC on the 9th: yesterday there is the 9th, Tokyo time.
    expect(iso(closedPeriod('daily', new Date('2026-03-09T21:00:00Z'), 'Asia/Tokyo'))).toEqual(['2026-03-08T15:00:00.000Z', '2026-03-09T15:00:00.000Z']);
    expect(iso(closedPeriod('daily', new Date('2026-03-10T14:00:00Z'), 'America/Los_Angeles'))).toEqual(['2026-03-09T07:00:00.000Z', '2026-03-10T07:00:00.000Z']);
  });

  it('daily across daylight-saving changes: a 23-hour and a 25-hour day', () => {
    // Europe/Paris springs forward on 2026-03-29 and falls back on 2026-10-25.
    const spring = closedPeriod('daily', new Date('2026-03-30T05:00:00Z'), 'Europe/Paris');
    expect(iso(spring)).toEqual(['2026-03-28T23:00:00.000Z', '2026-03-29T22:00:00.000Z']);
    expect(spring.end.getTime() - spring.start.getTime()).toBe(23 * 3_600_000);
    const autumn = closedPeriod('daily', new Date('2026-10-26T05:00:00Z'), 'Europe/Paris');
    expect(iso(autumn)).toEqual(['2026-10-24T22:00:00.000Z', '2026-10-25T23:00:00.000Z']);
    expect(autumn.end.getTime() - autumn.start.getTime()).toBe(25 * 3_600_000);
  });

  it('weekly: last Monday to Sunday, whichever day it fires', () => {
    // 2026-11-30 is a Monday.
    expect(iso(closedPeriod('weekly', new Date('2026-11-30T06:00:00Z'), 'UTC'))).toEqual(['2026-11-23T00:00:00.000Z', '2026-11-30T00:00:00.000Z']);
    expect(iso(closedPeriod('weekly', new Date('2026-12-06T23:00:00Z'), 'UTC'))).toEqual(['2026-11-23T00:00:00.000Z', '2026-11-30T00:00:00.000Z']);
    // Sunday 23:30 UTC is already Monday in Tokyo: the week just closed there is the one ending that Monday.
    expect(iso(closedPeriod('weekly', new Date('2026-11-29T23:30:00Z'), 'Asia/Tokyo'))).toEqual(['2026-11-22T15:00:00.000Z', '2026-11-29T15:00:00.000Z']);
    // Across a year end.
    expect(iso(closedPeriod('weekly', new Date('2027-01-04T06:00:00Z'), 'UTC'))).toEqual(['2026-12-28T00:00:00.000Z', '2027-01-04T00:00:00.000Z']);
  });

  it('monthly: the calendar month just closed, month ends and leap years included', () => {
    expect(iso(closedPeriod('monthly', new Date('2026-03-01T06:00:00Z'), 'UTC'))).toEqual(['2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z']);
    expect(iso(closedPeriod('monthly', new Date('2028-03-31T23:59:00Z'), 'UTC'))).toEqual(['2028-02-01T00:00:00.000Z', '2028-03-01T00:00:00.000Z']);
    expect(iso(closedPeriod('monthly', new Date('2027-01-01T06:00:00Z'), 'UTC'))).toEqual(['2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z']);
    // 23:30 UTC on 31 January is already 1 February in Paris: January closed there.
    expect(iso(closedPeriod('monthly', new Date('2027-01-31T23:30:00Z'), 'Europe/Paris'))).toEqual(['2026-12-31T23:00:00.000Z', '2027-01-31T23:00:00.000Z']);
    // A month with a daylight-saving change: October in New York starts at UTC-4 and ends at UTC-5.
    expect(iso(closedPeriod('monthly', new Date('2026-11-01T12:00:00Z'), 'America/New_York'))).toEqual(['2026-10-01T04:00:00.000Z', '2026-11-01T04:00:00.000Z']);
    expect(iso(closedPeriod('manual', new Date('2026-11-26T12:00:00Z'), 'UTC'))).toEqual(['2026-10-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z']);
  });

  it('to date (a run asked for without a period, issue 42): the current day, week or month, up to the end of today', () => {
    // 2026-12-06 is a Sunday.
    const now = new Date('2026-12-06T09:40:00Z');
    expect(iso(periodToDate('manual', now, 'UTC'))).toEqual(['2026-12-01T00:00:00.000Z', '2026-12-07T00:00:00.000Z']);
    expect(iso(periodToDate('monthly', now, 'UTC'))).toEqual(['2026-12-01T00:00:00.000Z', '2026-12-07T00:00:00.000Z']);
    expect(iso(periodToDate('weekly', now, 'UTC'))).toEqual(['2026-11-30T00:00:00.000Z', '2026-12-07T00:00:00.000Z']);
    expect(iso(periodToDate('daily', now, 'UTC'))).toEqual(['2026-12-06T00:00:00.000Z', '2026-12-07T00:00:00.000Z']);
    // 23:30 UTC on 31 December is already 1 January in Paris: January so far there.
    expect(iso(periodToDate('manual', new Date('2026-12-31T23:30:00Z'), 'Europe/Paris'))).toEqual(['2026-12-31T23:00:00.000Z', '2027-01-01T23:00:00.000Z']);
  });

  it('a midnight skipped by a daylight-saving change starts the day at the first instant after it', () => {
    // America/Santiago springs forward at 00:00 on 2026-09-06 (to 01:00).
    const start = localMidnight(2026, 9, 6, 'America/Santiago');
    expect(start.toISOString()).toBe('2026-09-06T04:00:00.000Z');
  });

  it('knows IANA zones', () => {
    expect(isTimeZone('Europe/Paris')).toBe(true);
    expect(isTimeZone('UTC')).toBe(true);
    expect(isTimeZone('Mars/Olympus')).toBe(false);
    expect(isTimeZone('')).toBe(false);
  });
});
