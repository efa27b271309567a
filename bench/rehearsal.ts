/**
 * Production rehearsal: `npm run rehearsal` (or `node --import tsx bench/rehearsal.ts`).
 *
 * The shape docker-compose.yml describes, on this machine without Docker: a real Temporal server
 * (v1.29.1, persistence and visibility in fresh databases of the machine's PostgreSQL, configured by
 * deploy/temporal/config.yaml with the settings docker-compose.yml gives its `temporal` service),
 * two API processes and two worker processes (`node dist/src/main.js api|worker`, separate OS
 * processes, one service database), a round-robin HTTP balancer in front of the APIs, a webhook
 * receiver and the generated fixture site.
 *
 * Then: REHEARSAL_LOAD_SECONDS (default 60) of mixed traffic through the balancer, with
 * throughput, p50/p95/p99, errors and 5xx per kind; four faults one after another, each under
 * REHEARSAL_FAULT_SECONDS (default 20) of the same load, each followed by a table of checks
 * (kill -9 a worker and restart it; kill -9 an API and restart it; restart the Temporal server;
 * terminate the service's PostgreSQL sessions for 5 s); and how long a key revoked through one API
 * is still accepted by the other.
 *
 * Settings given to the service (beside the compose ones): short webhook retries and recovery
 * sweep (so a delivery whose dispatcher was killed is retaken within the check window), sandbox
 * calls of a few seconds, conversations ending after 20 s without a message, private targets
 * allowed (receiver and fixture site are on 127.0.0.1), rate limits out of the way.
 */
import { type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import postgres from 'postgres';
import { createOrganization } from '../src/auth/keys.ts';
import { forEachLine, killOnParentExit, sleep, spawnTiedToParent } from '../src/infra/child-process.ts';
import { startFixtureSite } from '../fixtures/fixture-site.ts';
import { getFreePort } from '../src/infra/ports.ts';
import { createScratchDatabase, LOCAL_PG_URL } from '../fixtures/scratch.ts';
import { startTemporalServer, type TemporalServer } from '../fixtures/temporal-server.ts';
import { DATA_CATEGORIES } from '../src/schemas/reports.ts';
import { buildService, composeTemporalSettings, onCleanup, percentile, positiveInt, runBenchmark, say } from './harness.ts';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const LOAD_SECONDS = positiveInt('REHEARSAL_LOAD_SECONDS', 60);
const FAULT_SECONDS = positiveInt('REHEARSAL_FAULT_SECONDS', 20);
/** How long after the load stops every accepted request's effect must be there. */
const SETTLE_MS = 150_000;
const INACTIVITY_SECONDS = 20;
const REST = '/api/v1/rest';
const PUBLIC = '/api/v1/public/widgets';

const load = () => `load average ${loadavg().map((l) => l.toFixed(2)).join(', ')} on ${availableParallelism()} cores`;
const table = (rows: string[][]) => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows) say(`  ${r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')}`);
};

// ---------------------------------------------------------------- processes

interface ServiceProcess { name: string; role: 'api' | 'worker'; port: number; child?: ChildProcess; starts: number }

/** The four service processes, each `node dist/src/main.js api|worker` with the environment compose gives it. */
class Fleet {
  readonly procs: ServiceProcess[] = [];
  constructor(private readonly env: NodeJS.ProcessEnv, private readonly logDir: string) {}

  async add(name: string, role: 'api' | 'worker'): Promise<ServiceProcess> {
    const proc: ServiceProcess = { name, role, port: role === 'api' ? await getFreePort() : 0, starts: 0 };
    this.procs.push(proc);
    await this.start(proc);
    return proc;
  }

