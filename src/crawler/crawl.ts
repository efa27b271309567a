import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Dispatcher } from 'undici';
import { createOutboundAgent, OutboundTargetError, resolveOutboundHost } from '../net/outbound.ts';
import type { HostExceptions } from '../domain/network.ts';
import { decodeBody, fetchOnce, header, type FetchedResponse } from './fetch.ts';
import { extractHtml, extractPlainText, type ExtractedPage } from './extract.ts';
import { DISALLOW_ALL, parseRobots, ROBOTS_MAX_BYTES, rulesForStatus, ALLOW_ALL, xRobotsTag, type RobotsRules } from './robots.ts';
import { parseSitemap, SITEMAP_MAX_BYTES, SITEMAP_MAX_DOCUMENTS, sitemapText } from './sitemap.ts';
import { hasBinaryExtension, normalizeUrl, pageKey, siteKey } from './url.ts';

/**
 * The crawl of one website: breadth-first from a start URL (plus its sitemaps) over same-site
 * links, politely (robots.txt, a per-host delay), within caps, with every connection checked
 * against the outbound policy. A library: the caller persists pages (onPage) and provides
 * resumption (`done`) and conditional re-crawls (`previous`).
 */

export const DEFAULT_USER_AGENT = 'AgentManagementBot/1.0 (+https://docs.agents.dev/crawler)';

export const CRAWL_DEFAULTS = {
  maxPages: 500,
  maxDepth: 10,
  maxPageBytes: 2 * 1024 * 1024,
  maxDurationMs: 15 * 60_000,
  delayMs: 250,
  concurrency: 8,
  requestTimeoutMs: 20_000,
} as const;

/** Redirect hops followed at most (RFC 9309 asks at least five for robots.txt; pages get the same). */
export const MAX_REDIRECTS = 5;
/** URLs waiting in the frontier at most (memory bound); links found past it are dropped. */
export const MAX_QUEUED = 100_000;

export interface DonePage { url: string; depth: number; links: string[] }
export interface PreviousPage { etag: string | null; lastModified: string | null; links?: string[] }

export interface CrawlOptions {
  startUrl: string;
  /** Pages in the whole crawl, `done` included (default 500, config CRAWL_MAX_PAGES). */
  maxPages?: number;
  /** Links followed from the start page (0: the start page alone; sitemap URLs count as depth 1). Default 10. */
  maxDepth?: number;
  /** Bytes of a (decoded) page body read at most; longer pages are cut off there (default 2 MiB). */
  maxPageBytes?: number;
  /** Overall time cap (default 15 minutes). */
  maxDurationMs?: number;
  /** CRAWL_DELAY_MS: least gap between two request starts to one host (a robots.txt Crawl-delay may raise it). Default 250. */
  delayMs?: number;
  /** Requests in flight at most (default 8). */
  concurrency?: number;
  /** ALLOW_PRIVATE_NETWORK_TARGETS. */
  allowPrivate: boolean;
  /** OUTBOUND_ALLOWED_HOSTS: hosts and ranges reachable although not public. */
  exceptions?: HostExceptions | undefined;
  userAgent?: string;
  /** Time allowed for response headers, and between two body chunks (default 20 s). */
  requestTimeoutMs?: number;
  /** Read sitemaps (robots.txt `Sitemap:` lines and /sitemap.xml) to seed the frontier (default true). */
  sitemaps?: boolean;
  /** Resume: pages already fetched in this crawl: not fetched again, their links seed the frontier, they count toward maxPages. */
  done?: Iterable<DonePage>;
  /**
   * Re-crawl: validators of the previous crawl's pages by URL, for conditional requests. With
   * `links`, a page answered 304 still leads to the pages it linked.
   */
  previous?: Map<string, PreviousPage>;
  signal?: AbortSignal;
}

export interface CrawledPage {
  /** Normalized, after redirects and `<link rel="canonical">`. */
  url: string;
  depth: number;
  /** `unchanged`: the server answered 304 to a conditional request (reuse the previous page). */
  status: 'fetched' | 'unchanged';
  statusCode: number;
  title: string | null;
  /** Main content text (empty when unchanged). */
  text: string;
  /** Normalized same-site links (for resume); the previous ones when unchanged. */
  links: string[];
  etag: string | null;
  lastModified: string | null;
  /** sha256 (hex) of text; '' when unchanged. */
  contentHash: string;
  fetchedAt: Date;
  /** The body was longer than maxPageBytes and only its beginning was read. */
  truncated: boolean;
}

