import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common';
import postgres from 'postgres';
import { killOnParentExit, type LineLogger, silentLogger, sleep, spawnTiedToParent, terminateChild } from './child-process.ts';
import { sourceFile } from './paths.ts';
import { getFreePortBetween } from './ports.ts';
import { ensureGoBinaries, projectCacheDir } from './temporal-cli.ts';

/** The server release the Temporal CLI v1.5.1 embeds (its go.mod), so dev server and real server run the same code. */
export const TEMPORAL_SERVER_VERSION = 'v1.29.1';

/** The committed configuration template (see its header) and dynamic configuration. */
export const SERVER_CONFIG_TEMPLATE = sourceFile('deploy', 'temporal', 'config.yaml');
const DYNAMIC_CONFIG = sourceFile('deploy', 'temporal', 'dynamicconfig.yaml');
const ENV_NAME = 'ams';

/**
 * Paths of the Temporal server and its SQL schema tool, built once with `go install` (about 3.5 minutes
 * on 2 cores once the CLI's modules are in the Go module cache) and cached beside the CLI.
 */
export async function ensureTemporalServer(log: LineLogger = silentLogger): Promise<{ server: string; sqlTool: string }> {
  const [server, sqlTool] = await ensureGoBinaries({
    what: 'Temporal server', version: TEMPORAL_SERVER_VERSION,
    packages: ['go.temporal.io/server/cmd/server', 'go.temporal.io/server/cmd/tools/sql'],
    binaries: ['temporal-server', 'temporal-sql-tool'],
    cacheDir: projectCacheDir(`temporal-server-${TEMPORAL_SERVER_VERSION}`),
    coreMinutes: 7, skipHint: 'Only `npm run rehearsal` needs it.',
  }, log);
  return { server: server!, sqlTool: sqlTool! };
}

export interface TemporalServerOptions {
  /** A PostgreSQL server URL (any database): Temporal's two databases are created on it, fresh. */
  pgServerUrl: string;
  /** Settings of the configuration template, as docker-compose.yml gives them; host, ports and database names are set here. */
  settings: Record<string, string>;
  log?: LineLogger;
}

/** A Temporal server (frontend, history, matching and worker services in one process) on PostgreSQL. */
export interface TemporalServer {
  /** Frontend gRPC address, `127.0.0.1:<port>`. */
  address: string;
  /** Its two databases, `<name>` and `<name>_visibility`. */
  databases: string[];
  pid(): number | undefined;
  /** SIGTERM (SIGKILL after 20 s); the databases stay. */
  stop(): Promise<void>;
  /** Starts the server again on the same databases and ports; resolves once the frontend answers. */
  start(): Promise<void>;
  /** Stops the server and drops its databases. */
  destroy(): Promise<void>;
}

/**
 * Sets up two fresh databases with the server's own SQL tool (create, base versioning tables, every
 * versioned schema step), renders nothing itself (the server renders the template from its environment),
 * starts the server and registers the `default` namespace.
 */
