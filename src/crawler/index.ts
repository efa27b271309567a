export { crawl, CRAWL_DEFAULTS, DEFAULT_USER_AGENT, MAX_REDIRECTS, type CrawlOptions, type CrawledPage, type CrawlProgress, type CrawlResult, type DonePage, type PreviousPage } from './crawl.ts';
export { chunkSections, chunkText, type ChunkOptions, type SectionChunk } from './chunk.ts';
export { extractHtml, type ExtractedPage } from './extract.ts';
export { normalizeUrl, siteKey } from './url.ts';
export { ROBOTS_TOKEN } from './robots.ts';
