/**
 * Conversations list benchmark: `npm run bench:conversations` (or `node --import tsx bench/conversations.ts`).
 *
 * Seeds BENCH_CONVERSATIONS conversations (default 1,000,000) across 3 organizations and 50
 * agents with set-based SQL (`insert ... select generate_series`, in chunks), about 5 % of them
 * simulations, started over the past year in insertion order (as a live table grows), then times
 * `GET /api/v1/rest/conversations` over HTTP against the real service (API only, a fresh
 * PostgreSQL database, an in-memory Temporal dev server): no filter, `widget_id`, and
 * `simulated=all`, each at offset 0 and 10,000, each answer with its exact `total` (checked
 * against count(*)). One request at a time: the figures are latency, not throughput.
 *
 * Prints p50/p95 per case and the EXPLAIN (ANALYZE, BUFFERS) plans of the list and count
 * queries the service runs. Target on the 2-core reference machine: p95 <= 25 ms for each case.
 *
 * Environment: BENCH_CONVERSATIONS (1000000), BENCH_REQUESTS (200 measured per case),
 * BENCH_WARMUP (20 per case), BENCH_VACUUM (1: VACUUM ANALYZE after seeding, what autovacuum
 * does soon after a bulk load; 0: only ANALYZE, so that index-only scans must visit the heap),
 * BENCH_PLANS (1: print the plans), TEST_PG_URL (PostgreSQL server, default
 * postgres://postgres@127.0.0.1:5432/postgres; an embedded one is started when it does not answer).
 */
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../src/config.ts';
import { freshDatabase, onCleanup, percentile, positiveInt, say, startTemporal, runBenchmark } from './harness.ts';
import { createLogger } from '../src/logger.ts';
import { startService, type Service } from '../src/service.ts';
import { createOrganization } from '../src/auth/keys.ts';
import { insertAgent } from '../src/db/agents.ts';
import { conversationListQueries } from '../src/db/conversations.ts';
import type { Sql } from '../src/db/index.ts';

const CONVERSATIONS = positiveInt('BENCH_CONVERSATIONS', 1_000_000);
const REQUESTS = positiveInt('BENCH_REQUESTS', 200);
const WARMUP = positiveInt('BENCH_WARMUP', 20);
const VACUUM = process.env.BENCH_VACUUM !== '0';
const PLANS = process.env.BENCH_PLANS !== '0';
const ORGS = 3;
const AGENTS = 50;
const CHUNK = 100_000;
const TARGET_P95_MS = 25;

interface Org { id: string; token: string; agents: string[] }

async function seedOrganizations(sql: Sql): Promise<Org[]> {
  const orgs: Org[] = [];
  for (let i = 0; i < ORGS; i++) {
    const org = await sql.begin((tx) => createOrganization(tx, `bench-${i}-${randomBytes(3).toString('hex')}`));
    orgs.push({ id: org.org_id, token: org.token, agents: [] });
  }
  for (let i = 0; i < AGENTS; i++) {
    const org = orgs[i % ORGS]!;
    org.agents.push((await insertAgent(sql, org.id, { name: `Agent ${i}` })).id);
  }
  return orgs;
}

/**
 * Conversation `i` (1..N) belongs to agent `i % 50`, starts at a time rising with `i` over the past
 * year (ids are v7-like UUIDs of that time), lasts 30 s to 15 min; 13 in 256 (5 %) are simulations, by a hash.
 */
