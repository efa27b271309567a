import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { client, eventually, startTestService, workflowBundle, type TestService } from './helpers.ts';
import { newOrg, type Api } from './support/orgs.ts';
import { startFixtureSite, type FixtureSite } from '../fixtures/fixture-site.ts';
import { searchKnowledge } from '../src/answers/retrieval.ts';
import { startWorkers } from '../src/temporal/worker.ts';
import { createLogger } from '../src/logger.ts';
import { workflowIds } from '../src/temporal/index.ts';
import { chunkStore } from '../src/knowledge/chunk-store.ts';

// Local fixture sites live on 127.0.0.1: private targets must be allowed here. The generated pages are lorem ipsum:
// their passages are not encoded (SENTENCE_ENCODER off), which would take most of each crawl's time here.
const SETTINGS = { ALLOW_PRIVATE_NETWORK_TARGETS: true, CRAWL_DELAY_MS: 0, CRAWL_MAX_PAGES: 40, SENTENCE_ENCODER: 'off' } as const;

let svc: TestService;
const sites: FixtureSite[] = [];
beforeAll(async () => { svc = await startTestService(SETTINGS); });
afterAll(async () => {
  await svc?.stop();
  await Promise.all(sites.map((s) => s.close()));
});

const REST = '/api/v1/rest';

async function fixture(opts: Parameters<typeof startFixtureSite>[0] = {}) {
  const site = await startFixtureSite(opts);
  sites.push(site);
  return site;
}

const eventTypes = async (orgId: string) =>
  (await svc.sql<{ type: string }[]>`select type from events where org_id = ${orgId} order by created_at, id`).map((r) => r.type);

async function siteOf(api: Api, agentId: string) {
  const res = await api.get(`${REST}/sites?widget_id=${agentId}`);
  expect(res.status, res.text).toBe(200);
  return res.body.data[0] as Record<string, any>;
}

/** Waits until the site's crawl workflow has ended and the site shows the result. */
async function crawled(api: Api, siteId: string, timeoutMs = 60_000): Promise<Record<string, any>> {
  await svc.temporal.workflow.getHandle(workflowIds.crawl(siteId)).result().catch(() => undefined);
  return eventually(async () => {
    const site = (await api.get(`${REST}/sites/${siteId}`)).body;
    return ['ready', 'failed'].includes(site.status) && site;
  }, timeoutMs);
}

async function allPages(api: Api, siteId: string, body = false) {
  const res = await api.get(`${REST}/sites/${siteId}/pages?limit=100${body ? '&include_body=true' : ''}`);
  expect(res.status, res.text).toBe(200);
  return res.body as { data: Record<string, any>[]; total: number };
}

