import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startTestService, type TestService } from './helpers.ts';
import { newOrg } from './support/orgs.ts';
import { startFixtureSite, type FixtureSite } from '../fixtures/fixture-site.ts';
import { workflowIds } from '../src/temporal/index.ts';
import { fillPassageVectors, type CrawlStepDeps } from '../src/knowledge/crawl-steps.ts';
import { storeChunkVectors } from '../src/db/site-pages.ts';
import { useSentenceEncoder } from '../src/answers/meaning.ts';

// Issue 48: a site is ready once its pages are stored and indexed by their words; its passages' meaning vectors follow,
// in the same crawl workflow, and the site's resource counts those still waiting (`passages_embedding`).
const SETTINGS = { ALLOW_PRIVATE_NETWORK_TARGETS: true, CRAWL_DELAY_MS: 0, CRAWL_MAX_PAGES: 6 } as const;
const REST = '/api/v1/rest';

let svc: TestService;
let web: FixtureSite;
/** Pages of 40 paragraphs: several hundred passages, whose vectors take a few seconds at least to fill. */
let long: FixtureSite;
beforeAll(async () => {
  [svc, web, long] = await Promise.all([startTestService(SETTINGS), startFixtureSite({ pages: 6, paragraphs: 3 }), startFixtureSite({ pages: 6, paragraphs: 40 })]);
});
afterAll(async () => {
  await svc?.stop();
  await web?.close();
  await long?.close();
});

const rowsOf = async (siteId: string) => (await svc.sql<{ sites: number; pages: number; passages: number }[]>`
  select (select count(*)::int from sites where id = ${siteId}) as sites, (select count(*)::int from site_pages where site_id = ${siteId}) as pages,
    (select count(*)::int from page_chunks where site_id = ${siteId}) as passages`)[0]!;

const vectorsOf = async (siteId: string) => (await svc.sql<{ passages: number; embedded: number }[]>`
  select count(*)::int as passages, count(c.embedding)::int as embedded
  from page_chunks c join sites s on s.id = c.site_id and s.generation = c.generation where s.id = ${siteId}`)[0]!;