export interface CrawlProgress { fetched: number; queued: number; failed: number }

export interface CrawlResult {
  /** Pages handed to onPage, unchanged ones included. */
  pages: number;
  unchanged: number;
  /** Requests that failed: network errors, timeouts, HTTP errors, redirect loops. */
  failed: number;
  /** URLs not turned into pages on purpose: robots.txt, off-site redirects, duplicates, non-HTML, noindex. */
  skipped: number;
  stoppedBy: 'done' | 'max_pages' | 'max_duration' | 'aborted';
  /** How the start origin's robots.txt was obtained: `unreachable` means it forbade the whole crawl. */
  robots: RobotsRules['source'];
  /** The first failures, for the site's error message and logs. */
  failures: { url: string; reason: string }[];
  /** The first skips with their reason (`robots`, `offsite_redirect`, `duplicate`, `not_html`, `noindex`), e.g. why a start page gave nothing. */
  skips: { url: string; reason: SkipReason }[];
}

export type SkipReason = 'robots' | 'offsite_redirect' | 'duplicate' | 'not_html' | 'noindex';

type OnPage = (page: CrawledPage) => Promise<void>;
type Settings = Required<Omit<CrawlOptions, 'done' | 'previous' | 'signal' | 'userAgent' | 'exceptions'>> & Pick<CrawlOptions, 'done' | 'previous' | 'signal' | 'exceptions'> & { userAgent: string };

interface QueueItem { url: string; depth: number }
type Outcome =
  | { kind: 'response'; url: string; res: FetchedResponse }
  | { kind: 'skipped'; reason: SkipReason }
  | { kind: 'failed'; reason: string };

const MAX_FAILURES_KEPT = 20;
/** A whole exchange (headers and body) may take this many request timeouts. */
const REQUEST_DEADLINE_FACTOR = 3;
const PARSABLE = new Set(['text/html', 'application/xhtml+xml', 'text/plain', '']);
const isRedirect = (status: number) => status === 301 || status === 302 || status === 303 || status === 307 || status === 308;

/** Thrown out of onPage: ends the crawl and is rethrown to the caller. */
class CallbackError extends Error {
  constructor(readonly inner: unknown) {
    super('onPage failed');
  }
}

/**
 * Whether a page's failure reason (CrawlResult.failures) may go away if asked again later: a timeout,
 * a dropped or refused connection, a 5xx, 408 or 429. A 404 or 410, a refused target, a redirect
 * loop or an error of ours will answer the same (issue 40, I13): a crawl that got no page for one of
 * those is not retried.
 */
export function isTransientFailure(reason: string): boolean {
  if (reason === 'timeout' || reason.startsWith('network_error')) return true;
  const status = /^http_(\d{3})$/.exec(reason)?.[1];
  return status !== undefined && (status.startsWith('5') || status === '408' || status === '429');
}

function reasonOf(err: unknown): string {
  if (err instanceof OutboundTargetError) return err.code;
  if ((err as Error | null)?.name === 'TimeoutError') return 'timeout';
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') return 'timeout';
  // Node and undici network errors carry a code (ECONNREFUSED, UND_ERR_SOCKET...); anything else is ours.
  return typeof code === 'string' ? `network_error: ${code}` : `error: ${(err as Error)?.message ?? String(err)}`;
}

class CrawlRun {
  private readonly queue: QueueItem[] = [];
  private head = 0;
  /** `pageKey`s of the pages fetched or queued: one request per page, whatever its spelling. */
  private readonly seen = new Set<string>();
  private readonly robots = new Map<string, Promise<RobotsRules>>();
  private readonly hostDelay = new Map<string, number>();
  private readonly nextStart = new Map<string, number>();
  private readonly controller = new AbortController();
  private readonly tasks: Promise<void>[] = [];
  private waiters: (() => void)[] = [];
  private inFlight = 0;
  private seeding = 0;
  private budget = 0;
  private stop: 'max_duration' | 'aborted' | 'callback' | null = null;
  private callbackError: unknown = null;
  private readonly result: CrawlResult = { pages: 0, unchanged: 0, failed: 0, skipped: 0, stoppedBy: 'done', robots: 'file', failures: [], skips: [] };
  private readonly site: string;

  constructor(
    private readonly o: Settings,
    private readonly start: URL,
    private readonly dispatcher: Dispatcher,
    private readonly onPage: OnPage,
    private readonly onProgress?: (p: CrawlProgress) => void,
  ) {
    this.site = siteKey(start);
  }