  async start(proc: ServiceProcess): Promise<void> {
    proc.starts += 1;
    const out = createWriteStream(join(this.logDir, `${proc.name}.log`), { flags: 'a' });
    const child = spawnTiedToParent(process.execPath, [join(ROOT, 'dist', 'src', 'main.js'), proc.role], {
      cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...this.env, PORT: String(proc.port), LOG_LEVEL: proc.role === 'worker' ? 'info' : 'warn' },
    });
    proc.child = child;
    const removeHook = killOnParentExit(child);
    child.once('exit', removeHook);
    let ready = false;
    forEachLine(child.stdout, (line) => {
      out.write(`${line}\n`);
      if (line.includes('"msg":"ready"')) ready = true;
    });
    child.stderr?.pipe(out, { end: false });
    const deadline = Date.now() + 180_000;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${proc.name} exited while starting; see ${join(this.logDir, `${proc.name}.log`)}`);
      if (proc.role === 'api') ready = await fetch(`http://127.0.0.1:${proc.port}/readyz`).then((r) => r.ok, () => false);
      if (ready) return;
      if (Date.now() > deadline) throw new Error(`${proc.name} not ready within 180 s`);
      await sleep(250);
    }
  }

  kill9(proc: ServiceProcess): Promise<void> {
    const child = proc.child!;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    return exited;
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.procs.map(async (p) => {
      const child = p.child;
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    }));
  }
}

/**
 * A trivial balancer: round robin over the API processes. A request whose connection is refused
 * (the process is down) goes to the next one, as a balancer's health check would arrange; any
 * other failure is the client's 502.
 */
async function startBalancer(upstreams: () => number[]): Promise<{ url: string; close(): Promise<void> }> {
  let next = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const ports = upstreams();
      const first = next++;
      const attempt = (tries: number) => {
        const port = ports[(first + tries) % ports.length]!;
        // A connection per request (agent: false): a pooled socket to a process killed since would fail as a reset, not a refusal.
        const out = httpRequest({ host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers, agent: false }, (answer: IncomingMessage) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        out.on('error', (err: NodeJS.ErrnoException) => {
          if (err.code === 'ECONNREFUSED' && tries + 1 < ports.length) return attempt(tries + 1);
          if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
          res.end(`balancer: ${err.code ?? err.message}`);
        });
        out.end(body);
      };
      attempt(0);
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); }),
  };
}

/** The webhook receiver: every event id it got, and how many times. */
async function startReceiver(): Promise<{ url: string; seen: Map<string, number>; close(): Promise<void> }> {
  const seen = new Map<string, number>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string };
        seen.set(event.id, (seen.get(event.id) ?? 0) + 1);
        res.writeHead(204).end();
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, seen,
    close: () => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); }),
  };
}

// ---------------------------------------------------------------- load

interface Answer { status: number; body: any; ms: number }

/** Per kind: latencies of every request, answers by class. */
class Stats {
  readonly kinds = new Map<string, { ms: number[]; ok: number; errors: number; fiveXX: number; network: number }>();
  /** 5xx answers by status and kind: 502 is the balancer's (a request in flight on a killed API). */
  readonly fiveXXByStatus = new Map<string, number>();
  started = Date.now();
  reset(): void { this.kinds.clear(); this.fiveXXByStatus.clear(); this.started = Date.now(); }
  record(kind: string, a: Answer): void {
    let k = this.kinds.get(kind);
    if (!k) this.kinds.set(kind, k = { ms: [], ok: 0, errors: 0, fiveXX: 0, network: 0 });
    k.ms.push(a.ms);
    if (a.status === 0) k.network++;
    else if (a.status >= 500) {
      k.fiveXX++;
      const key = `${a.status} ${kind}: ${String(a.body?.detail ?? a.body).slice(0, 80)}`;
      this.fiveXXByStatus.set(key, (this.fiveXXByStatus.get(key) ?? 0) + 1);
    }
    else if (a.status >= 400) k.errors++;
    else k.ok++;
  }
  print(): void {
    const seconds = (Date.now() - this.started) / 1000;
    const rows = [['kind', 'requests', 'req/s', 'p50 ms', 'p95 ms', 'p99 ms', '2xx', '4xx', '5xx', 'no answer']];
    for (const [kind, k] of [...this.kinds].sort()) {
      const ms = [...k.ms].sort((a, b) => a - b);
      rows.push([kind, String(ms.length), (ms.length / seconds).toFixed(1), ...[50, 95, 99].map((p) => percentile(ms, p).toFixed(0)),
        String(k.ok), String(k.errors), String(k.fiveXX), String(k.network)]);
    }
    table(rows);
    if (this.fiveXXByStatus.size) say(`  5xx: ${[...this.fiveXXByStatus].map(([k, n]) => `${n}x ${k}`).join('; ')}`);
  }
}