describe('agents and widgets learn their website', () => {
  it('an agent created with site_url answers at once in draft, then becomes active with widget.crawl_completed', async () => {
    const web = await fixture({ pages: 13, sitemap: true });
    web.setPage('/articles/7', '<html><head><title>Opening hours</title></head><body><nav>Menu Home About</nav><article><h1>Opening hours</h1>'
      + '<p>The harbour office of Blue Lagoon Boats opens at seven in the morning and closes at half past five, Monday to Saturday.</p>'
      + '<p>On Sundays the pier stays closed except for charter returns.</p></article><footer>Footer boilerplate</footer></body></html>');
    const { api, orgId } = await newOrg(svc);
    const created = await api.post(`${REST}/agents`, { name: 'Boats', site_url: `${web.url}/` });
    expect(created.status, created.text).toBe(201);
    expect(created.body.status).toBe('draft');
    const site = await siteOf(api, created.body.id);
    expect(site).toMatchObject({ widget_id: created.body.id, kb_id: null, url: `${web.url}/`, crawl_cadence: 'off', next_crawl_at: null });
    expect(['queued', 'crawling', 'ready']).toContain(site.status);

    const done = await crawled(api, site.id);
    expect(done).toMatchObject({ status: 'ready', error: null, pages_crawled: 14 }); // 13 pages and /sitemap-only
    expect(done.last_crawled_at).toMatch(/Z$/);
    expect((await api.get(`${REST}/agents/${created.body.id}`)).body.status).toBe('active');
    expect(await eventTypes(orgId)).toEqual(['widget.crawl_completed']);

    const pages = await allPages(api, site.id, true);
    expect(pages.total).toBe(14);
    const urls = pages.data.map((p) => p.url);
    expect(urls).toEqual([...urls].sort());
    const hours = pages.data.find((p) => p.url.endsWith('/articles/7'))!;
    expect(hours).toMatchObject({ title: 'Opening hours', status_code: 200 });
    expect(hours.body).toContain('seven in the morning');
    expect(hours.body).not.toContain('Footer boilerplate');
    expect(Object.keys((await allPages(api, site.id)).data[0]!).sort()).toEqual(['fetched_at', 'id', 'status_code', 'title', 'url']);

    // Retrieval answers what only the site says, with the page it came from.
    const passages = await searchKnowledge(chunkStore(svc.sql), created.body.id, 'When does the harbour office open?');
    expect(passages[0]).toMatchObject({ url: `${web.url}/articles/7`, title: 'Opening hours' });
    expect(passages[0]!.text).toContain('seven in the morning');
    expect(await searchKnowledge(chunkStore(svc.sql), created.body.id, 'xylophone quasar')).toEqual([]);
  });

  it('an imported agent with a site is created and crawled exactly as create does (issue 12, defect 5)', async () => {
    const web = await fixture({ pages: 3 });
    const { api, orgId } = await newOrg(svc);
    const source = (await api.post(`${REST}/agents`, { name: 'Source' })).body;
    const manifest = (await api.get(`${REST}/agents/${source.id}/export`)).body;
    const imported = await api.post(`${REST}/agents/import`, { ...manifest, agent: { ...manifest.agent, site_url: `${web.url}/` } });
    expect(imported.status, imported.text).toBe(201);
    expect(imported.body).toMatchObject({ status: 'draft', site_url: `${web.url}/` });
    const site = await siteOf(api, imported.body.id);
    expect(site).toMatchObject({ widget_id: imported.body.id, url: `${web.url}/` });
    expect((await crawled(api, site.id)).status).toBe('ready');
    expect((await api.get(`${REST}/agents/${imported.body.id}`)).body.status).toBe('active');
    expect(await eventTypes(orgId)).toEqual(['widget.crawl_completed']);
  });

  it('every crawl run and re-crawl Schedule carries a one-line summary, read back through the Temporal client', async () => {
    const web = await fixture({ pages: 2 });
    const { api } = await newOrg(svc);
    const agent = (await api.post(`${REST}/agents`, { name: 'Front desk', site_url: `${web.url}/` })).body;
    const site = await siteOf(api, agent.id);
    const host = new URL(web.url).host;
    const run = await svc.temporal.workflow.getHandle(workflowIds.crawl(site.id)).describe();
    expect(await run.staticSummary()).toBe(`Crawl of ${host} for agent Front desk`);
    await crawled(api, site.id);
    expect((await api.patch(`${REST}/sites/${site.id}`, { crawl_cadence: 'weekly' })).status).toBe(200);
    const schedule = await svc.temporal.schedule.getHandle(workflowIds.crawlSchedule(site.id)).describe();
    expect(schedule.action).toMatchObject({ staticSummary: `Weekly re-crawl of ${host} for agent Front desk` });
  });

  it('a widget created from a website emits widget.ready; recrawl keeps it active and reuses unchanged pages', async () => {
    const web = await fixture({ pages: 10 });
    const { api, orgId } = await newOrg(svc);
    const widget = (await api.post('/api/v1/widgets', { name: 'Help', site_url: web.url })).body;
    expect(widget.status).toBe('draft');
    const site = await siteOf(api, widget.agent_id);
    await crawled(api, site.id);
    expect((await api.get(`/api/v1/widgets/${widget.id}`)).body.status).toBe('active');
    expect(await eventTypes(orgId)).toEqual(['widget.ready']);

    web.resetHits();
    web.setPage('/articles/3', '<html><head><title>Changed</title></head><body><article><h1>Changed</h1><p>Fresh words about zeppelin moorings.</p></article></body></html>');
    const recrawl = await api.post(`/api/v1/widgets/${widget.id}/recrawl`);
    expect(recrawl.status, recrawl.text).toBe(202);
    expect(recrawl.body.status).toBe('active');
    const again = await crawled(api, site.id);
    expect(again).toMatchObject({ status: 'ready', pages_crawled: 10 });
    expect((await api.get(`/api/v1/widgets/${widget.id}`)).body.status).toBe('active');
    expect(await eventTypes(orgId)).toEqual(['widget.ready']);
    // Every page was asked "changed since?"; only the changed one came back with a body.
    const pageHits = web.log.filter((h) => h.path === '/' || h.path.startsWith('/articles/'));
    expect(pageHits.length).toBe(10);
    expect(pageHits.every((h) => h.headers['if-none-match'] || h.headers['if-modified-since'])).toBe(true);
    expect(pageHits.filter((h) => h.status === 200).map((h) => h.path)).toEqual(['/articles/3']);
    const pages = await allPages(api, site.id, true);
    expect(pages.data.find((p) => p.url.endsWith('/articles/3'))!.body).toContain('zeppelin');
    expect(pages.data.find((p) => p.url.endsWith('/articles/4'))!.body).toContain('Article 4 marker.');
    expect((await searchKnowledge(chunkStore(svc.sql), widget.agent_id, 'zeppelin moorings'))[0]!.url).toBe(`${web.url}/articles/3`);
  }, 120_000);

  it('honours robots.txt, the page cap and de-duplicates URLs', async () => {
    const web = await fixture({ pages: 60, topology: 'graph', extras: true, slowMs: 10 });
    const { api } = await newOrg(svc);
    const agent = (await api.post(`${REST}/agents`, { name: 'Big', site_url: web.url })).body;
    const site = await crawled(api, (await siteOf(api, agent.id)).id);
    expect(site.status).toBe('ready');
    expect(site.pages_crawled).toBe(40);
    const urls = (await allPages(api, site.id)).data.map((p) => p.url);
    expect(new Set(urls).size).toBe(urls.length);
    expect(urls.some((u) => u.includes('/private/'))).toBe(false);
    expect(urls.some((u) => /[?#]|utm_/.test(u))).toBe(false);
    expect(web.hits.get('/private/secret') ?? 0).toBe(0);
    // Each page once (a redirect loop is followed a few hops, then given up).
    for (const [path, n] of web.hits) if (path !== '/robots.txt' && path !== '/redirect/loop') expect(n, path).toBeLessThanOrEqual(1);
  }, 120_000);

  it('a re-crawl builds beside the served index and swaps atomically; a failed one keeps the old index', async () => {
    const web = await fixture({ pages: 6, extras: true, slowMs: 3000 });
    const { api } = await newOrg(svc);
    const agent = (await api.post(`${REST}/agents`, { name: 'Swap', site_url: web.url })).body;
    const site = await crawled(api, (await siteOf(api, agent.id)).id, 90_000);
    expect(site.status).toBe('ready');
    const before = site.pages_crawled;
    expect(await searchKnowledge(chunkStore(svc.sql), agent.id, '"Article 4 marker"')).not.toEqual([]);

    web.setPage('/articles/4', '<html><head><title>New</title></head><body><article><h1>New</h1><p>Quokka sanctuary schedule.</p></article></body></html>');
    expect((await api.post(`${REST}/sites/${site.id}`)).status).toBe(202);
    // While the slow page holds the crawl, queries see the old index only.
    await eventually(async () => (await api.get(`${REST}/sites/${site.id}`)).body.status === 'crawling');
    await eventually(async () => (web.hits.get('/articles/4') ?? 0) >= 2, 20_000);
    expect((await api.get(`${REST}/sites/${site.id}`)).body.status).toBe('crawling');
    expect((await searchKnowledge(chunkStore(svc.sql), agent.id, 'Quokka sanctuary')).filter((p) => p.text.includes('Quokka'))).toEqual([]);
    expect((await searchKnowledge(chunkStore(svc.sql), agent.id, '"Article 4 marker"'))[0]!.url).toBe(`${web.url}/articles/4`);
    expect((await allPages(api, site.id)).total).toBe(before);
    // A second request while it runs is remembered: the same workflow makes one more pass after this one.
    expect((await api.post(`${REST}/sites/${site.id}`)).body.status).toBe('crawling');
    const swapped = await crawled(api, site.id, 90_000);
    expect(swapped.status).toBe('ready');
    expect((await searchKnowledge(chunkStore(svc.sql), agent.id, 'Quokka sanctuary'))[0]!.url).toBe(`${web.url}/articles/4`);
    // (Passages sharing a word may still come back; the replaced text does not.)
    expect((await searchKnowledge(chunkStore(svc.sql), agent.id, '"Article 4 marker"')).filter((p) => p.text.includes('Article 4 marker'))).toEqual([]);

    // robots.txt answering 500 means "disallow all" (RFC 9309): the crawl fails, the index stays.
    web.setRobots({ status: 500 });
    await api.post(`${REST}/sites/${site.id}`);
    const failed = await crawled(api, site.id);
    expect(failed).toMatchObject({ status: 'failed', pages_crawled: swapped.pages_crawled, last_crawled_at: swapped.last_crawled_at });
    expect(failed.error).toEqual(expect.any(String));
    expect((await allPages(api, site.id)).total).toBe(swapped.pages_crawled);
    expect((await searchKnowledge(chunkStore(svc.sql), agent.id, 'Quokka sanctuary'))[0]!.url).toBe(`${web.url}/articles/4`);
  }, 120_000);

  // Issue 49: a crawl asked for while one runs made no pass of its own, so a page changed after the running
  // pass had fetched it stayed old until the next cadence run.
  it('a re-crawl asked for while a crawl runs is served by one more pass, which sees a page changed meanwhile', async () => {
    const web = await fixture({ pages: 3 });
    const { api } = await newOrg(svc);
    const release = web.hold(['/articles/2']);
    const agent = (await api.post(`${REST}/agents`, { name: 'Changer', site_url: web.url })).body;
    const siteId = (await siteOf(api, agent.id)).id;
    // The running pass has fetched the home page and waits for another: the home page is changed after it was read.
    await eventually(async () => web.log.some((h) => h.path === '/' && h.status === 200) && (web.hits.get('/articles/2') ?? 0) >= 1, 30_000, 20);
    web.setPage('/', '<html><head><title>Home</title></head><body><article><h1>Home</h1><p>Home now mentions a walrus choir.</p>'
      + '<a href="/articles/1">one</a> <a href="/articles/2">two</a></article></body></html>');
    const asked = await api.post(`${REST}/sites/${siteId}`);
    expect(asked.status, asked.text).toBe(202);
    expect(asked.body.status).toBe('crawling');
    release();
    const done = await crawled(api, siteId);
    expect(done).toMatchObject({ status: 'ready', pages_crawled: 3 });
    const pages = await allPages(api, siteId, true);
    expect(pages.data.find((p) => new URL(p.url).pathname === '/')!.body).toContain('walrus choir');
    expect((await searchKnowledge(chunkStore(svc.sql), agent.id, 'walrus choir'))[0]!.url).toBe(`${web.url}/`);
    expect(web.hits.get('/')).toBe(2);
  }, 120_000);

  it('three re-crawls asked for during one pass give exactly one more pass; status says crawling until it ends', async () => {
    const web = await fixture({ pages: 3 });
    const { api } = await newOrg(svc);
    const release = web.hold(['/']);
    const agent = (await api.post(`${REST}/agents`, { name: 'Impatient', site_url: web.url })).body;
    const siteId = (await siteOf(api, agent.id)).id;
    await eventually(async () => (web.hits.get('/') ?? 0) >= 1, 30_000, 20);
    for (let i = 0; i < 3; i++) expect((await api.post(`${REST}/sites/${siteId}`)).status).toBe(202);
    // The second pass is held in its turn, once the first has swapped its pages in.
    const releaseSecond = web.hold(['/']);
    release();
    await eventually(async () => (web.hits.get('/') ?? 0) >= 2, 30_000, 20);
    const between = (await api.get(`${REST}/sites/${siteId}`)).body;
    expect(between).toMatchObject({ status: 'crawling', pages_crawled: 3 });
    expect(between.last_crawled_at).toEqual(expect.any(String));
    releaseSecond();
    const done = await crawled(api, siteId);
    expect(done.status).toBe('ready');
    expect(Date.parse(done.last_crawled_at)).toBeGreaterThan(Date.parse(between.last_crawled_at));
    expect(web.hits.get('/')).toBe(2);
    expect(web.hits.get('/articles/1')).toBe(2);
  }, 120_000);

  it('POST /agents/:id/site connects a site to an agent without one, and re-points it', async () => {
    const first = await fixture({ pages: 3 });
    const second = await fixture({ pages: 4 });
    const { api } = await newOrg(svc);
    const agent = (await api.post(`${REST}/agents`, { name: 'Plain' })).body;
    expect(agent.status).toBe('active');
    const connected = await api.post(`${REST}/agents/${agent.id}/site`, { url: first.url });
    expect(connected.status, connected.text).toBe(202);
    expect(connected.body).toMatchObject({ widget_id: agent.id, url: first.url });
    expect((await crawled(api, connected.body.id)).pages_crawled).toBe(3);
    expect((await api.get(`${REST}/agents/${agent.id}`)).body).toMatchObject({ status: 'active', site_url: first.url });

    const moved = await api.post(`${REST}/agents/${agent.id}/site`, { url: second.url, crawl_cadence: 'weekly' });
    expect(moved.status).toBe(202);
    expect(moved.body.id).toBe(connected.body.id);
    const done = await crawled(api, moved.body.id);
    expect(done, JSON.stringify(done)).toMatchObject({ url: second.url, status: 'ready', pages_crawled: 4, crawl_cadence: 'weekly' });
    expect((await allPages(api, done.id)).data.every((p) => p.url.startsWith(second.url))).toBe(true);
    expect((await api.get(`${REST}/agents/${agent.id}`)).body.site_url).toBe(second.url);

    expect((await api.post(`${REST}/agents/${agent.id}/site`, { url: 'ftp://x' })).status).toBe(400);
    expect((await api.post(`${REST}/agents/0190a0b0-0000-7000-8000-000000000000/site`, { url: second.url })).status).toBe(404);
    const norecrawl = await api.post(`/api/v1/widgets/${(await api.post(`${REST}/agents`, { name: 'No site' })).body.public_key}/recrawl`);
    expect(norecrawl.status).toBe(409);
    expect(norecrawl.body.code).toBe('invalid_state');
  }, 120_000);
});

describe('which crawl failures are retried (issue 40, I13)', () => {
  /** A one-page site whose start page answers `answers` in turn, then 200; it counts the start page's requests. */
  async function startPage(answers: { status: number; type?: string }[]) {
    let hits = 0;
    const server = createServer((req, res) => {
      if (req.url !== '/') { res.writeHead(404).end(); return; }
      hits++;
      const answer = answers.shift() ?? { status: 200 };
      res.writeHead(answer.status, { 'content-type': answer.type ?? 'text/html; charset=utf-8' })
        .end(answer.status === 200 ? '<html><head><title>Harbour</title></head><body><main><p>The harbour office opens at seven.</p></main></body></html>' : 'no');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/`, hits: () => hits };
  }
  const closers: (() => Promise<void>)[] = [];
  afterAll(async () => { await Promise.all(closers.map((close) => close())); });

  /** The attempt of the crawl's last runCrawl activity, from its workflow's history (the latest run). */
  async function runCrawlAttempt(siteId: string): Promise<number> {
    const history = await svc.temporal.workflow.getHandle(workflowIds.crawl(siteId)).fetchHistory();
    const events = history.events ?? [];
    const scheduled = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runCrawl').map((e) => Number(e.eventId));
    const started = events.filter((e) => scheduled.includes(Number(e.activityTaskStartedEventAttributes?.scheduledEventId ?? -1)));
    return started.at(-1)?.activityTaskStartedEventAttributes?.attempt ?? 0;
  }

  it('a start page answering 503, then 200, is asked again and the site becomes ready', async () => {
    const web = await startPage([{ status: 503 }]);
    const { api } = await newOrg(svc);
    const created = await api.post(`${REST}/agents`, { name: 'Harbour', site_url: web.url });
    expect(created.status, created.text).toBe(201);
    const site = await siteOf(api, created.body.id);
    expect(await crawled(api, site.id, 90_000)).toMatchObject({ status: 'ready', error: null, pages_crawled: 1 });
    expect(web.hits()).toBe(2);
    expect(await runCrawlAttempt(site.id)).toBe(2);
  }, 120_000);

  it('a 404, a 410 or a start page that is not HTML is not asked again: the crawl fails at its first attempt', async () => {
    const { api } = await newOrg(svc);
    for (const [answer, error] of [[{ status: 404 }, /http_404/], [{ status: 410 }, /http_410/], [{ status: 200, type: 'application/pdf' }, /not html/]] as const) {
      const web = await startPage([answer, answer, answer]);
      const created = await api.post(`${REST}/agents`, { name: 'Gone', site_url: web.url });
      const site = await siteOf(api, created.body.id);
      const failed = await crawled(api, site.id);
      expect(failed.status).toBe('failed');
      expect(failed.error).toMatch(error);
      expect(web.hits()).toBe(1);
      expect(await runCrawlAttempt(site.id)).toBe(1);
    }
  }, 120_000);

  it('a stored URL the crawler cannot read (user info, refused by the API since) fails at its first attempt', async () => {
    const web = await startPage([]);
    const { api } = await newOrg(svc);
    const created = await api.post(`${REST}/agents`, { name: 'Old row', site_url: web.url });
    const site = await siteOf(api, created.body.id);
    expect((await crawled(api, site.id)).status).toBe('ready');
    await svc.sql`update sites set url = ${web.url.replace('//', '//127.0.0.1:80@')} where id = ${site.id}`;
    expect((await api.post(`${REST}/sites/${site.id}`)).status).toBe(202);
    const failed = await crawled(api, site.id);
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/absolute http/);
    expect(await runCrawlAttempt(site.id)).toBe(1);
  }, 120_000);
});

describe('sites API', () => {
  it('cadence: next_crawl_at recomputed and the site\'s Schedule created, moved and removed', async () => {
    const web = await fixture({ pages: 2 });
    const { api } = await newOrg(svc);
    const agent = (await api.post(`${REST}/agents`, { name: 'Cadence', site_url: web.url })).body;
    const site = await crawled(api, (await siteOf(api, agent.id)).id);
    const last = Date.parse(site.last_crawled_at);
    const handle = svc.temporal.schedule.getHandle(workflowIds.crawlSchedule(site.id));

    const daily = await api.patch(`${REST}/sites/${site.id}`, { crawl_cadence: 'daily' });
    expect(daily.status, daily.text).toBe(200);
    expect(Date.parse(daily.body.next_crawl_at)).toBe(last + 86_400_000);
    const described = await handle.describe();
    expect(described.info.nextActionTimes[0]!.getTime()).toBe(Math.floor((last + 86_400_000) / 1000) * 1000);
    expect(described.action).toMatchObject({ type: 'startWorkflow', workflowType: 'scheduledCrawl' });

    const weekly = await api.patch(`${REST}/sites/${site.id}`, { crawl_cadence: 'weekly' });
    expect(Date.parse(weekly.body.next_crawl_at)).toBe(last + 7 * 86_400_000);
    expect((await handle.describe()).info.nextActionTimes[0]!.getTime()).toBe(Math.floor((last + 7 * 86_400_000) / 1000) * 1000);

    const off = await api.patch(`${REST}/sites/${site.id}`, { crawl_cadence: 'off' });
    expect(off.body.next_crawl_at).toBeNull();
    await expect(handle.describe()).rejects.toThrow();

    expect((await api.patch(`${REST}/sites/${site.id}`, { crawl_cadence: 'hourly' })).body.errors[0]).toMatchObject({ field: 'crawl_cadence', code: 'invalid_value' });
    expect((await api.patch(`${REST}/sites/${site.id}`, {})).body.crawl_cadence).toBe('off');

    // A due Schedule runs a crawl: trigger it now.
    await api.patch(`${REST}/sites/${site.id}`, { crawl_cadence: 'monthly' });
    await handle.trigger();
    await eventually(async () => Date.parse((await api.get(`${REST}/sites/${site.id}`)).body.last_crawled_at) > last, 30_000);

    // DELETE removes the site, its pages and its Schedule.
    expect((await api.delete(`${REST}/sites/${site.id}`)).status).toBe(204);
    expect((await api.get(`${REST}/sites/${site.id}`)).status).toBe(404);
    expect((await api.get(`${REST}/sites/${site.id}/pages`)).status).toBe(404);
    await expect(handle.describe()).rejects.toThrow();
    expect((await svc.sql`select 1 from site_pages where site_id = ${site.id}`).length).toBe(0);
  });

  it('permissions, filters, bounds and other organizations', async () => {
    const { api } = await newOrg(svc);
    const agent = (await api.post(`${REST}/agents`, { name: 'Filtered', site_url: 'https://unreachable.invalid/' })).body;
    const site = await siteOf(api, agent.id);
    const token = async (permissions: string[]) => client(svc.url, (await api.post(`${REST}/api-keys`, { name: 'k', permissions })).body.token);
    const reader = await token(['sites.read']);
    expect((await reader.get(`${REST}/sites/${site.id}`)).status).toBe(200);
    for (const res of [await reader.post(`${REST}/sites/${site.id}`), await reader.patch(`${REST}/sites/${site.id}`, { crawl_cadence: 'daily' }), await reader.delete(`${REST}/sites/${site.id}`)]) {
      expect(res.status).toBe(403);
      expect(res.body.required_permission).toBe('sites.write');
    }
    expect((await (await token([])).get(`${REST}/sites`)).body.required_permission).toBe('sites.read');
    expect((await api.get(`${REST}/sites?limit=0`)).status).toBe(400);
    expect((await api.get(`${REST}/sites?widget_id=nope`)).status).toBe(400);
    expect((await api.get(`${REST}/sites?kb_id=${agent.id}`)).body.total).toBe(0);
    const stranger = (await newOrg(svc)).api;
    expect((await stranger.get(`${REST}/sites/${site.id}`)).status).toBe(404);
    expect((await stranger.get(`${REST}/sites?widget_id=${agent.id}`)).body.total).toBe(0);
    // An unreachable site fails with a readable error.
    const failed = await crawled(api, site.id);
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/unreachable\.invalid|resolve/);
    // A private target is refused outright without the flag.
    const strict = await startTestService({ ALLOW_PRIVATE_NETWORK_TARGETS: false }, { worker: false });
    try {
      const { token: t } = await strict.newOrg();
      const res = await client(strict.url, t).post(`${REST}/agents`, { name: 'x', site_url: 'http://127.0.0.1:9/' });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('private_network_target');
    } finally {
      await strict.stop();
    }
  }, 120_000);
});

describe('knowledge bases', () => {
  it('standalone sources shared by agents; delete_kbs deletes only the unshared ones', async () => {
    const web = await fixture({ pages: 3 });
    const { api } = await newOrg(svc);
    const [a, b] = [(await api.post(`${REST}/agents`, { name: 'A' })).body, (await api.post(`${REST}/agents`, { name: 'B' })).body];
    const only = (await api.post(`${REST}/knowledge-bases`, { name: 'Only A' })).body;
    const shared = (await api.post(`${REST}/knowledge-bases`, { name: 'Shared' })).body;
    const source = await api.post(`${REST}/knowledge-bases/${only.id}/sites`, { url: web.url });
    expect(source.status, source.text).toBe(201);
    expect(source.body).toMatchObject({ kb_id: only.id, widget_id: null });
    await crawled(api, source.body.id);
    expect((await api.get(`${REST}/sites?kb_id=${only.id}`)).body.data.map((s: any) => s.id)).toEqual([source.body.id]);

    expect((await api.post(`${REST}/knowledge-bases/${only.id}/agents`, { agent_id: a.id })).body.agent_ids).toEqual([a.id]);
    await api.post(`${REST}/knowledge-bases/${shared.id}/agents`, { agent_id: a.id });
    expect((await api.post(`${REST}/knowledge-bases/${shared.id}/agents`, { agent_id: b.id })).body.agent_ids).toEqual([a.id, b.id]);
    // A attached to the base answers from it; B does not.
    expect((await searchKnowledge(chunkStore(svc.sql), a.id, 'Article 2 marker'))[0]!.url).toBe(`${web.url}/articles/2`);
    expect(await searchKnowledge(chunkStore(svc.sql), b.id, 'Article 2 marker')).toEqual([]);
    const foreign = (await (await newOrg(svc)).api.post(`${REST}/agents`, { name: 'F' })).body;
    expect((await api.post(`${REST}/knowledge-bases/${only.id}/agents`, { agent_id: foreign.id })).body.errors[0]).toMatchObject({ field: 'agent_id', code: 'unknown_agent' });

    const agentsOnly = client(svc.url, (await api.post(`${REST}/api-keys`, { name: 'k', permissions: ['agents.read', 'agents.write'] })).body.token);
    const denied = await agentsOnly.delete(`${REST}/agents/${a.id}?delete_kbs=true`);
    expect(denied.status).toBe(403);
    expect(denied.body.required_permission).toBe('knowledge.write');

    expect((await api.delete(`${REST}/agents/${a.id}?delete_kbs=true`)).status).toBe(204);
    expect((await api.get(`${REST}/knowledge-bases/${only.id}`)).status).toBe(404);
    expect((await api.get(`${REST}/sites/${source.body.id}`)).status).toBe(404);
    expect((await api.get(`${REST}/knowledge-bases/${shared.id}`)).body.agent_ids).toEqual([b.id]);

    // Without delete_kbs nothing of the knowledge bases goes.
    const keep = (await api.post(`${REST}/knowledge-bases`, { name: 'Kept' })).body;
    await api.post(`${REST}/knowledge-bases/${keep.id}/agents`, { agent_id: b.id });
    expect((await api.delete(`${REST}/agents/${b.id}`)).status).toBe(204);
    expect((await api.get(`${REST}/knowledge-bases/${keep.id}`)).body.agent_ids).toEqual([]);
    expect((await api.get(`${REST}/knowledge-bases/${shared.id}`)).status).toBe(200);
  });
});

describe('durability', () => {
  it('a worker stopped mid-crawl is replaced and the crawl finishes without fetching a finished page again', async () => {
    // 40 pages 400 ms apart: longer than the worker's shutdown grace (10 s), after which the
    // activity is cancelled mid-crawl, as if its worker had died.
    const web = await fixture({ pages: 40 });
    const api = await startTestService({ ...SETTINGS, CRAWL_DELAY_MS: 400 }, { worker: false });
    try {
      const { token } = await api.newOrg();
      const http = client(api.url, token);
      const agent = (await http.post(`${REST}/agents`, { name: 'Durable', site_url: web.url })).body;
      const siteId = (await siteOf(http, agent.id)).id;
      const workers = await startCrawlWorkers(api);
      await eventually(async () => (await api.sql`select 1 from site_pages where site_id = ${siteId}`).length >= 3, 30_000, 20);
      await workers.shutdown();
      const storedAtStop = (await api.sql<{ url: string }[]>`select url from site_pages where site_id = ${siteId}`).map((r) => r.url);
      expect(storedAtStop.length).toBeLessThan(40);
      const replacement = await startCrawlWorkers(api);
      try {
        const done = await crawled(http, siteId);
        expect(done).toMatchObject({ status: 'ready', pages_crawled: 40 });
      } finally {
        await replacement.shutdown();
      }
      const urls = (await allPages(http, siteId)).data.map((p) => p.url);
      expect(new Set(urls).size).toBe(40);
      // Pages stored before the stop were not fetched again (a page in flight at the stop may be).
      const refetched = storedAtStop.filter((u) => (web.hits.get(new URL(u).pathname) ?? 0) > 1);
      expect(refetched).toEqual([]);
    } finally {
      await api.stop();
    }
  }, 120_000);
});

async function startCrawlWorkers(service: TestService) {
  return startWorkers({
    sql: service.sql, config: service.config, address: inject('temporalAddress'), namespace: service.config.TEMPORAL_NAMESPACE,
    log: createLogger('silent'), kinds: ['crawls'], workflowBundle: await workflowBundle(),
  });
}
