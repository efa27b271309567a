import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import type { LineLogger } from './child-process.ts';
import { startEmbeddedPostgres } from './embedded-postgres.ts';
import { ensureTemporalCli } from './temporal-cli.ts';
import { startTemporalDevServer, type TemporalDevServer } from './temporal-dev-server.ts';
import { SEARCH_ATTRIBUTES } from '../temporal/index.ts';

/** The machine's PostgreSQL (trust auth), which tests and benchmarks use when it answers. */
export const LOCAL_PG_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** The same server URL naming another database. */
export function withDatabase(serverUrl: string, dbName: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${dbName}`;
  return url.toString();
}

async function reachable(url: string): Promise<boolean> {
  // A server that is down refuses at once; one that is up answers within seconds even on a machine
  // loaded twenty times over its cores (where 3 s was seen to run out and a run fell back to an
  // embedded server it did not need).
  const sql = postgres(url, { max: 1, connect_timeout: 15, onnotice: () => {} });
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

export interface ScratchDatabase {
  /** URL of the fresh database. */
  url: string;
  /** URL of its server (database `postgres`), to create more databases on. */
  serverUrl: string;
  /** Drops the database, and stops the embedded server if one was started for it. */
  drop(): Promise<void>;
}

/**
 * A fresh, uniquely named database for a test run or a benchmark: on the machine's PostgreSQL when
 * it answers, else on an embedded server in a temporary folder.
 */
export async function createScratchDatabase(opts: { prefix: string; log?: LineLogger }): Promise<ScratchDatabase> {
  let serverUrl = LOCAL_PG_URL;
  let stopServer = async (): Promise<void> => {};
  if (!(await reachable(serverUrl))) {
    const dataDir = join(tmpdir(), `${opts.prefix}-pg-${randomBytes(4).toString('hex')}`);
    opts.log?.(`PostgreSQL at ${LOCAL_PG_URL} does not answer: starting an embedded one in ${dataDir}`);
    const pg = await startEmbeddedPostgres({ dataDir, database: 'postgres' });
    serverUrl = pg.url;
    stopServer = async () => {
      await pg.stop();
      await rm(dataDir, { recursive: true, force: true });
      await rm(`${dataDir}.port`, { force: true });
    };
  }
  const dbName = `${opts.prefix.replace(/\W/g, '_')}_${Date.now()}_${randomBytes(3).toString('hex')}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${dbName}`);
  return {
    url: withDatabase(serverUrl, dbName),
    serverUrl,
    drop: async () => {
      await admin.unsafe(`drop database if exists ${dbName} with (force)`).catch(() => {});
      await admin.end({ timeout: 5 });
      await stopServer();
    },
  };
}

/**
 * An in-memory Temporal dev server with the service's search attributes registered.
 *
 * The CLI makes the server re-read the search attribute definitions from its (single-connection)
 * SQLite store on every use, so attributes created later show at once. Ours are registered at
 * launch, so that refresh only costs: measured on 2 cores, workflow starts went from 108 to 186
 * a second without it (bench/README.md).
 */
export async function startScratchTemporal(opts: { log?: LineLogger; ui?: boolean } = {}): Promise<TemporalDevServer & { cliPath: string }> {
  const cliPath = await ensureTemporalCli({ log: opts.log });
  const dev = await startTemporalDevServer({
    cliPath, uiPort: opts.ui ? 0 : false,
    searchAttributes: Object.fromEntries(Object.keys(SEARCH_ATTRIBUTES).map((k) => [k, 'Keyword' as const])),
    dynamicConfig: { 'system.forceSearchAttributesCacheRefreshOnRead': false },
  });
  return { ...dev, cliPath };
}
