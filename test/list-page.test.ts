import { afterAll, beforeAll, expect, it } from 'vitest';
import { freshDatabase } from './helpers.ts';
import { createSql, listPage, type Sql } from '../src/db/index.ts';

/**
 * A list page and its total come from one statement (one snapshot): a row that moves between the
 * page's read and the count's can no longer give `total: 2` with `data: []`.
 */
let db: Awaited<ReturnType<typeof freshDatabase>>;
let sql: Sql;
beforeAll(async () => {
  db = await freshDatabase();
  sql = createSql(db.url, { max: 2 });
  await sql`create table items (id int primary key, kind text not null)`;
  await sql`insert into items select n, case when n % 2 = 0 then 'even' else 'odd' end from generate_series(1, 7) n`;
});
afterAll(async () => {
  await sql?.end({ timeout: 5 });
  await db?.drop();
});

const page = (kind: string, limit: number, offset: number) => listPage(sql, {
  columns: sql`id, kind`, from: sql`from items where kind = ${kind}`, order: sql`id`, limit, offset,
}, (r: { id: number; kind: string }) => r.id);

it('answers a page with the total of the same filter, in order', async () => {
  expect(await page('odd', 2, 0)).toEqual({ data: [1, 3], total: 4 });
  expect(await page('odd', 2, 2)).toEqual({ data: [5, 7], total: 4 });
  expect(await page('even', 10, 0)).toEqual({ data: [2, 4, 6], total: 3 });
});

it('an empty first page is an empty list; past the end of a list, the total is still counted', async () => {
  expect(await page('none', 10, 0)).toEqual({ data: [], total: 0 });
  expect(await page('odd', 2, 10)).toEqual({ data: [], total: 4 });
});

it('a page and its total agree while rows move between filters', async () => {
  const moving = (async () => {
    for (let i = 0; i < 200; i++) await sql`update items set kind = case when kind = 'odd' then 'even' else 'odd' end where id = 1`;
  })();
  let checked = 0;
  while (checked < 200) {
    const { data, total } = await page('odd', 10, 0);
    expect(data.length).toBe(total);
    checked += 1;
  }
  await moving;
});