  async run(): Promise<CrawlResult> {
    const timer = setTimeout(() => this.halt('max_duration'), this.o.maxDurationMs);
    const onAbort = () => this.halt('aborted');
    this.o.signal?.addEventListener('abort', onAbort);
    if (this.o.signal?.aborted) this.halt('aborted');
    try {
      this.seed();
      this.track((async () => {
        this.result.robots = (await this.rulesFor(this.start)).source;
        if (this.o.sitemaps && this.o.maxDepth >= 1) await this.loadSitemaps();
      })());
      await Promise.all(Array.from({ length: this.o.concurrency }, () => this.worker()));
      this.controller.abort(); // a sitemap still loading when the budget ran out
      await Promise.allSettled(this.tasks);
    } finally {
      clearTimeout(timer);
      this.o.signal?.removeEventListener('abort', onAbort);
    }
    if (this.stop === 'callback') throw this.callbackError;
    this.result.stoppedBy = this.stop ?? (this.result.pages >= this.budget && this.head < this.queue.length ? 'max_pages' : 'done');
    return this.result;
  }

  private halt(reason: NonNullable<CrawlRun['stop']>): void {
    this.stop ??= reason;
    this.controller.abort();
    this.notify();
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  private changed(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Runs a background task that may add to the frontier: workers wait for it before finishing. */
  private track(task: Promise<void>): void {
    this.seeding++;
    this.tasks.push(task.catch(() => undefined).finally(() => {
      this.seeding--;
      this.notify();
    }));
  }

  private seed(): void {
    const done = [...this.o.done ?? []];
    for (const page of done) {
      const url = normalizeUrl(page.url);
      if (url) this.seen.add(pageKey(url));
    }
    this.budget = Math.max(0, this.o.maxPages - this.seen.size);
    for (const page of done) for (const link of page.links) this.enqueue(normalizeUrl(link), page.depth + 1);
    this.enqueue(this.start.href, 0);
  }

  /** Adds a normalized URL to the frontier unless seen, off-site, a file, too deep, or the frontier is full. */
  private enqueue(url: string | null, depth: number, checked = false): void {
    if (!url || depth > this.o.maxDepth || this.seen.has(pageKey(url)) || this.queue.length - this.head >= MAX_QUEUED) return;
    if (!checked && !this.inScope(new URL(url))) return;
    this.seen.add(pageKey(url));
    this.queue.push({ url, depth });
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    this.notify();
  }

  /** Same site, and not a file type that is never a page. */
  private inScope(url: URL): boolean {
    return siteKey(url) === this.site && !hasBinaryExtension(url);
  }

  private take(): QueueItem | null {
    if (this.result.pages + this.inFlight >= this.budget || this.head >= this.queue.length) return null;
    return this.queue[this.head++]!;
  }

  private async worker(): Promise<void> {
    while (!this.stop && this.result.pages < this.budget) {
      const item = this.take();
      if (!item) {
        if (this.inFlight === 0 && this.seeding === 0) return;
        await this.changed();
        continue;
      }
      this.inFlight++;
      try {
        await this.process(item);
      } catch (err) {
        if (err instanceof CallbackError) {
          this.callbackError = err.inner;
          this.halt('callback');
        } else if (!this.stop) {
          this.fail(item.url, reasonOf(err));
        }
      } finally {
        this.inFlight--;
        this.notify();
      }
    }
  }

  private skip(url: string, reason: SkipReason): void {
    this.result.skipped++;
    if (this.result.skips.length < MAX_FAILURES_KEPT) this.result.skips.push({ url, reason });
  }

  private fail(url: string, reason: string): void {
    this.result.failed++;
    if (this.result.failures.length < MAX_FAILURES_KEPT) this.result.failures.push({ url, reason });
    this.progress();
  }

  private progress(): void {
    try {
      this.onProgress?.({ fetched: this.result.pages, queued: this.queue.length - this.head, failed: this.result.failed });
    } catch {
      // Progress reports are advisory: a failing listener must not fail a page.
    }
  }

  // --- politeness ---------------------------------------------------------------------------

  private rulesFor(url: URL): Promise<RobotsRules> {
    let rules = this.robots.get(url.origin);
    if (!rules) {
      rules = this.loadRobots(url.origin).then((r) => {
        if (r.crawlDelayMs !== null) this.hostDelay.set(new URL(url.origin).hostname, Math.max(this.o.delayMs, r.crawlDelayMs));
        return r;
      });
      this.robots.set(url.origin, rules);
    }
    return rules;
  }

  /** robots.txt of an origin (RFC 9309 2.3.1: redirects followed, 4xx allow all, 5xx and errors disallow all). */
  private async loadRobots(origin: string): Promise<RobotsRules> {
    const robotsUrl = `${origin}/robots.txt`;
    try {
      const got = await this.get(robotsUrl, { maxBytes: ROBOTS_MAX_BYTES, accept: 'text/plain,*/*;q=0.1', sameSiteOnly: false });
      if (!got) return ALLOW_ALL; // too many redirects: "unavailable"
      if (got.res.statusCode >= 200 && got.res.statusCode < 300) return parseRobots(robotsUrl, got.res.body?.toString('utf8') ?? '');
      return rulesForStatus(got.res.statusCode);
    } catch {
      return DISALLOW_ALL;
    }
  }

  private async allowed(url: URL): Promise<boolean> {
    return (await this.rulesFor(url)).isAllowed(url.href);
  }

  /** Waits until a request to `host` may start: at least the host's delay after the previous start. */
  private async waitTurn(host: string): Promise<void> {
    const delay = this.hostDelay.get(host) ?? this.o.delayMs;
    if (delay <= 0) return;
    const at = Math.max(Date.now(), this.nextStart.get(host) ?? 0);
    this.nextStart.set(host, at + delay);
    // Timers may fire a little early: wait again until the slot has really come.
    for (let now = Date.now(); now < at; now = Date.now()) await sleep(at - now, undefined, { signal: this.controller.signal });
  }

  // --- fetching -----------------------------------------------------------------------------

  private async request(url: string, extra: { maxBytes: number; accept?: string; headers?: Record<string, string>; want: (status: number, type: string) => boolean }): Promise<FetchedResponse> {
    // The request timeouts bound each wait; this deadline bounds a server that drips its body forever.
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new DOMException('request deadline passed', 'TimeoutError')), this.o.requestTimeoutMs * REQUEST_DEADLINE_FACTOR);
    const stop = () => deadline.abort(this.controller.signal.reason);
    this.controller.signal.addEventListener('abort', stop, { once: true });
    if (this.controller.signal.aborted) stop();
    try {
      return await fetchOnce(url, {
        dispatcher: this.dispatcher,
        userAgent: this.o.userAgent,
        signal: deadline.signal,
        timeoutMs: this.o.requestTimeoutMs,
        maxBytes: extra.maxBytes,
        wantBody: extra.want,
        ...(extra.accept ? { accept: extra.accept } : {}),
        ...(extra.headers ? { headers: extra.headers } : {}),
      });
    } finally {
      clearTimeout(timer);
      this.controller.signal.removeEventListener('abort', stop);
    }
  }

