/**
 * Conversation search benchmark (issue 45 item 5): `npm run bench:search` (or `node --import tsx bench/search.ts`).
 *
 * Seeds BENCH_CONVERSATIONS conversations (default 1,000,000) with BENCH_MESSAGES_PER_CONVERSATION messages each
 * (default 10: 10,000,000 messages) across 3 organizations and 30 agents, in set-based SQL: a table of 100,000
 * sentences of 8 words drawn from an 8,000-word vocabulary with Zipf-like frequencies (log-uniform ranks), each
 * sentence's vector computed once; then, in chunks, conversations over the past year whose `transcript_tsv` is
 * the concatenation of their messages' sentence vectors, and the messages themselves. Triggers are off for the
 * load (`session_replication_role = replica`: what a bulk restore does) and the GIN index is built after it.
 *
 * Then times `GET /api/v1/rest/conversations?q=<two words>&from=&to=` over HTTP against the real service (API
 * only, a fresh PostgreSQL database, an in-memory Temporal dev server): two words drawn from ranks 50 to 2,000 (see searchCase)
 * and a 30-day range at a random place in the year (BENCH_RANK_FROM, BENCH_RANK_TO), one request at a time; each answer's `total` is checked
 * against count(*) for the first requests. Prints p50/p95/p99 against the target p95 <= 100 ms, and one plan.
 *
 * Environment: BENCH_CONVERSATIONS (1000000), BENCH_MESSAGES_PER_CONVERSATION (10), BENCH_REQUESTS (200),
 * BENCH_WARMUP (20), BENCH_PLANS (1), TEST_PG_URL (PostgreSQL server, default postgres://postgres@127.0.0.1:5432/postgres).
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
const PER_CONVERSATION = positiveInt('BENCH_MESSAGES_PER_CONVERSATION', 10);
const REQUESTS = positiveInt('BENCH_REQUESTS', 200);
const WARMUP = positiveInt('BENCH_WARMUP', 20);
const PLANS = process.env.BENCH_PLANS !== '0';
const ORGS = 3;
const AGENTS = 30;
const CHUNK = 50_000;
const SENTENCES = 100_000;
const VOCABULARY = 8_000;
const TARGET_P95_MS = 100;
const RANK_FROM = positiveInt('BENCH_RANK_FROM', 50);
const RANK_TO = positiveInt('BENCH_RANK_TO', 2_000);
const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'ta', 'vo', 'zi', 'pe', 'so', 'da', 'fu', 'gi', 'ho', 'ju', 'be', 'ni', 'ra', 'te', 'wu'];

interface Org { id: string; token: string; agents: string[] }

/** Word of rank `r` (1 = the most frequent): three syllables, one per base-20 digit. */
const word = (r: number) => SYLLABLES[r % 20]! + SYLLABLES[Math.floor(r / 20) % 20]! + SYLLABLES[Math.floor(r / 400) % 20]!;
const wordSql = (rank: string) => `(${sylArray}[1 + ${rank} % 20] || ${sylArray}[1 + (${rank} / 20) % 20] || ${sylArray}[1 + (${rank} / 400) % 20])`;
const sylArray = `(array[${SYLLABLES.map((s) => `'${s}'`).join(',')}])`;

async function seedOrganizations(sql: Sql): Promise<Org[]> {
  const orgs: Org[] = [];
  for (let i = 0; i < ORGS; i++) {
    const org = await sql.begin((tx) => createOrganization(tx, `search-${i}-${randomBytes(3).toString('hex')}`));
    orgs.push({ id: org.org_id, token: org.token, agents: [] });
  }
  for (let i = 0; i < AGENTS; i++) {
    const org = orgs[i % ORGS]!;
    org.agents.push((await insertAgent(sql, org.id, { name: `Agent ${i}` })).id);
  }
  return orgs;
}