export async function startTemporalServer(opts: TemporalServerOptions): Promise<TemporalServer> {
  const log = opts.log ?? silentLogger;
  const { server, sqlTool } = await ensureTemporalServer(log);
  const pg = new URL(opts.pgServerUrl);
  const name = `ams_temporal_${Date.now()}_${randomBytes(3).toString('hex')}`;
  const databases = [name, `${name}_visibility`];
  const connection = ['--ep', pg.hostname, '-p', pg.port || '5432', '-u', decodeURIComponent(pg.username || 'postgres'), '--pw', decodeURIComponent(pg.password), '--pl', 'postgres12'];
  const run = promisify(execFile);
  for (const [db, schema] of [[databases[0]!, 'temporal'], [databases[1]!, 'visibility']] as const) {
    await run(sqlTool, [...connection, '--db', db, 'create-database']);
    await run(sqlTool, [...connection, '--db', db, 'setup-schema', '-v', '0.0']);
    await run(sqlTool, [...connection, '--db', db, 'update-schema', '--schema-name', `postgresql/v12/${schema}`]);
  }
  log(`Temporal server: databases ${databases.join(' and ')} set up (schema postgresql/v12)`);

  const root = await mkdtemp(join(tmpdir(), 'ams-temporal-server-'));
  await mkdir(join(root, 'config'));
  await copyFile(SERVER_CONFIG_TEMPLATE, join(root, 'config', `${ENV_NAME}.yaml`));
  await copyFile(DYNAMIC_CONFIG, join(root, 'dynamicconfig.yaml'));
  const portNames = ['FRONTEND_GRPC_PORT', 'FRONTEND_HTTP_PORT', 'FRONTEND_MEMBERSHIP_PORT', 'MATCHING_GRPC_PORT', 'MATCHING_MEMBERSHIP_PORT',
    'HISTORY_GRPC_PORT', 'HISTORY_MEMBERSHIP_PORT', 'WORKER_GRPC_PORT', 'WORKER_MEMBERSHIP_PORT'];
  // Below 32768: the server records membership ports in a smallint column.
  const taken = new Set<number>();
  const ports: Record<string, string> = {};
  for (const n of portNames) {
    let port: number;
    do port = await getFreePortBetween(20_000, 32_000); while (taken.has(port));
    taken.add(port);
    ports[n] = String(port);
  }
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH, ...opts.settings,
    POSTGRES_SEEDS: pg.hostname, DB_PORT: pg.port || '5432', POSTGRES_PORT: pg.port || '5432',
    POSTGRES_USER: decodeURIComponent(pg.username || 'postgres'), POSTGRES_PWD: decodeURIComponent(pg.password),
    DBNAME: databases[0], VISIBILITY_DBNAME: databases[1], BIND_ON_IP: '127.0.0.1', TEMPORAL_BROADCAST_ADDRESS: '127.0.0.1',
    DYNAMIC_CONFIG_FILE_PATH: join(root, 'dynamicconfig.yaml'), LOG_LEVEL: 'warn', ...ports,
  };
  const address = `127.0.0.1:${ports.FRONTEND_GRPC_PORT!}`;
  const serverLog = createWriteStream(join(root, 'server.log'), { flags: 'a' });
  let child: ReturnType<typeof spawnTiedToParent> | undefined;
  let removeHook = (): void => undefined;

  const start = async (): Promise<void> => {
    child = spawnTiedToParent(server, ['--root', root, '--config', 'config', '--env', ENV_NAME, '--allow-no-auth', 'start'], {
      env, stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.pipe(serverLog, { end: false });
    child.stderr?.pipe(serverLog, { end: false });
    removeHook = killOnParentExit(child);
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`Temporal server exited (code ${child.exitCode}) while starting; see ${join(root, 'server.log')}`);
      const conn = await Connection.connect({ address, connectTimeout: 2_000 }).catch(() => null);
      if (conn) {
        try {
          await conn.workflowService.getSystemInfo({});
          return;
        } catch { /* not serving yet */ } finally { await conn.close(); }
      }
      if (Date.now() > deadline) throw new Error(`Temporal server not answering within 120 s; see ${join(root, 'server.log')}`);
      await sleep(500);
    }
  };
  const stop = async (): Promise<void> => {
    if (!child) return;
    await terminateChild(child, 20_000);
    removeHook();
    child = undefined;
  };

  await start();
  await registerNamespace(address, 'default');
  log(`Temporal server ${TEMPORAL_SERVER_VERSION} on PostgreSQL answering at ${address} (root ${root})`);
  return {
    address, databases, start, stop,
    pid: () => child?.pid,
    destroy: async () => {
      await stop();
      serverLog.end();
      const admin = postgres(opts.pgServerUrl, { max: 1, onnotice: () => {} });
      for (const db of databases) await admin.unsafe(`drop database if exists ${db} with (force)`).catch(() => {});
      await admin.end({ timeout: 5 });
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** Registers a namespace (one day of retention) and waits until the frontend serves it. */
async function registerNamespace(address: string, namespace: string): Promise<void> {
  const conn = await Connection.connect({ address });
  try {
    await conn.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') })
      .catch((err: unknown) => { if (!/already exists/i.test((err as Error).message)) throw err; });
    const deadline = Date.now() + 60_000;
    for (;;) {
      const ok = await conn.workflowService.describeNamespace({ namespace }).then(() => true, () => false);
      if (ok) return;
      if (Date.now() > deadline) throw new Error(`namespace ${namespace} not served within 60 s`);
      await sleep(500);
    }
  } finally {
    await conn.close();
  }
}