  /** A GET of robots.txt or a sitemap, following redirects; null after too many (or a bad Location). */
  private async get(url: string, opts: { maxBytes: number; accept: string; sameSiteOnly: boolean }): Promise<{ url: string; res: FetchedResponse } | null> {
    let current = url;
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      await this.waitTurn(new URL(current).hostname);
      const res = await this.request(current, { maxBytes: opts.maxBytes, accept: opts.accept, want: (s) => s >= 200 && s < 300 });
      if (!isRedirect(res.statusCode)) return { url: current, res };
      const next = normalizeUrl(header(res.headers, 'location') ?? '', current);
      if (!next || (opts.sameSiteOnly && siteKey(new URL(next)) !== this.site)) return null;
      current = next;
    }
    return null;
  }

  /** Sitemaps named in robots.txt and /sitemap.xml, sitemap indexes followed: their same-site URLs join the frontier at depth 1. */
  private async loadSitemaps(): Promise<void> {
    const rules = await this.rulesFor(this.start);
    const pending = [...rules.sitemaps, `${this.start.origin}/sitemap.xml`];
    const fetched = new Set<string>();
    while (pending.length && fetched.size < SITEMAP_MAX_DOCUMENTS && !this.stop) {
      const url = normalizeUrl(pending.shift()!);
      if (!url || fetched.has(url) || siteKey(new URL(url)) !== this.site || !(await this.allowed(new URL(url)))) continue;
      fetched.add(url);
      const got = await this.get(url, { maxBytes: SITEMAP_MAX_BYTES, accept: 'application/xml,text/xml;q=0.9,*/*;q=0.1', sameSiteOnly: true }).catch(() => null);
      if (!got?.res.body) continue;
      const entries = parseSitemap(sitemapText(got.res.body));
      pending.push(...entries.sitemaps);
      for (const loc of entries.urls) this.enqueue(normalizeUrl(loc), 1);
    }
  }

  private validators(url: string): Record<string, string> | undefined {
    const previous = this.o.previous?.get(url);
    if (!previous) return undefined;
    const headers: Record<string, string> = {};
    if (previous.etag) headers['if-none-match'] = previous.etag;
    if (previous.lastModified) headers['if-modified-since'] = previous.lastModified;
    return headers;
  }

  /** GETs a page, following in-site redirects that robots.txt allows, each hop its own connection check. */
  private async fetchPage(url: string): Promise<Outcome> {
    let current = url;
    for (let hop = 0; ; hop++) {
      const parsed = new URL(current);
      if (!(await this.allowed(parsed))) return { kind: 'skipped', reason: 'robots' };
      await this.waitTurn(parsed.hostname);
      const validators = this.validators(current);
      const res = await this.request(current, {
        maxBytes: this.o.maxPageBytes,
        ...(validators ? { headers: validators } : {}),
        want: (status, type) => status >= 200 && status < 300 && PARSABLE.has(type),
      });
      if (!isRedirect(res.statusCode)) return { kind: 'response', url: current, res };
      if (hop === MAX_REDIRECTS) return { kind: 'failed', reason: 'too_many_redirects' };
      const next = normalizeUrl(header(res.headers, 'location') ?? '', current);
      if (!next) return { kind: 'failed', reason: 'bad_redirect' };
      const target = new URL(next);
      if (siteKey(target) !== this.site) return { kind: 'skipped', reason: 'offsite_redirect' };
      if (hasBinaryExtension(target)) return { kind: 'skipped', reason: 'not_html' };
      // `/docs` redirected to `/docs/` is the same page: followed. Another page fetched or queued: a duplicate.
      if (pageKey(next) !== pageKey(current) && this.seen.has(pageKey(next))) return { kind: 'skipped', reason: 'duplicate' };
      this.seen.add(pageKey(next));
      current = next;
    }
  }

  // --- pages --------------------------------------------------------------------------------

  private async process(item: QueueItem): Promise<void> {
    const outcome = await this.fetchPage(item.url);
    if (outcome.kind === 'skipped') return this.skip(item.url, outcome.reason);
    if (outcome.kind === 'failed') return this.fail(item.url, outcome.reason);
    const { url, res } = outcome;
    if (res.statusCode === 304 && this.o.previous?.has(url)) return this.unchanged(url, item.depth, res);
    if (res.statusCode < 200 || res.statusCode >= 300) return this.fail(url, `http_${res.statusCode}`);
    if (!res.body) return this.skip(url, 'not_html');
    await this.fetched(url, item.depth, res, res.body);
  }

  private async unchanged(url: string, depth: number, res: FetchedResponse): Promise<void> {
    const previous = this.o.previous!.get(url)!;
    const links = previous.links ?? [];
    await this.emit({
      url, depth, status: 'unchanged', statusCode: 304, title: null, text: '', links,
      etag: header(res.headers, 'etag') ?? previous.etag, lastModified: header(res.headers, 'last-modified') ?? previous.lastModified,
      contentHash: '', fetchedAt: new Date(), truncated: false,
    });
    for (const link of links) this.enqueue(normalizeUrl(link), depth + 1);
  }

  private extract(url: string, res: FetchedResponse, body: Buffer): ExtractedPage {
    const text = decodeBody(body, res.charset, res.contentType !== 'text/plain');
    const html = res.contentType === 'text/html' || res.contentType === 'application/xhtml+xml' || (res.contentType === '' && text.trimStart().startsWith('<'));
    return html ? extractHtml(text, url) : extractPlainText(text);
  }

  private async fetched(fetchedUrl: string, depth: number, res: FetchedResponse, body: Buffer): Promise<void> {
    const page = this.extract(fetchedUrl, res, body);
    const headerRobots = xRobotsTag(res.headers['x-robots-tag']);
    const links = page.links.filter((link) => this.inScope(new URL(link)));
    if (!page.nofollow && !headerRobots.nofollow) for (const link of links) this.enqueue(link, depth + 1, true);
    if (page.noindex || headerRobots.noindex) return this.skip(fetchedUrl, 'noindex');
    const url = this.canonical(fetchedUrl, page.canonical);
    if (url === null) return this.skip(fetchedUrl, 'duplicate'); // its canonical page is (or will be) fetched
    await this.emit({
      url, depth, status: 'fetched', statusCode: res.statusCode, title: page.title, text: page.text, links,
      etag: header(res.headers, 'etag'), lastModified: header(res.headers, 'last-modified'),
      contentHash: createHash('sha256').update(page.text).digest('hex'), fetchedAt: new Date(), truncated: res.truncated,
    });
  }

  /**
   * The URL to file a page under: its in-site canonical URL when that is another URL not seen
   * yet; the fetched URL when there is none (or it is off-site); null when the canonical page is
   * already fetched or queued (this one is a duplicate).
   */
  private canonical(fetchedUrl: string, canonical: string | null): string | null {
    if (!canonical || canonical === fetchedUrl) return fetchedUrl;
    const parsed = new URL(canonical);
    if (siteKey(parsed) !== this.site) return fetchedUrl;
    // The same page in the site's own spelling (`/index.html` naming `/`): filed under that spelling.
    if (pageKey(canonical) === pageKey(fetchedUrl)) return canonical;
    if (this.seen.has(pageKey(canonical))) return null;
    this.seen.add(pageKey(canonical));
    return canonical;
  }

  private async emit(page: CrawledPage): Promise<void> {
    this.result.pages++;
    if (page.status === 'unchanged') this.result.unchanged++;
    try {
      await this.onPage(page);
    } catch (err) {
      throw new CallbackError(err);
    }
    this.progress();
  }
}

