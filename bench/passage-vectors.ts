/**
 * The knowledge store's side of filling a site's passages' vectors after it is ready (issue 48, branch crawl-8):
 * `node --import tsx bench/passage-vectors.ts`. A site of BENCH_PASSAGES passages (default 400) in a scratch database,
 * filled as `fillPassageVectors` does (steps of 16: read the step's passages, store their vectors and the site's count
 * of those still waiting), with stand-in vectors of 2 KiB: the encoder (40-80 ms a passage) is the same before and
 * after and would hide the store. Rounds alternate the store of e41d5b3 (before: the count of the passages left read
 * again in every step) and this tree's (after: counted once, each step subtracting what it stored), each on the site
 * emptied of its vectors again. Prints, per fill: statements, wall time, PostgreSQL's CPU, and the count it ended at.
 * BENCH_ROUNDS (default 3).
 */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { cpuSnapshot, freshDatabase, median, positiveInt, runBenchmark, say } from './harness.ts';
import { migrate, type Sql } from '../src/db/index.ts';
import { chunksWithoutVectors, countChunksWaiting, insertFetchedPage, storeChunkVectors } from '../src/db/site-pages.ts';
import { createOrganization } from '../src/auth/keys.ts';
import { newId } from '../src/ids.ts';

const PASSAGES = positiveInt('BENCH_PASSAGES', 400);
const ROUNDS = positiveInt('BENCH_ROUNDS', 3);
const STEP = 16;
const PER_PAGE = 10;

/** e41d5b3's store (before): the site's passages left without a vector counted again in every step. */
async function storeAndRecount(sql: Sql, siteId: string, generation: number, vectors: { id: string; embedding: Buffer }[], afterId: string): Promise<void> {
  await sql.begin(async (tx) => {
    await Promise.all(vectors.map((v) => tx`update page_chunks set embedding = ${v.embedding} where id = ${v.id}::bigint and site_id = ${siteId}`));
    await tx`update sites set passages_embedding = (select count(*)::int from page_chunks
        where site_id = ${siteId} and generation = ${generation} and embedding is null and id > ${afterId}::bigint)
      where id = ${siteId} and generation = ${generation}`;
  });
}

async function fill(sql: Sql, siteId: string, how: 'before' | 'after'): Promise<void> {
  let afterId = '0';
  if (how === 'after') await countChunksWaiting(sql, siteId, 1, afterId);
  for (;;) {
    const rows = await chunksWithoutVectors(sql, siteId, 1, afterId, STEP);
    const vectors = rows.map((r) => ({ id: r.id, embedding: randomBytes(2048) }));
    const last = rows.at(-1)?.id ?? afterId;
    if (how === 'before') await storeAndRecount(sql, siteId, 1, vectors, last);
    else await storeChunkVectors(sql, siteId, 1, vectors);
    afterId = last;
    if (rows.length < STEP) return;
  }
}

async function main(): Promise<void> {
  const url = await freshDatabase();
  let statements = 0;
  const sql = postgres(url, { max: 4, onnotice: () => {}, debug: () => { statements++; } }) as unknown as Sql;
  try {
    await migrate(sql);
    const org = await sql.begin((tx) => createOrganization(tx, 'bench'));
    const kbId = newId();
    const siteId = newId();
    await sql`insert into knowledge_bases (id, org_id, name) values (${kbId}, ${org.org_id}, 'bench')`;
    await sql`insert into sites (id, org_id, kb_id, url, status, generation) values (${siteId}, ${org.org_id}, ${kbId}, 'https://bench.test/', 'ready', 1)`;
    const text = (i: number, k: number) => `Passage ${k} of page ${i}: ${'words of the bench site '.repeat(24)}`.slice(0, 600);
    for (let i = 0; i * PER_PAGE < PASSAGES; i++) {
      const chunks = Array.from({ length: Math.min(PER_PAGE, PASSAGES - i * PER_PAGE) }, (_, k) => ({ text: text(i, k), section: null }));
      await insertFetchedPage(sql, siteId, 1, {
        url: `https://bench.test/${i}`, depth: 1, title: `Page ${i}`, statusCode: 200, text: chunks.map((c) => c.text).join('\n'),
        contentHash: String(i), etag: null, lastModified: null, links: [], fetchedAt: new Date(),
      }, chunks);
    }
    await sql`vacuum analyze page_chunks`;
    const dbName = new URL(url).pathname.slice(1);
    const figures = { before: [] as number[], after: [] as number[] };
    for (let round = 1; round <= ROUNDS; round++) {
      for (const how of ['before', 'after'] as const) {
        await sql`update page_chunks set embedding = null where site_id = ${siteId}`;
        await sql`update sites set passages_embedding = ${PASSAGES} where id = ${siteId}`;
        const cpu = cpuSnapshot(dbName);
        statements = 0;
        const started = performance.now();
        await fill(sql, siteId, how);
        const ms = performance.now() - started;
        const cpuAfter = cpuSnapshot(dbName);
        let pgCpu = 0;
        for (const [pid, s] of cpuAfter.postgres) pgCpu += s - (cpu.postgres.get(pid) ?? 0);
        const [left] = await sql<{ passages_embedding: number }[]>`select passages_embedding from sites where id = ${siteId}`;
        figures[how].push(ms);
        say(`round ${round} ${how}: ${PASSAGES} passages, ${statements} statements, ${ms.toFixed(0)} ms (${(ms / PASSAGES).toFixed(2)} ms a passage), ` +
          `PostgreSQL CPU ${(pgCpu * 1000).toFixed(0)} ms, passages_embedding ended at ${left!.passages_embedding}`);
      }
    }
    say(`median fill: before ${median(figures.before).toFixed(0)} ms, after ${median(figures.after).toFixed(0)} ms (${PASSAGES} passages)`);
  } finally {
    await sql.end();
  }
}

await runBenchmark(main);
