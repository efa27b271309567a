export { crawl, type CrawlOptions, type CrawledPage } from './crawl.ts';
export { chunkSections, chunkText } from './chunk.ts';
export { extractHtml } from './extract.ts';
export { normalizeUrl, pageKey, siteKey } from './url.ts';