function settings(opts: CrawlOptions): Settings {
  const positive = (name: string, value: number | undefined, fallback: number, min = 1) => {
    const v = value ?? fallback;
    if (!Number.isFinite(v) || v < min) throw new RangeError(`${name} must be a number >= ${min}`);
    return v;
  };
  return {
    ...opts,
    maxPages: positive('maxPages', opts.maxPages, CRAWL_DEFAULTS.maxPages),
    maxDepth: positive('maxDepth', opts.maxDepth, CRAWL_DEFAULTS.maxDepth, 0),
    maxPageBytes: positive('maxPageBytes', opts.maxPageBytes, CRAWL_DEFAULTS.maxPageBytes),
    maxDurationMs: positive('maxDurationMs', opts.maxDurationMs, CRAWL_DEFAULTS.maxDurationMs),
    delayMs: positive('delayMs', opts.delayMs, CRAWL_DEFAULTS.delayMs, 0),
    concurrency: Math.floor(positive('concurrency', opts.concurrency, CRAWL_DEFAULTS.concurrency)),
    requestTimeoutMs: positive('requestTimeoutMs', opts.requestTimeoutMs, CRAWL_DEFAULTS.requestTimeoutMs),
    sitemaps: opts.sitemaps ?? true,
    userAgent: opts.userAgent ?? DEFAULT_USER_AGENT,
  };
}

