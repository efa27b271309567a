import type { CrawlCadence } from '../schemas/sites.ts';

/**
 * When the next automatic crawl is due: the last crawl (or now) plus one day, seven days or one
 * calendar month, in UTC. A month from the 31st (or the 29th/30th) clamps to the last day of the
 * next month. Null when the cadence is off.
 */
export function nextCrawlAt(cadence: CrawlCadence, from: Date): Date | null {
  const next = new Date(from.getTime());
  switch (cadence) {
    case 'off': return null;
    case 'daily': next.setUTCDate(next.getUTCDate() + 1); return next;
    case 'weekly': next.setUTCDate(next.getUTCDate() + 7); return next;
    case 'monthly': {
      const day = from.getUTCDate();
      next.setUTCDate(1);
      next.setUTCMonth(next.getUTCMonth() + 1);
      const lastDay = new Date(Date.UTC(next.getUTCFullYear(), next.getUTCMonth() + 1, 0)).getUTCDate();
      next.setUTCDate(Math.min(day, lastDay));
      return next;
    }
  }
}