async function seed(sql: Sql, orgs: Org[]): Promise<void> {
  const agents = orgs.flatMap((o) => o.agents.map((a) => ({ org: o.id, agent: a })));
  const began = Date.now();
  const elapsed = () => `${((Date.now() - began) / 1000).toFixed(1)} s`;
  await sql`create table bench_agents (n int primary key, org_id uuid not null, agent_id uuid not null)`;
  await sql`insert into bench_agents ${sql(agents.map((a, n) => ({ n, org_id: a.org, agent_id: a.agent })))}`;
  await sql.unsafe(`create table bench_sentences as
    select n, string_agg(${wordSql('w.r')}, ' ') as text, null::tsvector as tsv
    from generate_series(0, ${SENTENCES - 1}) n
    cross join lateral (select floor(exp(random() * ln(${VOCABULARY})))::int + 0 * n as r from generate_series(1, 8)) w
    group by n`);
  await sql`update bench_sentences set tsv = to_tsvector('english', text)`;
  await sql`alter table bench_sentences add primary key (n)`;
  say(`  ${SENTENCES.toLocaleString('en')} sentences (${elapsed()})`);
  await sql`drop index conversations_transcript`;
  // What the conversations trigger records (off during the load): every organization's messages are read as English.
  await sql`insert into conversation_languages (org_id, config) select distinct org_id, 'english'::regconfig from bench_agents on conflict do nothing`;
  for (let from = 1; from <= CONVERSATIONS; from += CHUNK) {
    const to = Math.min(CONVERSATIONS, from + CHUNK - 1);
    await sql.begin(async (tx) => {
      await tx`set local session_replication_role = replica`;
      await tx`create temporary table chunk on commit drop as
        select g, s.started_at, a.org_id, a.agent_id,
          (lpad(to_hex((extract(epoch from s.started_at) * 1000)::bigint), 12, '0') || '7' || substr(s.h, 1, 3) || '8' || substr(s.h, 4, 15))::uuid as id
        from generate_series(${from}::int, ${to}::int) g
        cross join lateral (select md5(g::text) as h, now() - interval '365 days' * (1 - g::float8 / ${CONVERSATIONS}) as started_at) s
        join bench_agents a on a.n = g % ${agents.length}`;
      await tx`insert into conversations (id, org_id, agent_id, surface, started_at, ended_at, last_activity_at, status, ended_reason,
          language, transcript_tsv)
        select c.id, c.org_id, c.agent_id, 'web', c.started_at, c.started_at + interval '5 minutes', c.started_at + interval '5 minutes',
          'ended', 'visitor', 'en',
          (select ams_tsvector_agg(b.tsv order by k) from generate_series(0, ${PER_CONVERSATION - 1}) k
            join bench_sentences b on b.n = abs(hashint8(c.g::bigint * 64 + k)) % ${SENTENCES})
        from chunk c`;
      await tx`insert into conversation_messages (id, conversation_id, role, text, ts, language)
        select (lpad(to_hex((extract(epoch from c.started_at + k * interval '20 seconds') * 1000)::bigint), 12, '0') || '7'
            || substr(md5(c.g || ':' || k), 1, 3) || '8' || substr(md5(c.g || ':' || k), 4, 15))::uuid,
          c.id, case when k % 2 = 0 then 'visitor' else 'agent' end, b.text, c.started_at + k * interval '20 seconds', 'en'
        from chunk c cross join generate_series(0, ${PER_CONVERSATION - 1}) k
        join bench_sentences b on b.n = abs(hashint8(c.g::bigint * 64 + k)) % ${SENTENCES}`;
    });
    if (to % 200_000 === 0 || to === CONVERSATIONS) say(`  ${to.toLocaleString('en')} conversations, ${(to * PER_CONVERSATION).toLocaleString('en')} messages (${elapsed()})`);
  }
  await sql`set maintenance_work_mem = '512MB'`;
  await sql`create index conversations_transcript on conversations using gin (transcript_tsv)`;
  say(`  GIN index built (${elapsed()})`);
  await sql`vacuum (analyze) conversations`;
  await sql`analyze conversation_messages`;
  say(`  vacuum analyze (${elapsed()})`);
}

/**
 * A two-word query and a 30-day range somewhere in the past year. The words are drawn from ranks 50 to 2,000
 * (log-uniform): each occurs in about 12 % (rank 50) to 0.3 % (rank 2,000) of the transcripts. The 50 most
 * frequent words occur in 12 % to 60 % of them: they play the part of the stop words a real language's
 * configuration drops, and nobody searches for them.
 */
