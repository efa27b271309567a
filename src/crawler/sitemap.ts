import { gunzipSync } from 'node:zlib';
import { createRequire } from 'node:module';
import type * as FastXmlParser from 'fast-xml-parser';

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

/**
 * Made on the first sitemap, from fast-xml-parser's CommonJS build (the same release's code as its ES module): an idle
 * service loaded the parser's 0.4 MB of modules at start (issue 48, bench/README.md).
 */
let parser: FastXmlParser.XMLParser | undefined;
const sitemapParser = (): FastXmlParser.XMLParser => parser ??= new (createRequire(import.meta.url)('fast-xml-parser') as typeof FastXmlParser).XMLParser({
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
    doc = sitemapParser().parse(xml) as typeof doc;
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