/** What the load had accepted (2xx), to be found afterwards. */
interface Accepted {
  agents: Map<string, { name: string; deleted: boolean }>;
  messages: Map<string, string[]>; // conversation id -> accepted visitor texts
  sites: Set<string>;
  campaigns: Set<string>;
  runs: Map<string, string>; // run id -> report id
}

interface LoadContext {
  base: string; token: string; stats: Stats; accepted: Accepted;
  chatKey: string; callerId: string; reportId: string; siteUrl: string;
}

async function http(ctx: LoadContext, kind: string | null, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const started = performance.now();
  let answer: Answer;
  try {
    const res = await fetch(ctx.base + path, {
      method, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(30_000),
      headers: { authorization: `Bearer ${ctx.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    });
    const text = await res.text();
    let parsed: unknown = text;
    try { parsed = text ? JSON.parse(text) : undefined; } catch { /* not JSON */ }
    answer = { status: res.status, body: parsed, ms: performance.now() - started };
  } catch {
    answer = { status: 0, body: undefined, ms: performance.now() - started };
  }
  if (kind) ctx.stats.record(kind, answer);
  return answer;
}

let serial = 0;
const unique = () => `${Date.now().toString(36)}-${(serial++).toString(36)}`;

/** One agent's life: create, read, rename, pause (an event), maybe delete. */
async function agentCrud(ctx: LoadContext): Promise<void> {
  const created = await http(ctx, 'agent create', 'POST', `${REST}/agents`, { name: `load ${unique()}` });
  if (created.status !== 201) return;
  const id: string = created.body.id;
  ctx.accepted.agents.set(id, { name: created.body.name, deleted: false });
  await http(ctx, 'agent get', 'GET', `${REST}/agents/${id}`);
  const name = `renamed ${unique()}`;
  if ((await http(ctx, 'agent patch', 'PATCH', `${REST}/agents/${id}`, { name })).status === 200) ctx.accepted.agents.set(id, { name, deleted: false });
  await http(ctx, 'agent patch', 'PATCH', `${REST}/agents/${id}`, { status: 'paused' });
  if (Math.random() < 0.3 && (await http(ctx, 'agent delete', 'DELETE', `${REST}/agents/${id}`)).status === 204) {
    ctx.accepted.agents.set(id, { name, deleted: true });
  }
}

/** A visitor's conversation on the chat widget: start, two messages (the offline runtime answers). */
async function conversation(ctx: LoadContext): Promise<void> {
  const started = await http(ctx, 'conversation start', 'POST', `${PUBLIC}/${ctx.chatKey}/conversations`, { page_url: 'https://boats.example.com/', language: 'en' });
  if (started.status !== 201) return;
  const id: string = started.body.conversation_id;
  const texts: string[] = [];
  ctx.accepted.messages.set(id, texts);
  for (const question of ['What are the opening hours?', 'How much does a mooring cost?']) {
    const text = `${question} (${unique()})`;
    const answer = await http(ctx, 'conversation message', 'POST', `${PUBLIC}/${ctx.chatKey}/conversations/${id}/messages`, { text }, { 'x-visitor-token': started.body.visitor_token });
    if (answer.status === 200) texts.push(text);
  }
}

/** A crawl of the fixture site: an agent created with site_url. */
async function crawl(ctx: LoadContext): Promise<void> {
  const created = await http(ctx, 'crawl (agent with site)', 'POST', `${REST}/agents`, { name: `site ${unique()}`, site_url: ctx.siteUrl });
  if (created.status !== 201) return;
  const sites = await http(ctx, null, 'GET', `${REST}/sites?widget_id=${created.body.id}`);
  if (sites.status === 200 && sites.body.data[0]) ctx.accepted.sites.add(sites.body.data[0].id);
  await sleep(2_000);
}

/** A campaign of three sandbox calls, started. */
async function campaign(ctx: LoadContext): Promise<void> {
  const created = await http(ctx, 'campaign create+start', 'POST', `${REST}/campaigns`, {
    name: `load ${unique()}`, widget_id: ctx.callerId, max_duration_seconds: 60, concurrency: 3,
    to_numbers: Array.from({ length: 3 }, () => `+1500555${String(Math.floor(Math.random() * 10_000)).padStart(4, '0')}`),
  });
  if (created.status !== 201) return;
  if ((await http(ctx, 'campaign create+start', 'POST', `${REST}/campaigns/${created.body.id}/start`)).status === 200) ctx.accepted.campaigns.add(created.body.id);
  await sleep(2_000);
}

/** A manual run of a report over the last week. */
async function reportRun(ctx: LoadContext): Promise<void> {
  const end = new Date();
  const run = await http(ctx, 'report run', 'POST', `${REST}/reports/${ctx.reportId}/run`, {
    period_start: new Date(end.getTime() - 7 * 86_400_000).toISOString(), period_end: end.toISOString(),
  });
  if (run.status === 202 || run.status === 201 || run.status === 200) ctx.accepted.runs.set(run.body.id, ctx.reportId);
  await sleep(3_000);
}

/** Users per kind of traffic (closed loop: each starts its next round when the last ended). */
const MIX: [(ctx: LoadContext) => Promise<void>, number][] = [[agentCrud, 6], [conversation, 6], [crawl, 1], [campaign, 1], [reportRun, 1]];

/** Runs the mix until `stop` resolves. */
async function runLoad(ctx: LoadContext, stop: Promise<void>): Promise<void> {
  let stopped = false;
  void stop.then(() => { stopped = true; });
  await Promise.all(MIX.flatMap(([fn, users]) => Array.from({ length: users }, async () => {
    while (!stopped) await fn(ctx).catch(() => undefined);
  })));
}

// ---------------------------------------------------------------- checks

interface Check { name: string; checked: number; failed: number; detail?: string }

async function eventuallyCount<T>(what: () => Promise<T[]>): Promise<T[]> {
  const deadline = Date.now() + SETTLE_MS;
  for (;;) {
    const missing = await what();
    if (missing.length === 0 || Date.now() > deadline) return missing;
    await sleep(2_000);
  }
}

async function runChecks(ctx: LoadContext, sql: postgres.Sql, receiver: { seen: Map<string, number> }, temporal: Client, orgId: string, pagesPerCrawl: number, since: Date): Promise<Check[]> {
  const checks: Check[] = [];
  const agents = [...ctx.accepted.agents];
  const agentMissing = await eventuallyCount(async () => {
    const rows = await sql<{ id: string; name: string; deleted: boolean }[]>`
      select id, name, deleted_at is not null as deleted from agents where id = any(${agents.map(([id]) => id)}::uuid[])`;
    const found = new Map(rows.map((r) => [r.id, r]));
    return agents.filter(([id, want]) => {
      const row = found.get(id);
      return want.deleted ? row !== undefined && !row.deleted : row?.name !== want.name || row.deleted;
    });
  });
  checks.push({ name: 'agent writes present (create, rename, delete)', checked: agents.length, failed: agentMissing.length, detail: agentMissing.slice(0, 3).map(([id]) => id).join(' ') });

  const conversations = [...ctx.accepted.messages];
  const texts = conversations.flatMap(([id, list]) => list.map((t) => [id, t] as const));
  const messageProblems = await eventuallyCount(async () => {
    const rows = await sql<{ conversation_id: string; text: string; n: number }[]>`
      select conversation_id, text, count(*)::int as n from conversation_messages
      where conversation_id = any(${conversations.map(([id]) => id)}::uuid[]) and role = 'visitor' group by 1, 2`;
    const counts = new Map(rows.map((r) => [`${r.conversation_id} ${r.text}`, r.n]));
    return texts.filter(([id, t]) => counts.get(`${id} ${t}`) !== 1);
  });
  checks.push({ name: 'visitor messages stored exactly once', checked: texts.length, failed: messageProblems.length });

  const sites = [...ctx.accepted.sites];
  const crawlProblems = await eventuallyCount(async () => {
    const rows = await sql<{ id: string; status: string; pages: number; urls: number }[]>`
      select s.id, s.status, count(p.id)::int as pages, count(distinct p.url)::int as urls
      from sites s left join site_pages p on p.site_id = s.id and p.generation = s.generation
      where s.id = any(${sites}::uuid[]) group by s.id`;
    return rows.filter((r) => r.status !== 'ready' || r.pages !== pagesPerCrawl || r.urls !== r.pages).concat(
      sites.length === rows.length ? [] : [{ id: 'missing', status: 'missing', pages: 0, urls: 0 }]);
  });
  checks.push({ name: `crawls finished, ${pagesPerCrawl} pages each, no duplicate page`, checked: sites.length, failed: crawlProblems.length, detail: crawlProblems.slice(0, 2).map((r) => `${r.id} ${r.status} ${r.pages}/${r.urls}`).join('; ') });

  const campaigns = [...ctx.accepted.campaigns];
  const campaignProblems = await eventuallyCount(async () => {
    const rows = await sql<{ id: string; status: string }[]>`select id, status from campaigns where id = any(${campaigns}::uuid[])`;
    return rows.filter((r) => r.status !== 'completed');
  });
  checks.push({ name: 'campaigns completed', checked: campaigns.length, failed: campaignProblems.length, detail: campaignProblems.slice(0, 3).map((r) => `${r.id} ${r.status}`).join('; ') });
  const calls = await sql<{ n: number }[]>`select count(*)::int as n from campaign_calls where campaign_id = any(${campaigns}::uuid[])`;
  const endedTwice = await sql<{ conversation_id: string; n: number }[]>`
    select u.conversation_id, count(*)::int as n from usage_records u
    join campaign_calls c on c.conversation_id = u.conversation_id
    where c.campaign_id = any(${campaigns}::uuid[]) group by 1 having count(*) > 1`;
  checks.push({ name: 'campaign calls ended once (one usage record)', checked: calls[0]!.n, failed: endedTwice.length });

  const runs = [...ctx.accepted.runs.keys()];
  const runProblems = await eventuallyCount(async () => {
    const rows = await sql<{ id: string; status: string }[]>`select id, status from report_runs where id = any(${runs}::uuid[])`;
    return rows.filter((r) => r.status !== 'succeeded').concat(rows.length === runs.length ? [] : [{ id: 'missing', status: 'missing' }]);
  });
  checks.push({ name: 'report runs succeeded', checked: runs.length, failed: runProblems.length, detail: runProblems.slice(0, 3).map((r) => `${r.id} ${r.status}`).join('; ') });

  const undelivered = await eventuallyCount(async () => {
    const events = await sql<{ id: string }[]>`select id from events where org_id = ${orgId} and created_at >= ${since}`;
    return events.filter((e) => !receiver.seen.has(e.id));
  });
  const committed = (await sql<{ n: number }[]>`select count(*)::int as n from events where org_id = ${orgId} and created_at >= ${since}`)[0]!.n;
  checks.push({ name: 'committed events delivered (receiver vs outbox)', checked: committed, failed: undelivered.length, detail: undelivered.slice(0, 3).map((e) => e.id).join(' ') });
  const repeats = [...receiver.seen.values()].filter((n) => n > 1).length;
  checks.push({ name: 'events received more than once (at-least-once; not a failure)', checked: receiver.seen.size, failed: 0, detail: `${repeats} repeated` });

  const late = await lateWorkflows(temporal);
  checks.push({ name: 'open workflows past their age limit (late; the final check says if stuck)', checked: late.open, failed: 0, detail: late.ids.length ? `${late.ids.length} late: ${late.ids.slice(0, 2).join('; ')}` : '' });
  return checks;
}

/**
 * Open workflows older than they should be: a conversation ends INACTIVITY_SECONDS after its last
 * message (plus its evaluation), anything else finishes within minutes. Schedules and the webhook
 * sweep are long-lived by design.
 */
async function lateWorkflows(temporal: Client): Promise<{ open: number; ids: string[] }> {
  const ids: string[] = [];
  let open = 0;
  for await (const wf of temporal.workflow.list({ query: 'ExecutionStatus = "Running"' })) {
    if (wf.workflowId.startsWith('temporal-sys') || /^(webhook-recovery-sweep|number-billing|report-schedule|crawl-schedule)/.test(wf.workflowId)) continue;
    open++;
    const ageSeconds = (Date.now() - wf.startTime.getTime()) / 1000;
    const limit = wf.workflowId.startsWith('conversation:') ? INACTIVITY_SECONDS + 120 : 180;
    if (ageSeconds > limit) ids.push(`${wf.workflowId} (${wf.type}, ${Math.round(ageSeconds)} s)`);
  }
  return { open, ids };
}

function printChecks(title: string, checks: Check[]): number {
  say(`Checks after ${title}:`);
  table([['check', 'checked', 'failed', 'detail'], ...checks.map((c) => [c.name, String(c.checked), String(c.failed), c.detail ?? ''])]);
  return checks.reduce((n, c) => n + c.failed, 0);
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  say(`Rehearsal: ${load()}`);
  const settings = await composeTemporalSettings();
  say(`Temporal settings from docker-compose.yml: ${Object.entries(settings).map(([k, v]) => `${k}=${v}`).join(' ')}`);
  // The machine's PostgreSQL allows 100 connections for every program on it: fewer than the template's 20 + 10.
  const pools = { SQL_MAX_CONNS: '12', SQL_MAX_IDLE_CONNS: '12', SQL_VIS_MAX_CONNS: '4', SQL_VIS_MAX_IDLE_CONNS: '4' };
  say(`  and for this machine: ${Object.entries(pools).map(([k, v]) => `${k}=${v}`).join(' ')}`);
  const temporal: TemporalServer = await startTemporalServer({ pgServerUrl: LOCAL_PG_URL, settings: { ...settings, ...pools }, log: say });
  onCleanup('Temporal server', () => temporal.destroy());
  const db = await createScratchDatabase({ prefix: 'ams_rehearsal', log: say });
  onCleanup('service database', () => db.drop());
  const [site, receiver] = await Promise.all([startFixtureSite({ pages: 12 }), startReceiver()]);
  onCleanup('fixture site', () => site.close());
  onCleanup('receiver', () => receiver.close());
  buildService();

  const logDir = await mkdtemp(join(tmpdir(), 'ams-rehearsal-'));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH, HOME: process.env.HOME,
    DATABASE_URL: db.url, TEMPORAL_ADDRESS: temporal.address, TEMPORAL_NAMESPACE: 'default', HOST: '127.0.0.1',
    SECRETS_KEY: randomBytes(32).toString('base64'), TASK_QUEUE_PREFIX: 'ams', DATA_DIR: join(logDir, 'data'),
    SMTP_LISTEN_PORT: '0', ALLOW_PRIVATE_NETWORK_TARGETS: 'true', CRAWL_DELAY_MS: '0',
    RATE_LIMIT_PER_MINUTE: '1000000', PUBLIC_RATE_LIMIT_PER_MINUTE: '1000000',
    WEBHOOK_RETRY_DELAYS: '1,2,5,10,20,30', WEBHOOK_SWEEP_SECONDS: '5', WEBHOOK_CLAIM_TIMEOUT_SECONDS: '15',
    SANDBOX_RING_SECONDS: '1', SANDBOX_CALL_SECONDS: '3', CONVERSATION_INACTIVITY_SECONDS: String(INACTIVITY_SECONDS),
    AMS_STARTING_CREDITS: '100000000',
    // The machine's PostgreSQL allows 100 connections for every program on it: 4 processes x 5 here.
    DATABASE_POOL_SIZE: '5',
  };
  const fleet = new Fleet(env, logDir);
  onCleanup('service processes', () => fleet.stopAll());
  // Workers first: the first process applies the migrations, and the APIs' first starts need a worker.
  const workers = [await fleet.add('worker-1', 'worker'), await fleet.add('worker-2', 'worker')];
  const apis = [await fleet.add('api-1', 'api'), await fleet.add('api-2', 'api')];
  const balancer = await startBalancer(() => apis.map((a) => a.port));
  onCleanup('balancer', () => balancer.close());
  say(`Processes: Temporal server pid ${temporal.pid()}, ${fleet.procs.map((p) => `${p.name} pid ${p.child!.pid}${p.port ? ` :${p.port}` : ''}`).join(', ')}; balancer ${balancer.url}; logs in ${logDir}`);

  const sql = postgres(db.url, { max: 4, onnotice: () => {}, connection: { application_name: 'ams-rehearsal-checker' } });
  onCleanup('checker connection', () => sql.end({ timeout: 5 }));
  const temporalConnection = await Connection.connect({ address: temporal.address });
  onCleanup('Temporal client', () => temporalConnection.close());
  const temporalClient = new Client({ connection: temporalConnection });
  const org = await sql.begin((tx) => createOrganization(tx, 'rehearsal'));
  const stats = new Stats();
  const ctx: LoadContext = {
    base: balancer.url, token: org.token, stats, siteUrl: `${site.url}/`,
    accepted: { agents: new Map(), messages: new Map(), sites: new Set(), campaigns: new Set(), runs: new Map() },
    chatKey: '', callerId: '', reportId: '',
  };
  const must = async (method: string, path: string, body?: unknown) => {
    const a = await http(ctx, null, method, path, body);
    if (a.status >= 300) throw new Error(`${method} ${path}: ${a.status} ${JSON.stringify(a.body)}`);
    return a.body;
  };
  await must('POST', `${REST}/webhooks`, { url: receiver.url, events: ['*'] });
  const chat = await must('POST', `${REST}/agents`, { name: 'Marina', site_url: ctx.siteUrl });
  const chatSite = (await must('GET', `${REST}/sites?widget_id=${chat.id}`)).data[0];
  let pagesPerCrawl = 0;
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; await sleep(500)) {
    const s = await must('GET', `${REST}/sites/${chatSite.id}`);
    if (s.status === 'ready') { pagesPerCrawl = s.pages_crawled; break; }
  }
  if (!pagesPerCrawl) throw new Error('the first crawl did not finish within 120 s');
  ctx.chatKey = chat.public_key;
  const caller = await must('POST', `${REST}/agents`, { name: 'Caller' });
  await must('POST', `${REST}/phone-numbers`, { widget_id: caller.id });
  ctx.callerId = caller.id;
  ctx.reportId = (await must('POST', `${REST}/reports`, {
    name: 'Rehearsal', data_categories: [...DATA_CATEGORIES], format: 'raw', frequency: 'manual', recipients: ['owner@example.com'],
  })).id;
  say(`Set up: organization, webhook endpoint, chat agent (first crawl: ${pagesPerCrawl} pages), caller agent with a number, a report.`);

  // Load alone.
  say();
  say(`Load: ${LOAD_SECONDS} s of mixed traffic through the balancer (users: ${MIX.map(([f, n]) => `${f.name} ${n}`).join(', ')}); ${load()}`);
  let since = new Date();
  stats.reset();
  await runLoad(ctx, sleep(LOAD_SECONDS * 1000));
  stats.print();
  say(`  ${load()}`);
  let failures = printChecks('the load alone', await runChecks(ctx, sql, receiver, temporalClient, org.org_id, pagesPerCrawl, since));

  const faults: [string, () => Promise<string>][] = [
    ['kill -9 of worker-1, restarted after 3 s', async () => {
      await fleet.kill9(workers[0]!);
      await sleep(3_000);
      const t = Date.now();
      await fleet.start(workers[0]!);
      return `worker-1 back in ${((Date.now() - t) / 1000).toFixed(1)} s`;
    }],
    ['kill -9 of api-1, restarted after 5 s', async () => {
      await fleet.kill9(apis[0]!);
      await sleep(5_000);
      const t = Date.now();
      await fleet.start(apis[0]!);
      return `api-1 ready again in ${((Date.now() - t) / 1000).toFixed(1)} s`;
    }],
    ['restart of the Temporal server', async () => {
      const t = Date.now();
      await temporal.stop();
      await temporal.start();
      return `Temporal server down and back in ${((Date.now() - t) / 1000).toFixed(1)} s`;
    }],
    ['PostgreSQL sessions of the service terminated for 5 s', async () => {
      let terminated = 0;
      const end = Date.now() + 5_000;
      while (Date.now() < end) {
        const rows = await sql<{ n: number }[]>`
          select count(*) filter (where pg_terminate_backend(pid))::int as n from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid() and application_name <> 'ams-rehearsal-checker'`;
        terminated += rows[0]!.n;
        await sleep(100);
      }
      return `${terminated} sessions terminated`;
    }],
  ];
  for (const [name, inject] of faults) {
    say();
    say(`Fault: ${name}, under ${FAULT_SECONDS} s of the same load; ${load()}`);
    since = new Date();
    for (const kind of Object.values(ctx.accepted)) kind.clear();
    receiver.seen.clear();
    stats.reset();
    const loadDone = runLoad(ctx, sleep(FAULT_SECONDS * 1000));
    await sleep(3_000);
    say(`  ${await inject()}`);
    await loadDone;
    stats.print();
    failures += printChecks(name, await runChecks(ctx, sql, receiver, temporalClient, org.org_id, pagesPerCrawl, since));
  }

  say();
  say('Revocation: a key made and revoked through api-1, used on api-2 directly');
  const delays: number[] = [];
  for (let i = 0; i < 5; i++) {
    const direct = (port: number, method: string, path: string, token: string, body?: unknown) => fetch(`http://127.0.0.1:${port}${path}`, {
      method, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
    });
    const key = await (await direct(apis[0]!.port, 'POST', `${REST}/api-keys`, org.token, { name: `revoked ${i}`, permissions: ['agents.read'] })).json() as { id: string; token: string };
    if ((await direct(apis[1]!.port, 'GET', `${REST}/agents`, key.token)).status !== 200) throw new Error('a new key is refused by the other API');
    const revoked = await direct(apis[0]!.port, 'DELETE', `${REST}/api-keys/${key.id}`, org.token);
    const t = performance.now();
    if (revoked.status !== 204) throw new Error(`revocation answered ${revoked.status}`);
    while ((await direct(apis[1]!.port, 'GET', `${REST}/agents`, key.token)).status === 200) {
      if (performance.now() - t > 10_000) break;
      await sleep(10);
    }
    delays.push(performance.now() - t);
  }
  const worst = Math.max(...delays);
  say(`  refused by api-2 after ${delays.map((d) => `${d.toFixed(0)} ms`).join(', ')} (worst ${worst.toFixed(0)} ms: ${worst <= 1000 ? 'within' : 'NOT within'} 1 s)`);
  if (worst > 1000) failures++;

  say();
  say('Stuck: every late workflow must still end (an activity whose worker or completion was lost waits for its timeout, 5 min at most)');
  const waitStarted = Date.now();
  let late = await lateWorkflows(temporalClient);
  while (late.ids.length > 0 && Date.now() - waitStarted < 6 * 60_000) {
    await sleep(10_000);
    late = await lateWorkflows(temporalClient);
  }
  failures += printChecks('all faults', [{ name: 'workflows still open past their limit (stuck)', checked: late.open, failed: late.ids.length, detail: `${late.ids.slice(0, 3).join('; ')} (waited ${Math.round((Date.now() - waitStarted) / 1000)} s)` }]);

  say();
  say(`Processes started: ${fleet.procs.map((p) => `${p.name} ${p.starts}x`).join(', ')}; ${load()}`);
  say(failures === 0 ? 'Rehearsal: every check passed.' : `Rehearsal: ${failures} check failures (see the tables above).`);
  if (failures > 0) throw new Error(`${failures} check failures`);
}

await runBenchmark(main);
