import { afterAll, beforeAll, expect, it } from 'vitest';
import { holdUntilCommit, readAfterCommit } from '../src/db/commit-gate.ts';
import { createSql, type Db, type Sql } from '../src/db/index.ts';
import { eventually, freshDatabase } from './helpers.ts';

/**
 * The one rule for a workflow started inside the transaction that writes its rows (issue 41, item 3): the
 * workflow's first read waits for that transaction's end and sees its outcome, committed or rolled back.
 */
let db: Awaited<ReturnType<typeof freshDatabase>>;
let sql: Sql;
let databaseOid: number;

beforeAll(async () => {
  db = await freshDatabase();
  sql = createSql(db.url, { max: 80 });
  await sql`create table gated (id text primary key)`;
  databaseOid = (await sql<{ oid: number }[]>`select oid::int as oid from pg_database where datname = current_database()`)[0]!.oid;
});
afterAll(async () => {
  await sql?.end();
  await db?.drop();
});

/** How many sessions wait on an advisory lock now: the positive signal that a read is held at the gate. */
const waitingReads = async () => Number((await sql<{ n: string }[]>`
  select count(*) as n from pg_locks where locktype = 'advisory' and not granted and database = ${databaseOid}`)[0]!.n);
/** How many gates are held now (this database's advisory locks granted to a writer). */
const heldGates = async () => Number((await sql<{ n: string }[]>`
  select count(*) as n from pg_locks where locktype = 'advisory' and granted and mode = 'ExclusiveLock' and database = ${databaseOid}`)[0]!.n);

/** A writer that holds the gate for `key`, inserts its row, and ends as told once `release` resolves. */
function writer(key: string, release: Promise<void>, outcome: 'commit' | 'rollback') {
  return sql.begin(async (tx: Db) => {
    await holdUntilCommit(tx, `test:${key}`);
    await tx`insert into gated (id) values (${key})`;
    await release;
    if (outcome === 'rollback') throw new Error('rolled back on purpose');
  }).catch((err: Error) => { if (err.message !== 'rolled back on purpose') throw err; });
}

const read = (key: string) => readAfterCommit(sql, `test:${key}`, async (tx) => (await tx<{ id: string }[]>`select id from gated where id = ${key}`).length === 1);

it('a read at the gate waits for the starting transaction, then sees its commit', async () => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => { release = resolve; });
  const writing = writer('committed', held, 'commit');
  await eventually(async () => (await heldGates()) === 1);
  const reading = read('committed');
  await eventually(async () => (await waitingReads()) === 1);
  release();
  await writing;
  expect(await reading).toBe(true);
});

it('a read at the gate sees nothing of a transaction that rolled back', async () => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => { release = resolve; });
  const writing = writer('rolled-back', held, 'rollback');
  await eventually(async () => (await heldGates()) === 1);
  const reading = read('rolled-back');
  await eventually(async () => (await waitingReads()) === 1);
  release();
  await writing;
  expect(await reading).toBe(false);
});

it('with no transaction holding the gate, a read goes through at once (a Schedule\'s start, a signal)', async () => {
  await sql`insert into gated (id) values ('free')`;
  expect(await read('free')).toBe(true);
  expect(await read('never-written')).toBe(false);
});

it('under load, 30 writers and their 30 reads: each read sees exactly its writer\'s outcome', async () => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => { release = resolve; });
  const keys = Array.from({ length: 30 }, (_, i) => `load-${i}`);
  const writing = keys.map((key, i) => writer(key, held, i % 2 ? 'rollback' : 'commit'));
  await eventually(async () => (await heldGates()) === keys.length);
  const reading = keys.map(read);
  await eventually(async () => (await waitingReads()) === keys.length);
  release();
  await Promise.all(writing);
  expect(await Promise.all(reading)).toEqual(keys.map((_, i) => i % 2 === 0));
});
