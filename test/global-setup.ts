import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import type { TestProject } from 'vitest/node';
import postgres from 'postgres';
import { ensureTemporalCli } from '../src/infra/temporal-cli.ts';
import { startTemporalDevServer } from '../src/infra/temporal-dev-server.ts';
import { startEmbeddedPostgres } from '../src/infra/embedded-postgres.ts';
import { SEARCH_ATTRIBUTES } from '../src/temporal/index.ts';
import { WORKFLOWS_PATH } from '../src/temporal/worker.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Server URL without a database name; tests create their own databases on it. */
    pgServerUrl: string;
    /** The fresh database of this run. */
    databaseUrl: string;
    temporalAddress: string;
    temporalUiUrl: string | null;
    workflowBundlePath: string;
    cliPath: string;
  }
}

const LOCAL_PG = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** The same server URL naming another database. */
export function withDatabase(serverUrl: string, dbName: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${dbName}`;
  return url.toString();
}

async function reachable(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, connect_timeout: 3, onnotice: () => {} });
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/**
 * One real Temporal dev server (in memory) and one fresh PostgreSQL database for the whole run,
 * plus the workflow bundle built once. PostgreSQL is the machine's server when it answers,
 * else an embedded one.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dataDir = join(process.cwd(), '.data', 'test');
  await mkdir(dataDir, { recursive: true });
  const stops: (() => Promise<void>)[] = [];

  let serverUrl = LOCAL_PG;
  if (!(await reachable(serverUrl))) {
    const pg = await startEmbeddedPostgres({ dataDir: join(dataDir, `pg-${randomBytes(4).toString('hex')}`), database: 'postgres' });
    stops.push(() => pg.stop());
    serverUrl = pg.url;
  }
  const dbName = `ams_test_${Date.now()}_${randomBytes(3).toString('hex')}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${dbName}`);
  stops.push(async () => {
    await admin.unsafe(`drop database if exists ${dbName} with (force)`).catch(() => {});
    await admin.end({ timeout: 5 });
  });
  const databaseUrl = withDatabase(serverUrl, dbName);

  const cliPath = await ensureTemporalCli({ log: (l) => process.stderr.write(`${l}\n`) });
  const [temporal, bundle] = await Promise.all([
    startTemporalDevServer({
      cliPath, uiPort: process.env.TEST_TEMPORAL_UI === '1' ? 0 : false,
      searchAttributes: Object.fromEntries(Object.keys(SEARCH_ATTRIBUTES).map((k) => [k, 'Keyword' as const])),
    }),
    bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('WARN') }),
  ]);
  stops.push(() => temporal.stop());
  const workflowBundlePath = join(dataDir, 'workflow-bundle.js');
  await writeFile(workflowBundlePath, bundle.code);

  project.provide('pgServerUrl', serverUrl);
  project.provide('databaseUrl', databaseUrl);
  project.provide('temporalAddress', temporal.address);
  project.provide('temporalUiUrl', temporal.uiUrl);
  project.provide('workflowBundlePath', workflowBundlePath);
  project.provide('cliPath', cliPath);

  return async () => {
    for (const stop of stops.reverse()) await stop();
  };
}
