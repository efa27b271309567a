/**
 * Erase benchmark (issue 47): `npm run bench:governance` (or `node --import tsx bench/governance.ts`).
 *
 * The real service (API and workers in this process, a fresh PostgreSQL database, an in-memory
 * Temporal dev server). One contact with BENCH_CONVERSATIONS conversations (default 1,000), each
 * with BENCH_MESSAGES messages (default 10), a note and captured data naming the person, plus
 * webhook events naming it; then `POST /contacts/:id/erase`, timed from the request to the answer
 * (the database erase, in one transaction), and separately to the end of the workflow that deletes
 * the conversations' Temporal histories. Target: the erase answers in < 10 s.
 */
import { randomBytes } from 'node:crypto';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { startService } from '../src/service.ts';
import { createOrganization } from '../src/auth/keys.ts';
import { freshDatabase, onCleanup, positiveInt, runBenchmark, say, startTemporal } from './harness.ts';

const CONVERSATIONS = positiveInt('BENCH_CONVERSATIONS', 1000);
const MESSAGES = positiveInt('BENCH_MESSAGES', 10);
const TARGET_SECONDS = 10;

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  say('Starting PostgreSQL database and Temporal dev server...');
  const [databaseUrl, temporalAddress] = await Promise.all([freshDatabase(), startTemporal()]);
  const config = loadConfig(process.env, { PORT: 0, HOST: '127.0.0.1', LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: 1_000_000_000, SMTP_LISTEN_PORT: 0 });
  const service = await startService({ config, databaseUrl, temporalAddress, log: createLogger(config.LOG_LEVEL), api: true, worker: true });
  onCleanup('service', () => service.stop());
  const { sql } = service;
  const base = `${service.url!}/api/v1/rest`;
  const org = await sql.begin((tx) => createOrganization(tx, 'bench-governance'));
  const headers = { authorization: `Bearer ${org.token}`, 'content-type': 'application/json' };
  const post = async (path: string, body: unknown = {}) => {
    const res = await fetch(base + path, { method: 'POST', headers, body: JSON.stringify(body) });
    const json = await res.json() as Record<string, any>;
    if (res.status >= 300) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const agent = await post('/agents', { name: 'Bench desk' });
  const email = `bench-${randomBytes(4).toString('hex')}@example.com`;
  const phone = '+14155550142';
  const contact = await post('/contacts', { email_lower: email, phone_e164: phone, first_name: 'Bench' });

  say(`Seeding ${CONVERSATIONS.toLocaleString('en')} conversations of one contact, ${MESSAGES} messages each...`);
  await sql`insert into conversations (id, org_id, agent_id, surface, status, started_at, ended_at, last_activity_at, contact_id, captured_data)
    select gen_random_uuid(), ${org.org_id}, ${agent.id}, 'web', 'ended', now() - make_interval(mins => g), now() - make_interval(mins => g) + interval '5 minutes',
      now() - make_interval(mins => g) + interval '5 minutes', ${contact.id}, jsonb_build_object('email', ${email}::text, 'phone', ${phone}::text)
    from generate_series(1, ${CONVERSATIONS}::int) g`;
  await sql`insert into conversation_messages (id, conversation_id, role, text, ts)
    select gen_random_uuid(), c.id, case when m % 2 = 0 then 'visitor' else 'agent' end, 'message ' || m || ' from ' || ${email}::text, c.started_at + make_interval(secs => m)
    from conversations c cross join generate_series(1, ${MESSAGES}::int) m where c.contact_id = ${contact.id}`;
  await sql`insert into conversation_notes (id, conversation_id, author, text) select gen_random_uuid(), id, 'bench', 'call ' || ${phone}::text from conversations where contact_id = ${contact.id}`;
  await sql`insert into events (id, org_id, type, agent_id, data, dispatched_at)
    select 'evt_' || substr(md5(random()::text), 1, 24), ${org.org_id}, 'conversation.ended', ${agent.id}, json_build_object('conversation', json_build_object('id', id, 'extracted_data', captured_data)), now()
    from conversations where contact_id = ${contact.id}`;
  await sql`analyze conversations`;
  await sql`analyze conversation_messages`;

  const started = performance.now();
  const erased = await post(`/contacts/${contact.id}/erase`);
  const answeredS = (performance.now() - started) / 1000;
  say(`Erase answered in ${answeredS.toFixed(2)} s: ${JSON.stringify(erased.deleted)}`);
  if (erased.histories_workflow_id) {
    const histories = await service.temporal.workflow.getHandle(erased.histories_workflow_id).result() as { deleted: number };
    say(`Temporal histories deleted (${histories.deleted} found) ${((performance.now() - started) / 1000).toFixed(2)} s after the request`);
  }
  const [left] = await sql<{ n: number }[]>`select count(*)::int as n from conversations where org_id = ${org.org_id}`;
  say(`Conversations left in the organization: ${left!.n}`);
  say(`Target: erase of a contact with ${CONVERSATIONS.toLocaleString('en')} conversations < ${TARGET_SECONDS} s: ${answeredS < TARGET_SECONDS ? 'met' : 'NOT met'}`);
}

await runBenchmark(main);
