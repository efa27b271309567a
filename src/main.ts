import { join } from 'node:path';
import { mkdir } from 'node:fs/promises';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig, type Config } from './config.ts';
import { createLogger, createPrettyDestination } from './logger.ts';
import { isDatabaseUnavailable } from './db/index.ts';
import { startService, type Service } from './service.ts';
import { startEmbeddedPostgres } from './infra/embedded-postgres.ts';
import { ensureTemporalCli } from './infra/temporal-cli.ts';
import { startTemporalDevServer } from './infra/temporal-dev-server.ts';
import { SEARCH_ATTRIBUTES } from './temporal/index.ts';
import { isWorkflowPromise } from './temporal/workflow-realm.ts';
import { collectGarbage, collectStartupGarbage } from './infra/heap.ts';
import { BusyPortsError, describeBusyPorts, findBusyPorts, type PortNeed } from './infra/ports.ts';

type Mode = 'start' | 'api' | 'worker';
type Stoppable = { stop(): Promise<void> };

/** Where the banner goes: stdout beside readable logs; stderr when stdout carries JSON lines for a machine. */
let bannerOut: NodeJS.WriteStream = process.stdout;
const say = (line: string) => bannerOut.write(`${line}\n`);

/**
 * The lines a newcomer needs first: where things are and how to get a key. Printed once everything
 * listens, with the ports really bound (0 picks one), never before a start that could still fail.
 */
function banner(config: Config, apiUrl: string | null, temporalUi: string | null): void {
  const base = config.PUBLIC_BASE_URL ?? apiUrl ?? `http://localhost:${config.PORT}`;
  say('Agent Management Service');
  say(`  API:          ${base}/api/v1/rest`);
  say(`  Docs:         ${base}/docs  (OpenAPI: ${base}/api/v1/openapi.json)`);
  say(`  Temporal UI:  ${temporalUi ?? 'not started here (TEMPORAL_ADDRESS is set; see TEMPORAL_UI_URL)'}`);
  say(config.AMS_BOOTSTRAP_TOKEN
    ? '  API key:      the value of AMS_BOOTSTRAP_TOKEN (organization "default")'
    : '  API key:      npm run cli -- org create "My company"   (prints an admin key)');
  if (config.CARRIER === 'sandbox' && !config.TWILIO_AUTH_TOKEN) {
    say('  Carrier:      sandbox; its webhooks are signed with this installation\'s token: npm run cli -- sandbox signing-token');
  }
  say('');
}

/**
 * The ports this mode binds, each with the setting that moves it, in the order a person reads them.
 * scripts/run.mjs checks the same ports before installing or building anything (keep the two in step).
 */
function portNeeds(config: Config, mode: Mode): PortNeed[] {
  const needs: PortNeed[] = [];
  if (mode !== 'worker') needs.push({ port: config.PORT, host: config.HOST, what: 'API', setting: 'PORT', alternatives: 'or 0 for any free one' });
  if (mode === 'start' && !config.TEMPORAL_ADDRESS) {
    needs.push(
      { port: config.TEMPORAL_DEV_PORT, host: '127.0.0.1', what: 'Temporal dev server', setting: 'TEMPORAL_DEV_PORT', alternatives: 'or 0 for any free one, or set TEMPORAL_ADDRESS to use a Temporal server already running' },
      { port: config.TEMPORAL_UI_PORT, host: '127.0.0.1', what: 'Temporal Web UI', setting: 'TEMPORAL_UI_PORT', alternatives: 'or 0 for any free one' },
    );
  }
  if (mode !== 'worker' && config.SMTP_LISTEN_PORT > 0) {
    needs.push({ port: config.SMTP_LISTEN_PORT, host: config.HOST, what: 'inbound SMTP', setting: 'SMTP_LISTEN_PORT', alternatives: 'or 0 to turn the listener off' });
  }
  return needs;
}

