import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCrawlActivities } from '../activities/crawl.ts';
import type { ActivityDeps } from '../activities/index.ts';
import { insertAgent } from '../src/db/agents.ts';
import { insertSite, setSiteUrl } from '../src/db/sites.ts';
import { startTestService, type TestService } from './helpers.ts';

/**
 * Found by the production rehearsal (bench/rehearsal.ts): a crawl is started inside the
 * transaction that inserts its site, and on a loaded server its first activity ran before that
 * commit, found no site, ended the workflow as if the site were deleted, and left it `queued`.
 */
let svc: TestService;
beforeAll(async () => { svc = await startTestService({}, { worker: false }); });
afterAll(async () => { await svc?.stop(); });

describe('a crawl started before its site is committed', () => {
  it('waits for the site instead of taking it for deleted', async () => {
    const { orgId } = await svc.newOrg();
    const agent = await insertAgent(svc.sql, orgId, { name: 'Racer' });
    const activities = createCrawlActivities({ sql: svc.sql } as unknown as ActivityDeps);
    let inserted!: (id: string) => void;
    const siteId = new Promise<string>((resolve) => { inserted = resolve; });
    const transaction = svc.sql.begin(async (tx) => {
      inserted((await insertSite(tx, orgId, { url: 'https://example.com/', agentId: agent.id })).id);
      await new Promise((resolve) => setTimeout(resolve, 1500)); // the API's commit, late
    });
    const prepared = await activities.prepareCrawl({ siteId: await Promise.race([siteId, transaction.then(() => '')]) });
    await transaction;
    expect(prepared).toEqual({ url: 'https://example.com/', generation: 1 });
    expect((await svc.sql`select status from sites where id = ${await siteId}`)[0]!.status).toBe('crawling');
  });

  // Found by a newcomer's run of the suite: POST /agents/:id/site restarts the crawl inside the transaction
  // that moves the site, and the new crawl read the old URL, crawled the old site and marked it ready.
  it('started by pointing its site elsewhere, it crawls the new URL, not the old one', async () => {
    const { orgId } = await svc.newOrg();
    const agent = await insertAgent(svc.sql, orgId, { name: 'Mover' });
    const site = await insertSite(svc.sql, orgId, { url: 'https://old.example.com/', agentId: agent.id });
    const activities = createCrawlActivities({ sql: svc.sql } as unknown as ActivityDeps);
    let moved!: () => void;
    const movedNow = new Promise<void>((resolve) => { moved = resolve; });
    const transaction = svc.sql.begin(async (tx) => {
      await setSiteUrl(tx, site.id, 'https://new.example.com/');
      moved();
      await new Promise((resolve) => setTimeout(resolve, 1000)); // the API's commit, late
    });
    await movedNow;
    const prepared = await activities.prepareCrawl({ siteId: site.id });
    await transaction;
    expect(prepared).toEqual({ url: 'https://new.example.com/', generation: 1 });
  });
});
