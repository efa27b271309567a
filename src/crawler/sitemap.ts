import { gunzipSync } from 'node:zlib';
import { XMLParser } from 'fast-xml-parser';

/**
 * Sitemaps (sitemaps.org protocol): a `<urlset>` lists pages, a `<sitemapindex>` lists more
 * sitemaps. Namespaces are ignored (some sites prefix them), entities decoded; anything that is
 * not one of the two documents yields nothing.
 */

/** Bytes of one sitemap read at most (the protocol allows 50 MB; pages beyond the cap are not crawled anyway). */
export const SITEMAP_MAX_BYTES = 16 * 1024 * 1024;
/** Sitemap documents fetched at most per crawl, indexes included. */
export const SITEMAP_MAX_DOCUMENTS = 20;

export interface SitemapEntries {
  /** Page URLs (`<url><loc>`), as written. */
  urls: string[];
  /** Nested sitemaps (`<sitemapindex><sitemap><loc>`), as written. */
  sitemaps: string[];
}

const parser = new XMLParser({
  ignoreAttributes: true,
  removeNSPrefix: true,
  parseTagValue: false,
  ignoreDeclaration: true,
  isArray: (name) => name === 'url' || name === 'sitemap',
});

function locs(entries: unknown): string[] {
  if (!Array.isArray(entries)) return [];
  const out: string[] = [];
  for (const entry of entries) {
    const loc = (entry as { loc?: unknown } | null)?.loc;
    if (typeof loc === 'string' && loc.trim()) out.push(loc.trim());
  }
  return out;
}

/** Parses a sitemap or sitemap index; malformed XML yields no entries rather than an error. */
export function parseSitemap(xml: string): SitemapEntries {
  let doc: { urlset?: { url?: unknown }; sitemapindex?: { sitemap?: unknown } };
  try {
    doc = parser.parse(xml) as typeof doc;
  } catch {
    return { urls: [], sitemaps: [] };
  }
  return { urls: locs(doc.urlset?.url), sitemaps: locs(doc.sitemapindex?.sitemap) };
}

/** The XML of a sitemap body, gunzipped when it is a `.gz` file (gzip magic bytes), within the size cap. */
export function sitemapText(body: Buffer, maxBytes = SITEMAP_MAX_BYTES): string {
  if (body[0] === 0x1f && body[1] === 0x8b) {
    try {
      return gunzipSync(body, { maxOutputLength: maxBytes }).toString('utf8');
    } catch {
      return '';
    }
  }
  return body.toString('utf8');
}