/** A listen that lost a race for its port (free at the check, taken since) says it like the check does. */
function describeListenFailure(err: unknown, needs: readonly PortNeed[]): string | null {
  if (typeof err !== 'object' || err === null || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') return null;
  const port = (err as { port?: unknown }).port;
  const need = needs.find((n) => n.port === port);
  return need ? describeBusyPorts([need]) : null;
}

let needs: PortNeed[] = [];

async function main(mode: Mode): Promise<void> {
  const config = loadConfig();
  // Every port at once, before PostgreSQL, the Temporal CLI build or anything else that takes time.
  needs = portNeeds(config, mode);
  const busy = await findBusyPorts(needs);
  if (busy.length > 0) throw new BusyPortsError(busy);
  const pretty = config.LOG_FORMAT === 'pretty' || (!config.LOG_FORMAT && process.stdout.isTTY);
  if (!pretty) bannerOut = process.stderr;
  const log = createLogger(config.LOG_LEVEL, { role: mode }, pretty ? createPrettyDestination(process.stdout) : undefined);
  Runtime.install({ logger: new DefaultLogger('WARN', (entry) => log.warn({ temporal: entry.meta }, entry.message)) });
  const owned: Stoppable[] = [];
  let service: Service | null = null;
  let stopping = false;

  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    await service?.stop().catch((err: unknown) => log.error({ err }, 'service stop failed'));
    for (const s of owned.reverse()) await s.stop().catch((err: unknown) => log.error({ err }, 'child stop failed'));
    log.info('stopped');
    process.exit(0);
  };
  // postgres.js can reject a promise nobody holds when a session dies mid-transaction (the rehearsal
  // terminated sessions and all four processes exited on it). A lost connection must not end the
  // process: the pool reconnects. Anything else stays fatal, so bugs still surface.
  process.on('unhandledRejection', (reason, promise) => {
    // Workflow code's own (WORKFLOW_THREAD=main): the SDK's listener fails that workflow task, as in a thread.
    if (isWorkflowPromise(promise)) return;
    if (isDatabaseUnavailable(reason)) return void log.warn({ err: reason }, 'database connection lost (a rejection nobody awaited)');
    log.fatal({ err: reason }, 'unhandled rejection');
    process.exit(1);
  });
  // `on`, not `once`: a second Ctrl-C (or a signal to the whole group) must not kill us mid-drain.
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  let localUi: string | null = null;
  let databaseUrl = config.DATABASE_URL;
  let temporalAddress = config.TEMPORAL_ADDRESS;
  if (mode !== 'start' && (!databaseUrl || !temporalAddress)) {
    throw new Error(`npm run ${mode} needs DATABASE_URL and TEMPORAL_ADDRESS; for a local all-in-one run use npm start`);
  }
  await mkdir(config.DATA_DIR, { recursive: true });
  const lineLog = (line: string) => log.info(line);
  if (!databaseUrl) {
    const pg = await startEmbeddedPostgres({ dataDir: join(config.DATA_DIR, 'postgres'), log: (l) => log.debug(l), notice: lineLog });
    owned.push(pg);
    databaseUrl = pg.url;
    log.info('embedded PostgreSQL started');
  }
  if (!temporalAddress) {
    const cliPath = await ensureTemporalCli({ log: lineLog });
    const dev = await startTemporalDevServer({
      cliPath, dbFile: join(config.DATA_DIR, 'temporal.db'), port: config.TEMPORAL_DEV_PORT, uiPort: config.TEMPORAL_UI_PORT,
      namespace: config.TEMPORAL_NAMESPACE,
      searchAttributes: Object.fromEntries(Object.keys(SEARCH_ATTRIBUTES).map((k) => [k, 'Keyword' as const])),
      // Our attributes are registered at launch: re-reading them on every read only costs time
      // (a third of a workflow start on the dev server, see bench/README.md).
      dynamicConfig: { 'system.forceSearchAttributesCacheRefreshOnRead': false },
      log: (l) => log.debug(l),
    });
    owned.push(dev);
    temporalAddress = dev.address;
    localUi = dev.uiUrl?.replace('127.0.0.1', 'localhost') ?? null;
    log.info({ address: dev.address, ui: dev.uiUrl }, 'Temporal dev server started');
  }
  if (stopping) return;
  service = await startService({ config, databaseUrl, temporalAddress, log, api: mode !== 'worker', worker: mode !== 'api' });
  // Start-up's garbage (tens of MiB: module sources, the workflow bundle's text, schema compilation)
  // goes before the first request can add its own, so that a first crawl starts from the idle
  // footprint; then again once start-up's last work (first polls, schedules) has settled.
  collectGarbage();
  setTimeout(() => collectStartupGarbage(), 3000).unref();
  log.info({ url: service.url, mode }, 'ready');
  if (mode === 'start') banner(config, service.url, localUi ?? config.TEMPORAL_UI_URL ?? null);
}

const mode = (process.argv[2] ?? 'start') as Mode;
if (!['start', 'api', 'worker'].includes(mode)) {
  process.stderr.write(`usage: main.ts start|api|worker\n`);
  process.exit(2);
}
main(mode).catch((err: unknown) => {
  // A busy port is the user's to fix, named with its setting: no stack trace.
  const forPeople = err instanceof BusyPortsError ? err.message : describeListenFailure(err, needs);
  process.stderr.write(forPeople ? `${forPeople}\n` : `failed to start: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