async function seedConversations(sql: Sql, orgs: Org[]): Promise<void> {
  const agents = orgs.flatMap((o) => o.agents.map((a) => ({ org: o.id, agent: a })));
  await sql`create temporary table bench_agents (n int primary key, org_id uuid not null, agent_id uuid not null)`;
  await sql`insert into bench_agents ${sql(agents.map((a, n) => ({ n, org_id: a.org, agent_id: a.agent })))}`;
  const began = Date.now();
  for (let from = 1; from <= CONVERSATIONS; from += CHUNK) {
    const to = Math.min(CONVERSATIONS, from + CHUNK - 1);
    await sql`
      insert into conversations (id, org_id, agent_id, surface, is_simulated, started_at, ended_at, last_activity_at, status,
        ended_reason, page_url, intent, outcome, extracted_data, criteria_results, evaluation_status, evaluated_at)
      select
        (lpad(to_hex((extract(epoch from s.started_at) * 1000)::bigint), 12, '0') || '7' || substr(h, 1, 3) || '8' || substr(h, 4, 15))::uuid,
        a.org_id, a.agent_id,
        (array['web','web','web','web','web','web','web','web','web','web','web','web','phone','phone','phone','phone','sms','sms','email','campaign'])[1 + s.b1 % 20],
        s.b0 < 13, s.started_at, s.started_at + s.length, s.started_at + s.length, 'ended', 'visitor',
        'https://shop.example/products/' || (g % 500), (array['pricing_question','book_demo','support','other'])[1 + g % 4],
        (array['resolved','unresolved','handoff_requested','abandoned'])[1 + g % 4],
        jsonb_build_object('email', 'visitor' || g || '@example.com', 'company', 'Company ' || (g % 1000)),
        jsonb_build_array(jsonb_build_object('criterion', 'Collect an email', 'verdict', 'pass', 'reason', '')),
        'completed', s.started_at + s.length + interval '5 seconds'
      from generate_series(${from}::int, ${to}::int) g
      cross join lateral (select md5(g::text) as h, get_byte(decode(md5(g::text), 'hex'), 0) as b0, get_byte(decode(md5(g::text), 'hex'), 1) as b1,
        now() - interval '365 days' * (1 - g::float8 / ${CONVERSATIONS}) as started_at,
        make_interval(secs => 30 + (g::bigint * 7919) % 870) as length) s
      join bench_agents a on a.n = g % ${agents.length}`;
    say(`  ${to.toLocaleString('en')} conversations (${((Date.now() - began) / 1000).toFixed(1)} s)`);
  }
  const vacuumStarted = Date.now();
  if (VACUUM) await sql`vacuum (analyze) conversations`;
  else await sql`analyze conversations`;
  await sql`analyze conversation_counts`;
  say(`  ${VACUUM ? 'vacuum analyze' : 'analyze'}: ${((Date.now() - vacuumStarted) / 1000).toFixed(1)} s`);
}

interface Case { name: string; org: Org; query: (i: number) => string; filter: (i: number) => { widget_id?: string; simulated?: '1' | 'all' }; offset: number }

function cases(org: Org): Case[] {
  const out: Case[] = [];
  for (const offset of [0, 10_000]) {
    out.push({ name: `no filter, offset ${offset}`, org, offset, query: () => '', filter: () => ({}) });
    out.push({
      name: `widget_id, offset ${offset}`, org, offset,
      query: (i) => `&widget_id=${org.agents[i % org.agents.length]}`, filter: (i) => ({ widget_id: org.agents[i % org.agents.length]! }),
    });
    out.push({ name: `simulated=all, offset ${offset}`, org, offset, query: () => '&simulated=all', filter: () => ({ simulated: 'all' }) });
  }
  return out;
}

