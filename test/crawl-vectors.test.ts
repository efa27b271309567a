import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startTestService, type TestService } from './helpers.ts';
import { newOrg } from './support/orgs.ts';
import { startFixtureSite, type FixtureSite } from '../fixtures/fixture-site.ts';
import { workflowIds } from '../src/temporal/index.ts';
import { fillPassageVectors, type CrawlStepDeps } from '../src/knowledge/crawl-steps.ts';

// Issue 48: a site is ready once its pages are stored and indexed by their words; its passages' meaning vectors follow,
// in the same crawl workflow, and the site's resource counts those still waiting (`passages_embedding`).
const SETTINGS = { ALLOW_PRIVATE_NETWORK_TARGETS: true, CRAWL_DELAY_MS: 0, CRAWL_MAX_PAGES: 6 } as const;
const REST = '/api/v1/rest';

let svc: TestService;
let web: FixtureSite;
beforeAll(async () => {
  [svc, web] = await Promise.all([startTestService(SETTINGS), startFixtureSite({ pages: 6, paragraphs: 3 })]);
});
afterAll(async () => {
  await svc?.stop();
  await web?.close();
});

const vectorsOf = async (siteId: string) => (await svc.sql<{ passages: number; embedded: number }[]>`
  select count(*)::int as passages, count(c.embedding)::int as embedded
  from page_chunks c join sites s on s.id = c.site_id and s.generation = c.generation where s.id = ${siteId}`)[0]!;

describe('passage vectors after the site is ready', () => {
  it('the crawl swaps the index in first, then fills every passage\'s vector, counting down passages_embedding', async () => {
    const { api } = await newOrg(svc);
    const agent = (await api.post(`${REST}/agents`, { name: 'Vectors', site_url: `${web.url}/` })).body;
    const ready = await eventually(async () => {
      const site = (await api.get(`${REST}/sites?widget_id=${agent.id}`)).body.data[0];
      return site?.status === 'ready' && site;
    }, 120_000);
    expect(ready.passages).toBeGreaterThan(0);
    expect(ready.passages_embedding).toBeLessThanOrEqual(ready.passages);

    const handle = svc.temporal.workflow.getHandle(workflowIds.crawl(ready.id));
    expect(await handle.result()).toMatchObject({ pages: 6 });
    const site = (await api.get(`${REST}/sites/${ready.id}`)).body;
    expect(site).toMatchObject({ status: 'ready', passages: ready.passages, passages_embedding: 0 });
    expect(await vectorsOf(ready.id)).toEqual({ passages: ready.passages, embedded: ready.passages });
    // The order of the steps: the swap (the site ready, the agent active) before any vector is computed.
    const steps = (await handle.fetchHistory()).events!.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
    expect(steps).toEqual(['prepareCrawl', 'runCrawl', 'finishCrawl', 'fillPassageVectors']);
  });

  it('stops, leaving the rest to the next pass, when a crawl is asked for meanwhile; resumes after its heartbeat\'s passage', async () => {
    const { api } = await newOrg(svc);
    const agent = (await api.post(`${REST}/agents`, { name: 'Vectors again', site_url: `${web.url}/` })).body;
    const siteId = (await api.get(`${REST}/sites?widget_id=${agent.id}`)).body.data[0].id as string;
    await svc.temporal.workflow.getHandle(workflowIds.crawl(siteId)).result();
    const { passages } = await vectorsOf(siteId);
    await svc.sql`update page_chunks set embedding = null where site_id = ${siteId}`;
    await svc.sql`update sites set passages_embedding = ${passages} where id = ${siteId}`;
    const deps = { sql: svc.sql } as CrawlStepDeps;
    const ctx = { heartbeat: () => undefined, signal: new AbortController().signal };

    await svc.sql`update sites set status = 'queued' where id = ${siteId}`;
    expect(await fillPassageVectors(deps, { siteId }, ctx)).toEqual({ stored: 0, stoppedBy: 'requeued' });
    expect((await vectorsOf(siteId)).embedded).toBe(0);

    // A retry resumes after the last passage its heartbeat names: those before it are not read again.
    await svc.sql`update sites set status = 'ready' where id = ${siteId}`;
    const [site] = await svc.sql<{ generation: number }[]>`select generation from sites where id = ${siteId}`;
    const ids = (await svc.sql<{ id: string }[]>`select id::text as id from page_chunks where site_id = ${siteId} order by id`).map((r) => r.id);
    const resumeFrom = { generation: site!.generation, afterId: ids[1]!, stored: 2 };
    expect(await fillPassageVectors(deps, { siteId }, { ...ctx, resumeFrom })).toEqual({ stored: passages, stoppedBy: 'done' });
    expect((await vectorsOf(siteId)).embedded).toBe(passages - 2);
    expect((await api.get(`${REST}/sites/${siteId}`)).body.passages_embedding).toBe(0);
  });
});