describe('passage vectors after the site is ready', () => {
  it('the crawl swaps the index in first, then fills every passage\'s vector, counting down passages_embedding', async () => {
    const { api } = await newOrg(svc);
    const ready = await readySite(api, 'Vectors');
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
    const ids = (await svc.sql<{ id: string }[]>`select id::text as id from page_chunks where site_id = ${siteId} order by page_chunks.id`).map((r) => r.id);
    const resumeFrom = { generation: site!.generation, afterId: ids[1]!, stored: 2 };
    expect(await fillPassageVectors(deps, { siteId }, { ...ctx, resumeFrom })).toEqual({ stored: passages, stoppedBy: 'done' });
    expect((await vectorsOf(siteId)).embedded).toBe(passages - 2);
    expect((await api.get(`${REST}/sites/${siteId}`)).body.passages_embedding).toBe(0);
  });

  it('counts the passages waiting once, then each step subtracts only the passages it gave a vector, for the generation served', async () => {
    const { api } = await newOrg(svc);
    const agent = (await api.post(`${REST}/agents`, { name: 'Vectors counted', site_url: `${web.url}/` })).body;
    const siteId = (await api.get(`${REST}/sites?widget_id=${agent.id}`)).body.data[0].id as string;
    await svc.temporal.workflow.getHandle(workflowIds.crawl(siteId)).result();
    const generation = (await svc.sql<{ generation: number }[]>`select generation from sites where id = ${siteId}`)[0]!.generation;
    const rows = await svc.sql<{ id: string; embedding: Buffer }[]>`
      select id::text as id, embedding from page_chunks where site_id = ${siteId} and generation = ${generation} order by page_chunks.id`;
    const passages = rows.length;
    expect(passages).toBeGreaterThan(5);
    await svc.sql`update page_chunks set embedding = null where site_id = ${siteId}`;
    await svc.sql`update sites set passages_embedding = ${passages} where id = ${siteId}`;
    const waiting = async () => (await api.get(`${REST}/sites/${siteId}`)).body.passages_embedding as number;

    expect(await storeChunkVectors(svc.sql, siteId, generation, rows.slice(0, 3))).toBe(passages - 3);
    // The same step stored again (an attempt that timed out after its commit, then its retry): nothing counted twice.
    expect(await storeChunkVectors(svc.sql, siteId, generation, rows.slice(0, 3))).toBe(passages - 3);
    // A step of a generation the site no longer serves (a re-crawl swapped another in meanwhile) leaves the count alone.
    await storeChunkVectors(svc.sql, siteId, generation - 1, rows.slice(3, 5));
    expect(await waiting()).toBe(passages - 3);
    expect((await vectorsOf(siteId)).embedded).toBe(5);

    // Two attempts filling at once (one timed out, still running beside its retry): each passage subtracted once.
    await svc.sql`update page_chunks set embedding = null where site_id = ${siteId}`;
    await svc.sql`update sites set passages_embedding = ${passages} where id = ${siteId}`;
    const deps = { sql: svc.sql } as CrawlStepDeps;
    const ctx = { heartbeat: () => undefined, signal: new AbortController().signal };
    const both = await Promise.all([fillPassageVectors(deps, { siteId }, ctx), fillPassageVectors(deps, { siteId }, ctx)]);
    expect(both.map((r) => r.stoppedBy)).toEqual(['done', 'done']);
    expect(await vectorsOf(siteId)).toEqual({ passages, embedded: passages });
    expect(await waiting()).toBe(0);
  });

  it('with the sentence encoder off the site is ready with no passage waiting, and the crawl workflow completes', async () => {
    // What the service does with SENTENCE_ENCODER=off (src/service.ts); the flag is the process's, so restored after.
    useSentenceEncoder(false);
    try {
      const { api } = await newOrg(svc);
      const ready = await readySite(api, 'No vectors');
      expect(ready.passages).toBeGreaterThan(0);
      expect(ready.passages_embedding).toBe(0);
      const handle = svc.temporal.workflow.getHandle(workflowIds.crawl(ready.id));
      expect(await handle.result()).toMatchObject({ pages: 6 });
      expect((await handle.describe()).status.name).toBe('COMPLETED');
      const steps = (await handle.fetchHistory()).events!.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
      expect(steps).toEqual(['prepareCrawl', 'runCrawl', 'finishCrawl', 'fillPassageVectors']);
      expect(await vectorsOf(ready.id)).toEqual({ passages: ready.passages, embedded: 0 });

      // A site left waiting by a service that had the encoder on: with it off, none of its passages waits any more.
      await svc.sql`update sites set passages_embedding = ${ready.passages} where id = ${ready.id}`;
      const deps = { sql: svc.sql } as CrawlStepDeps;
      const ctx = { heartbeat: () => undefined, signal: new AbortController().signal };
      expect(await fillPassageVectors(deps, { siteId: ready.id }, ctx)).toEqual({ stored: 0, stoppedBy: 'done' });
      expect((await api.get(`${REST}/sites/${ready.id}`)).body).toMatchObject({ status: 'ready', passages_embedding: 0 });
    } finally {
      useSentenceEncoder(true);
    }
  });

  /** A new agent on the fixture site, and its site once ready (its pages stored and indexed by their words). */
  async function readySite(api: Awaited<ReturnType<typeof newOrg>>['api'], name: string) {
    const agent = (await api.post(`${REST}/agents`, { name, site_url: `${web.url}/` })).body;
    return eventually(async () => {
      const site = (await api.get(`${REST}/sites?widget_id=${agent.id}`)).body.data[0];
      return site?.status === 'ready' && site;
    }, 120_000);
  }

  /** The agent's site once some of its passages have their vector and others still wait. */
  async function fillingSite(api: Awaited<ReturnType<typeof newOrg>>['api'], agentId: string) {
    return eventually(async () => {
      const site = (await api.get(`${REST}/sites?widget_id=${agentId}`)).body.data[0];
      return site?.status === 'ready' && site.passages_embedding > 0 && site.passages_embedding < site.passages && site;
    }, 180_000, 50);
  }

  /** A new organization's agent on the long fixture site, once some of its passages have their vector and others wait. */
  async function agentWithSiteFilling(name: string) {
    const { api } = await newOrg(svc);
    const agent = (await api.post(`${REST}/agents`, { name, site_url: `${long.url}/` })).body;
    return { api, agent, site: await fillingSite(api, agent.id) };
  }

  /** The crawl workflow ended by the delete (terminated), its vectors' activity scheduled once and never failed. */
  async function expectStoppedByDelete(siteId: string) {
    const handle = svc.temporal.workflow.getHandle(workflowIds.crawl(siteId));
    await expect(handle.result()).rejects.toThrow();
    expect((await handle.describe()).status.name).toBe('TERMINATED');
    const events = (await handle.fetchHistory()).events!;
    expect(events.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? [])).toEqual(['prepareCrawl', 'runCrawl', 'finishCrawl', 'fillPassageVectors']);
    expect(events.filter((e) => e.activityTaskFailedEventAttributes || e.activityTaskTimedOutEventAttributes || e.workflowTaskFailedEventAttributes)).toEqual([]);
  }

  it('a site deleted while its vectors are filled: the crawl workflow stops, nothing of the site is left', async () => {
    const { api, agent, site } = await agentWithSiteFilling('Deleted site');
    expect((await api.delete(`${REST}/sites/${site.id}`)).status).toBe(204);
    await expectStoppedByDelete(site.id);
    expect((await api.get(`${REST}/sites/${site.id}`)).status).toBe(404);
    expect(await rowsOf(site.id)).toEqual({ sites: 0, pages: 0, passages: 0 });
    // The agent stays, answering without the site.
    expect((await api.get(`${REST}/agents/${agent.id}`)).status).toBe(200);
  });

  it('an agent deleted while its site\'s vectors are filled: the crawl workflow stops, the purge leaves nothing of the site', async () => {
    const { api, agent, site } = await agentWithSiteFilling('Deleted agent');
    expect((await api.delete(`${REST}/agents/${agent.id}`)).status).toBe(204);
    await expectStoppedByDelete(site.id);
    await svc.temporal.workflow.getHandle(workflowIds.agentPurge(agent.id)).result();
    expect(await rowsOf(site.id)).toEqual({ sites: 0, pages: 0, passages: 0 });
  });
});
