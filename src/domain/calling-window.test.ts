import { describe, expect, it } from 'vitest';
import { localClock, secondsUntilOpen, windowError, zoneOfNumber } from './calling-window.ts';

const at = (iso: string) => new Date(iso);

describe('calling windows', () => {
  it('reads the zone from the number\'s country and North American area code, else the fallback', () => {
    expect(zoneOfNumber('+14155550123', 'UTC')).toBe('America/Los_Angeles');
    expect(zoneOfNumber('+12125550123', 'UTC')).toBe('America/New_York');
    expect(zoneOfNumber('+13125550123', 'UTC')).toBe('America/Chicago');
    expect(zoneOfNumber('+33142685300', 'UTC')).toBe('Europe/Paris');
    expect(zoneOfNumber('+442071234567', 'UTC')).toBe('Europe/London');
    // A country of several zones, and a non-geographic North American code: the campaign's zone.
    expect(zoneOfNumber('+61291234567', 'Asia/Tokyo')).toBe('Asia/Tokyo');
    expect(zoneOfNumber('+15005550006', 'Europe/Paris')).toBe('Europe/Paris');
    // A +1 number of another country than the US and Canada: its country's zone, not its area code's.
    expect(zoneOfNumber('+18765550123', 'UTC')).toBe('America/Jamaica');
    expect(zoneOfNumber('+17875550123', 'UTC')).toBe('America/Puerto_Rico');
  });

  it('reads the wall clock of a zone', () => {
    expect(localClock('UTC', at('2026-11-26T19:59:50Z'))).toEqual({ weekday: 'thu', secondOfDay: 19 * 3600 + 59 * 60 + 50 });
    expect(localClock('Europe/Paris', at('2026-11-26T23:30:00Z'))).toEqual({ weekday: 'fri', secondOfDay: 30 * 60 });
  });

  it('is open inside the window, and counts to the next opening outside it', () => {
    const w = { start: '09:00', end: '20:00' };
    expect(secondsUntilOpen(null, 'UTC', at('2026-11-26T03:00:00Z'))).toBe(0);
    expect(secondsUntilOpen(w, 'UTC', at('2026-11-26T09:00:00Z'))).toBe(0);
    expect(secondsUntilOpen(w, 'UTC', at('2026-11-26T19:59:59Z'))).toBe(0);
    // The end is exclusive: at 20:00 the next opening is tomorrow 09:00.
    expect(secondsUntilOpen(w, 'UTC', at('2026-11-26T20:00:00Z'))).toBe(13 * 3600);
    expect(secondsUntilOpen(w, 'UTC', at('2026-11-26T08:30:00Z'))).toBe(1800);
    // In the callee's zone: 10:00 UTC is 02:00 in Los Angeles.
    expect(secondsUntilOpen(w, 'America/Los_Angeles', at('2026-11-26T10:00:00Z'))).toBe(7 * 3600);
  });

  it('counts to an opening across a daylight-saving change in real hours', () => {
    const w = { start: '09:00', end: '17:00' };
    // New York springs forward on Sunday 2026-03-08: Saturday 18:00 EST (23:00 UTC) to Sunday 09:00 EDT (13:00 UTC) is 14 hours.
    expect(secondsUntilOpen(w, 'America/New_York', at('2026-03-07T23:00:00Z'))).toBe(14 * 3600);
    // And falls back on Sunday 2026-11-01: Saturday 18:00 EDT (22:00 UTC) to Sunday 09:00 EST (14:00 UTC) is 16 hours.
    expect(secondsUntilOpen(w, 'America/New_York', at('2026-10-31T22:00:00Z'))).toBe(16 * 3600);
    // An opening inside the skipped hour (02:30 on 2026-03-08) moves forward by that hour: 03:30 EDT (07:30 UTC), from 01:00 EST.
    expect(secondsUntilOpen({ start: '02:30', end: '05:00' }, 'America/New_York', at('2026-03-08T06:00:00Z'))).toBe(5400);
  });

  it('skips the days not listed', () => {
    const weekdays = { start: '09:00', end: '17:00', days: ['mon', 'tue', 'wed', 'thu', 'fri'] as ('mon' | 'tue' | 'wed' | 'thu' | 'fri')[] };
    // Friday 2026-11-27 18:00 UTC: next opening Monday 09:00, 2 days 15 hours later.
    expect(secondsUntilOpen(weekdays, 'UTC', at('2026-11-27T18:00:00Z'))).toBe(2 * 86_400 + 15 * 3600);
    // Saturday morning: Monday too.
    expect(secondsUntilOpen(weekdays, 'UTC', at('2026-11-28T10:00:00Z'))).toBe(86_400 + 23 * 3600);
    expect(secondsUntilOpen({ start: '09:00', end: '17:00', days: ['sun'] }, 'UTC', at('2026-11-29T12:00:00Z'))).toBe(0);
  });

  it('refuses a window that does not end after it starts', () => {
    expect(windowError({ start: '09:00', end: '09:00' })).toMatch(/after/);
    expect(windowError({ start: '20:00', end: '09:00' })).toMatch(/after/);
    expect(windowError({ start: '09:00', end: '09:01' })).toBeNull();
  });
});
