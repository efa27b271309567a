import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCrawlActivities } from '../activities/crawl.ts';
import type { ActivityDeps } from '../activities/index.ts';
import { insertAgent } from '../src/db/agents.ts';
import { holdUntilCommit } from '../src/db/commit-gate.ts';
import type { Db } from '../src/db/index.ts';
import { insertSite, setSiteUrl } from '../src/db/sites.ts';
import { workflowIds } from '../src/temporal/ids.ts';
import { eventually, startTestService, type TestService } from './helpers.ts';

/**
 * Found by the production rehearsal (bench/rehearsal.ts): a crawl is started inside the
 * transaction that inserts its site, and on a loaded server its first activity ran before that
 * commit, found no site, ended the workflow as if the site were deleted, and left it `queued`.
 * The start holds the crawl's commit gate (`src/db/commit-gate.ts`) as `startCrawl` does; the
 * activity's read waits at it until the transaction ends. Each test releases the transaction only
 * once the read is seen waiting (pg_locks), so the race is the one production has, every time.
 */
let svc: TestService;
beforeAll(async () => { svc = await startTestService({}, { worker: false }); });
afterAll(async () => { await svc?.stop(); });

/** Whether a crawl activity is waiting at the commit gate now. */
async function waitingAtGate(): Promise<boolean> {
  const rows = await svc.sql`select 1 from pg_locks where locktype = 'advisory' and not granted
    and database = (select oid from pg_database where datname = current_database())`;
  return rows.length > 0;
}

/** A transaction that writes with `write`, holds the crawl's gate as startCrawl does, and ends when `end` says. */
function startingTransaction(write: (tx: Db) => Promise<string>, end: Promise<'commit' | 'rollback'>) {
  let written!: (id: string) => void;
  const siteId = new Promise<string>((resolve) => { written = resolve; });
  const done = svc.sql.begin(async (tx) => {
    const id = await write(tx);
    await holdUntilCommit(tx, workflowIds.crawl(id));
    written(id);
    if ((await end) === 'rollback') throw new Error('rolled back');
  }).catch((err: Error) => { if (err.message !== 'rolled back') throw err; });
  return { siteId, done };
}

describe('a crawl started before its site is committed', () => {
  it('waits for the site instead of taking it for deleted', async () => {
    const { orgId } = await svc.newOrg();
    const agent = await insertAgent(svc.sql, orgId, { name: 'Racer' });
    const activities = createCrawlActivities({ sql: svc.sql } as unknown as ActivityDeps);
    let end!: (how: 'commit' | 'rollback') => void;
    const { siteId, done } = startingTransaction(async (tx) => (await insertSite(tx, orgId, { url: 'https://example.com/', agentId: agent.id })).id,
      new Promise((resolve) => { end = resolve; }));
    const preparing = activities.prepareCrawl({ siteId: await siteId });
    await eventually(waitingAtGate);
    end('commit');
    await done;
    expect(await preparing).toEqual({ url: 'https://example.com/', generation: 1 });
    expect((await svc.sql`select status from sites where id = ${await siteId}`)[0]!.status).toBe('crawling');
  });

  it('finds no site when the transaction that started it rolled back', async () => {
    const { orgId } = await svc.newOrg();
    const agent = await insertAgent(svc.sql, orgId, { name: 'Undone' });
    const activities = createCrawlActivities({ sql: svc.sql } as unknown as ActivityDeps);
    let end!: (how: 'commit' | 'rollback') => void;
    const { siteId, done } = startingTransaction(async (tx) => (await insertSite(tx, orgId, { url: 'https://example.com/', agentId: agent.id })).id,
      new Promise((resolve) => { end = resolve; }));
    const preparing = activities.prepareCrawl({ siteId: await siteId });
    await eventually(waitingAtGate);
    end('rollback');
    await done;
    expect(await preparing).toBeNull();
  });

  // Found by a newcomer's run of the suite: POST /agents/:id/site restarts the crawl inside the transaction
  // that moves the site, and the new crawl read the old URL, crawled the old site and marked it ready.
  it('started by pointing its site elsewhere, it crawls the new URL, not the old one', async () => {
    const { orgId } = await svc.newOrg();
    const agent = await insertAgent(svc.sql, orgId, { name: 'Mover' });
    const site = await insertSite(svc.sql, orgId, { url: 'https://old.example.com/', agentId: agent.id });
    const activities = createCrawlActivities({ sql: svc.sql } as unknown as ActivityDeps);
    let end!: (how: 'commit' | 'rollback') => void;
    const { siteId, done } = startingTransaction(async (tx) => { await setSiteUrl(tx, site.id, 'https://new.example.com/'); return site.id; },
      new Promise((resolve) => { end = resolve; }));
    const preparing = activities.prepareCrawl({ siteId: await siteId });
    await eventually(waitingAtGate);
    end('commit');
    await done;
    expect(await preparing).toEqual({ url: 'https://new.example.com/', generation: 1 });
  });
});