/** The exact total the service must answer, by count(*). */
async function expectedTotal(sql: Sql, orgId: string, f: { widget_id?: string; simulated?: '1' | 'all' }): Promise<number> {
  const agent = f.widget_id ? sql`and agent_id = ${f.widget_id}` : sql``;
  const sim = f.simulated === 'all' ? sql`` : sql`and is_simulated = ${f.simulated === '1'}`;
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from conversations where org_id = ${orgId} ${agent} ${sim}`;
  return row!.n;
}


async function measure(base: string, c: Case, totals: Map<string, number>): Promise<number[]> {
  const headers = { authorization: `Bearer ${c.org.token}` };
  const times: number[] = [];
  for (let i = 0; i < WARMUP + REQUESTS; i++) {
    const url = `${base}/api/v1/rest/conversations?limit=50&offset=${c.offset}${c.query(i)}`;
    const started = performance.now();
    const res = await fetch(url, { headers });
    const body = await res.json() as { data: unknown[]; total: number };
    const elapsed = performance.now() - started;
    if (res.status !== 200) throw new Error(`${c.name}: ${res.status} ${JSON.stringify(body)}`);
    const expected = totals.get(url.replace(/&offset=\d+/, ''));
    if (expected !== undefined && body.total !== expected) throw new Error(`${c.name}: total ${body.total}, count(*) says ${expected}`);
    if (body.data.length !== 50) throw new Error(`${c.name}: ${body.data.length} rows`);
    if (i >= WARMUP) times.push(elapsed);
  }
  return times.sort((a, b) => a - b);
}

async function printPlans(sql: Sql, c: Case): Promise<void> {
  const queries = conversationListQueries(sql, c.org.id, { ...c.filter(0), limit: 50, offset: c.offset });
  const show = async (what: string, query: typeof queries.rows | typeof queries.total) => {
    const plan = await sql<{ 'QUERY PLAN': string }[]>`explain (analyze, buffers) ${query}`;
    say(`--- ${c.name}: ${what}`);
    for (const line of plan) say(`    ${line['QUERY PLAN']}`);
  };
  await show('list query', queries.rows);
  if (c.offset === 0) await show('count query', queries.total);
}

async function main(): Promise<void> {
  say('Starting PostgreSQL database and Temporal dev server...');
  const [databaseUrl, temporalAddress] = await Promise.all([freshDatabase(), startTemporal()]);
  const config = loadConfig(process.env, { PORT: 0, HOST: '127.0.0.1', LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: 1_000_000_000 });
  const service: Service = await startService({ config, databaseUrl, temporalAddress, log: createLogger(config.LOG_LEVEL), api: true, worker: false });
  onCleanup('service', () => service.stop());
  const { sql } = service;

  const [{ version }] = await sql<[{ version: string }]>`select current_setting('server_version') as version`;
  say(`PostgreSQL ${version}; seeding ${CONVERSATIONS.toLocaleString('en')} conversations, ${ORGS} organizations, ${AGENTS} agents`);
  const orgs = await seedOrganizations(sql);
  await seedConversations(sql, orgs);

  const org = orgs[0]!;
  const all = cases(org);
  // Every total the cases will see, by count(*): the service's answer must equal it.
  const totals = new Map<string, number>();
  for (const c of all) {
    for (let i = 0; i < (c.filter(0).widget_id ? org.agents.length : 1); i++) {
      const key = `${service.url}/api/v1/rest/conversations?limit=50${c.query(i)}`;
      if (!totals.has(key)) totals.set(key, await expectedTotal(sql, org.id, c.filter(i)));
    }
  }
  const orgTotal = totals.get(`${service.url}/api/v1/rest/conversations?limit=50`)!;
  say(`organization under test: ${orgTotal.toLocaleString('en')} real conversations, ${org.agents.length} agents`);

  const rows: string[][] = [['case', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms', `p95 <= ${TARGET_P95_MS} ms`]];
  for (const c of all) {
    const times = await measure(service.url!, c, totals);
    const p95 = percentile(times, 95);
    rows.push([c.name, ...[50, 95, 99, 100].map((p) => percentile(times, p).toFixed(1)), p95 <= TARGET_P95_MS ? 'met' : 'MISSED']);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  say();
  say(`GET /api/v1/rest/conversations, limit 50, ${REQUESTS} requests per case after ${WARMUP} warm-up, one at a time, totals checked`);
  for (const [n, row] of rows.entries()) {
    say(row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  '));
    if (n === 0) say(widths.map((w) => '-'.repeat(w)).join('  '));
  }
  if (PLANS) {
    say();
    for (const c of all) await printPlans(sql, c);
  }
}

await runBenchmark(main);
