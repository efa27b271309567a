export { crawl, isTransientFailure, type CrawlOptions, type CrawledPage, type CrawlResult } from './crawl.ts';
export { chunkSections, chunkText } from './chunk.ts';
export { extractHtml } from './extract.ts';
export { normalizeUrl, pageKey, siteKey } from './url.ts';
