import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../src/infra/embedded-postgres.ts';
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
        expect(first.url).toBe(`postgres://postgres:postgres@127.0.0.1:${port}/ams`);
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
        const rows = await withSql(second.url, (sql) => sql`select value from kept`);
        expect(rows).toEqual([{ value: 'survives a restart' }]);
      } finally {
        await second.stop();
      }
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
