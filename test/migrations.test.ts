import { expect, it } from 'vitest';
import { createSql, migrate } from '../src/db/index.ts';
import { freshDatabase } from './helpers.ts';

it('applies migrations once when two processes start together, and is a no-op after', async () => {
  const db = await freshDatabase();
  const a = createSql(db.url, { max: 2 });
  const b = createSql(db.url, { max: 2 });
  try {
    const [ranA, ranB] = await Promise.all([migrate(a), migrate(b)]);
    // Exactly one of them applied everything; the other found it done.
    expect(Math.min(ranA.length, ranB.length)).toBe(0);
    expect(Math.max(ranA.length, ranB.length)).toBeGreaterThan(0);
    const rows = await a<{ version: string }[]>`select version from schema_migrations order by version`;
    expect(rows.map((r) => r.version)).toEqual([...ranA, ...ranB].sort());
    expect(await migrate(a)).toEqual([]);
    const tables = await a`select 1 from information_schema.tables where table_name in ('agents', 'api_keys', 'idempotency_keys')`;
    expect(tables).toHaveLength(3);
  } finally {
    await a.end();
    await b.end();
    await db.drop();
  }
});