function searchCase(): { q: string; from: string; to: string } {
  const rank = () => Math.floor(Math.exp(Math.log(RANK_FROM) + Math.random() * (Math.log(RANK_TO) - Math.log(RANK_FROM))));
  const a = rank();
  let b = rank();
  while (b === a) b = rank();
  const end = Date.now() - Math.random() * 335 * 86_400_000;
  return { q: `${word(a)} ${word(b)}`, from: new Date(end - 30 * 86_400_000).toISOString(), to: new Date(end).toISOString() };
}

async function main(): Promise<void> {
  say('Starting PostgreSQL database and Temporal dev server...');
  const [databaseUrl, temporalAddress] = await Promise.all([freshDatabase(), startTemporal()]);
  const config = loadConfig(process.env, { PORT: 0, HOST: '127.0.0.1', LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: 1_000_000_000, SMTP_LISTEN_PORT: 0 });
  const service: Service = await startService({ config, databaseUrl, temporalAddress, log: createLogger(config.LOG_LEVEL), api: true, worker: false });
  onCleanup('service', () => service.stop());
  const { sql } = service;
  const [{ version }] = await sql<[{ version: string }]>`select current_setting('server_version') as version`;
  say(`words of ranks ${RANK_FROM} to ${RANK_TO} of ${VOCABULARY}`);
  say(`PostgreSQL ${version}; seeding ${CONVERSATIONS.toLocaleString('en')} conversations and ${(CONVERSATIONS * PER_CONVERSATION).toLocaleString('en')} messages`);
  const seedStarted = Date.now();
  const orgs = await seedOrganizations(sql);
  await seed(sql, orgs);
  say(`seeded in ${((Date.now() - seedStarted) / 1000).toFixed(0)} s`);

  const org = orgs[0]!;
  const headers = { authorization: `Bearer ${org.token}` };
  const times: number[] = [];
  const matches: number[] = [];
  for (let i = 0; i < WARMUP + REQUESTS; i++) {
    const c = searchCase();
    const url = `${service.url}/api/v1/rest/conversations?limit=50&q=${encodeURIComponent(c.q)}&from=${c.from}&to=${c.to}`;
    const started = performance.now();
    const res = await fetch(url, { headers });
    const body = await res.json() as { data: unknown[]; total: number };
    const took = performance.now() - started;
    if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(body)}`);
    if (i < 10) {
      const [row] = await sql<[{ n: number }]>`select count(*)::int as n from conversations where org_id = ${org.id} and not is_simulated
        and started_at >= ${new Date(c.from)} and started_at < ${new Date(c.to)} and transcript_tsv @@ ams_search_query(${c.q}, array['english']::regconfig[])`;
      if (row.n !== body.total) throw new Error(`"${c.q}": total ${body.total}, count(*) says ${row.n}`);
    }
    if (i >= WARMUP) { times.push(took); matches.push(body.total); }
  }
  times.sort((a, b) => a - b);
  matches.sort((a, b) => a - b);
  const p95 = percentile(times, 95);
  say();
  say(`GET /api/v1/rest/conversations?q=<two words>&from=&to= (30 days), limit 50, ${REQUESTS} requests after ${WARMUP} warm-up, one at a time`);
  say(`  organization under test: ${Math.round(CONVERSATIONS / ORGS).toLocaleString('en')} conversations; matches per query: median ${percentile(matches, 50)}, p95 ${percentile(matches, 95)}`);
  say(`  p50 ${percentile(times, 50).toFixed(1)} ms  p95 ${p95.toFixed(1)} ms  p99 ${percentile(times, 99).toFixed(1)} ms  max ${times[times.length - 1]!.toFixed(1)} ms`);
  say(`  target p95 <= ${TARGET_P95_MS} ms: ${p95 <= TARGET_P95_MS ? 'met' : 'MISSED'}`);
  if (PLANS) {
    const c = searchCase();
    const queries = conversationListQueries(sql, org.id, { q: c.q, from: c.from, to: c.to, configs: ['english'], limit: 50, offset: 0 });
    for (const [what, query] of [['list query', queries.rows], ['count query', queries.total]] as const) {
      const plan = await sql<{ 'QUERY PLAN': string }[]>`explain (analyze, buffers) ${query}`;
      say(`--- "${c.q}", ${what}`);
      for (const line of plan) say(`    ${line['QUERY PLAN']}`);
    }
  }
}

await runBenchmark(main);
