export { crawl, type CrawlOptions, type CrawledPage } from './crawl.ts';
export { chunkText } from './chunk.ts';
export { extractHtml } from './extract.ts';
export { normalizeUrl, siteKey } from './url.ts';
