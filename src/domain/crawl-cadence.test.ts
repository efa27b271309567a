import { describe, expect, it } from 'vitest';
import { nextCrawlAt } from './crawl-cadence.ts';

const at = (iso: string) => new Date(iso);

describe('nextCrawlAt', () => {
  it('adds a day, a week or a calendar month, keeping the time of day', () => {
    expect(nextCrawlAt('daily', at('2026-11-22T10:15:30.123Z'))!.toISOString()).toBe('2026-11-23T10:15:30.123Z');
    expect(nextCrawlAt('weekly', at('2026-12-28T23:00:00.000Z'))!.toISOString()).toBe('2027-01-04T23:00:00.000Z');
    expect(nextCrawlAt('monthly', at('2026-11-22T10:00:00.000Z'))!.toISOString()).toBe('2026-12-22T10:00:00.000Z');
    expect(nextCrawlAt('monthly', at('2026-12-15T00:00:00.000Z'))!.toISOString()).toBe('2027-01-15T00:00:00.000Z');
  });

  it('clamps a month from the 31st to the last day of the next month', () => {
    expect(nextCrawlAt('monthly', at('2027-01-31T08:00:00.000Z'))!.toISOString()).toBe('2027-02-28T08:00:00.000Z');
    expect(nextCrawlAt('monthly', at('2028-01-31T08:00:00.000Z'))!.toISOString()).toBe('2028-02-29T08:00:00.000Z');
    expect(nextCrawlAt('monthly', at('2026-03-31T08:00:00.000Z'))!.toISOString()).toBe('2026-04-30T08:00:00.000Z');
    expect(nextCrawlAt('monthly', at('2026-08-31T08:00:00.000Z'))!.toISOString()).toBe('2026-09-30T08:00:00.000Z');
  });

  it('is null when off', () => {
    expect(nextCrawlAt('off', new Date())).toBeNull();
  });
});
