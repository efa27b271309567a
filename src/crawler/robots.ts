import robotsParserModule from 'robots-parser';

// A CommonJS package typed as `export default`: under NodeNext TypeScript sees the module object,
// while Node's default import of CommonJS is module.exports, the function itself.
const robotsParser = robotsParserModule as unknown as typeof robotsParserModule.default;

/**
 * robots.txt as RFC 9309 has it, for one origin. robots-parser matches the group of our product
 * token (`AgentManagementBot`, case-insensitive) and only falls back to the `*` group when no
 * group names us: the group naming us wins, whatever its order in the file. Several groups for
 * the same agent are merged; the longest matching rule wins, `Allow` on a tie.
 */

/** The product token robots.txt groups name. */
export const ROBOTS_TOKEN = 'AgentManagementBot';

/** RFC 9309 section 2.5: parse at least 500 KiB. */
export const ROBOTS_MAX_BYTES = 512 * 1024;

/** Crawl-delay beyond this is taken as this: a site cannot stall a crawl for minutes a page. */
export const MAX_CRAWL_DELAY_MS = 30_000;

export interface RobotsRules {
  isAllowed(url: string): boolean;
  /** The Crawl-delay of our group (or of `*`), in ms, capped at MAX_CRAWL_DELAY_MS; null when unset. */
  crawlDelayMs: number | null;
  /** `Sitemap:` lines (absolute URLs, any host). */
  sitemaps: string[];
  /** How the rules were obtained, for logs and tests. */
  source: 'file' | 'unavailable' | 'unreachable';
}

/** 4xx (no robots.txt, or none for us to read): RFC 9309 2.3.1.3 allows everything. */
export const ALLOW_ALL: RobotsRules = { isAllowed: () => true, crawlDelayMs: null, sitemaps: [], source: 'unavailable' };

/**
 * 5xx, 429, network errors, too many redirects: RFC 9309 2.3.1.4 says to assume complete
 * disallow (the site may be overloaded, or its rules unreadable for now).
 */
export const DISALLOW_ALL: RobotsRules = { isAllowed: () => false, crawlDelayMs: null, sitemaps: [], source: 'unreachable' };

/** Rules of a fetched robots.txt; `robotsUrl` is the origin's `/robots.txt` (even when it redirected elsewhere). */
export function parseRobots(robotsUrl: string, body: string): RobotsRules {
  const robots = robotsParser(robotsUrl, body);
  const delay = robots.getCrawlDelay(ROBOTS_TOKEN);
  return {
    // undefined means "another origin": those URLs are judged by their own origin's file.
    isAllowed: (url) => robots.isAllowed(url, ROBOTS_TOKEN) !== false,
    crawlDelayMs: typeof delay === 'number' && delay > 0 ? Math.min(delay * 1000, MAX_CRAWL_DELAY_MS) : null,
    sitemaps: robots.getSitemaps(),
    source: 'file',
  };
}

/** Rules for a robots.txt answer that is not a 2xx. */
export function rulesForStatus(status: number): RobotsRules {
  return status >= 400 && status < 500 && status !== 429 ? ALLOW_ALL : DISALLOW_ALL;
}

/** Directive names of X-Robots-Tag that take a value after a colon (so are not a user agent prefix). */
const VALUED_DIRECTIVES = new Set(['unavailable_after', 'max-snippet', 'max-image-preview', 'max-video-preview']);

/**
 * `X-Robots-Tag` response headers: `noindex`, `nofollow`, `none`, either for everyone or
 * prefixed with our token (`AgentManagementBot: noindex`); directives for other agents are ignored.
 */
export function xRobotsTag(values: string | string[] | undefined): { noindex: boolean; nofollow: boolean } {
  let noindex = false;
  let nofollow = false;
  for (const value of Array.isArray(values) ? values : values ? [values] : []) {
    let directives = value;
    const colon = value.indexOf(':');
    if (colon > 0) {
      const agent = value.slice(0, colon).trim().toLowerCase();
      if (!VALUED_DIRECTIVES.has(agent)) {
        if (agent !== ROBOTS_TOKEN.toLowerCase()) continue;
        directives = value.slice(colon + 1);
      }
    }
    for (const token of directives.toLowerCase().split(/[\s,]+/)) {
      if (token === 'noindex' || token === 'none') noindex = true;
      if (token === 'nofollow' || token === 'none') nofollow = true;
    }
  }
  return { noindex, nofollow };
}