/**
 * Crawls the site of `opts.startUrl`, calling `onPage` for each page (awaited; up to
 * `concurrency` calls at once). Rejects with OutboundTargetError (`private_network_target`,
 * `unresolvable_host`) before any request when the start host may not be reached, with a
 * TypeError/RangeError for bad options, and with onPage's own error when onPage throws (the
 * crawl stops first). Anything that goes wrong with one page only counts it as failed.
 *
 * @example
 * const result = await crawl({ startUrl: 'https://example.com/', allowPrivate: false, delayMs: 250 },
 *   async (page) => { await savePage(page); });
 */
export async function crawl(opts: CrawlOptions, onPage: OnPage, onProgress?: (p: CrawlProgress) => void): Promise<CrawlResult> {
  const startUrl = normalizeUrl(opts.startUrl);
  if (!startUrl) throw new TypeError('startUrl must be an absolute http(s) URL');
  const o = settings(opts);
  const start = new URL(startUrl);
  // Refused before any request; every later connection is checked again as it is made.
  const policy = { allowPrivate: o.allowPrivate, exceptions: o.exceptions };
  await resolveOutboundHost(start.hostname, policy);
  const dispatcher = createOutboundAgent(policy, { connections: o.concurrency });
  try {
    return await new CrawlRun(o, start, dispatcher, onPage, onProgress).run();
  } finally {
    await dispatcher.destroy();
  }
}
