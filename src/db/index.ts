import { once } from 'node:events';
import { readdir, readFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import postgres from 'postgres';
import { sourceFile } from '../infra/paths.ts';

export type Sql = postgres.Sql;
/** A transaction or the pool: repository functions take either, so a transaction passes through. */
export type Db = postgres.Sql | postgres.TransactionSql;

/** What the benches count the pool's statements with (see createSql). */
export interface StatementHooks {
  /** Called with every statement's text, through postgres.js's `debug` hook (which also records a stack trace per statement: costly). */
  onQuery?: ((statement: string) => void) | undefined;
  /** Called once per statement sent, counted on the wire (cheap). */
  onStatement?: (() => void) | undefined;
}

/**
 * Opens the pool. Dates come back as `Date`, so JSON renders them as ISO 8601 with milliseconds and `Z`.
 * `asynchronousCommit`: its commits return before their WAL is flushed to disk (`synchronous_commit = off`): a
 * crash of PostgreSQL may lose its last commits (at most about 3 × `wal_writer_delay`), never corrupt or reorder them
 * (the WAL is replayed up to a point, and every commit of another pool that waits for its flush flushes what came
 * before it too). Only for writes that are redone when lost (the webhook dispatcher's bookkeeping).
 */
export function createSql(url: string, opts: { max?: number; asynchronousCommit?: boolean } & StatementHooks = {}): Sql {
  return postgres(url, {
    max: opts.max ?? 10,
    ...(opts.onQuery ? { debug: (_connection: number, statement: string) => opts.onQuery!(statement) } : {}),
    ...(opts.onStatement ? { socket: countingSocket(opts.onStatement) } : {}),
    onnotice: () => {},
    connection: { application_name: 'agent-management-service', ...(opts.asynchronousCommit ? { synchronous_commit: 'off' } : {}) },
    types: {
      // bigint counts (totals) fit in a JS number for any realistic table.
      bigint: { to: 20, from: [20], serialize: (v: number) => String(v), parse: (v: string) => Number(v) },
    },
  });
}

/**
 * A socket factory for postgres.js that calls `onStatement` for each statement the connection writes:
 * an Execute ('E') or simple Query ('Q') message of the wire protocol each. postgres.js writes whole
 * messages; the startup and SSL requests have no type byte (their first byte is 0).
 */
function countingSocket(onStatement: () => void): (options: { host: string[]; port: number[]; path?: string | false }) => Promise<Socket> {
  return async (options) => {
    const socket = options.path ? connect(options.path) : connect(options.port[0]!, options.host[0]!);
    await once(socket, 'connect');
    const write = socket.write.bind(socket) as (chunk: Uint8Array, ...rest: unknown[]) => boolean;
    socket.write = ((chunk: Uint8Array, ...rest: unknown[]) => {
      const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      for (let at = 0; at + 5 <= bytes.length;) {
        if (bytes[at] === 0) { at += bytes.readInt32BE(at); continue; }
        if (bytes[at] === 0x45 || bytes[at] === 0x51) onStatement();
        at += 1 + bytes.readInt32BE(at + 1);
      }
      return write(chunk, ...rest);
    }) as Socket['write'];
    return socket;
  };
}

/** postgres.js's own codes for a connection it lost or could not open. */
const CONNECTION_CODES = new Set(['CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT',
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH']);

/**
 * Whether an error says the database could not be reached, rather than that a statement was wrong:
 * a connection refused, lost or timed out, or the server ending the session (a FATAL error such as
 * "terminating connection due to administrator command", "too many clients", a database not
 * accepting connections), or SQLSTATE classes 08 (connection exception) and 57P (operator intervention).
 * The API answers those 503, as it does when Temporal is unreachable.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, severity } = err as { code?: unknown; severity?: unknown };
  if (severity === 'FATAL' || severity === 'PANIC') return true;
  if (typeof code !== 'string') return false;
  return CONNECTION_CODES.has(code) || code.startsWith('08') || code.startsWith('57P') || code === '53300';
}

const MIGRATIONS_DIR = sourceFile('src', 'db', 'migrations') + '/';
// Any constant works; it only has to be the same for every process of this service.
const MIGRATION_LOCK_KEY = 727_001;

/**
 * Applies the forward-only migrations in `src/db/migrations` that the database has not seen,
 * inside one transaction holding an advisory lock: processes starting together apply each once.
 * Returns the versions it applied.
 */
export async function migrate(sql: Sql): Promise<string[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f)).sort();
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`;
    await tx`create table if not exists schema_migrations (
      version text primary key, applied_at timestamptz not null default now())`;
    const done = new Set((await tx<{ version: string }[]>`select version from schema_migrations`).map((r) => r.version));
    const applied: string[] = [];
    for (const file of files) {
      const version = file.replace(/\.sql$/, '');
      if (done.has(version)) continue;
      await tx.unsafe(await readFile(MIGRATIONS_DIR + file, 'utf8'));
      await tx`insert into schema_migrations (version) values (${version})`;
      applied.push(version);
    }
    return applied;
  });
}

/** True when the database answers a trivial query (readiness). */
export async function pingDatabase(sql: Sql): Promise<void> {
  await sql`select 1`;
}

/** A piece of SQL built with the tagged template (`db\`...\``), or a helper such as `db(columns)`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Fragment = postgres.Fragment | postgres.Helper<any>;

/**
 * One page of a listing and the total it is a page of, in parallel:
 * `select <columns> <from> order by <order> limit offset` and `select count(*) <from>`.
 */
export async function listPage<Row extends object, T>(db: Db, q: {
  columns: Fragment; from: Fragment; order: Fragment; limit: number; offset: number;
}, map: (row: Row) => T): Promise<{ data: T[]; total: number }> {
  // One statement, so the page and its total are read from one snapshot: two statements on two connections
  // could answer rows that moved meanwhile with a total that counts them elsewhere (`total: 2`, `data: []`).
  const rows = await db<(Row & { __total: number })[]>`select (select count(*)::int ${q.from}) as __total, ${q.columns}
    ${q.from} order by ${q.order} limit ${q.limit} offset ${q.offset}`;
  // An empty first page is an empty list; past the end of one, only the total is read again.
  const total = rows[0]?.__total
    ?? (q.offset > 0 ? (await db<{ total: number }[]>`select count(*)::int as total ${q.from}`)[0]?.total ?? 0 : 0);
  return { data: rows.map(({ __total: _, ...row }) => map(row as unknown as Row)), total };
}

/**
 * The columns a PATCH sets, named as its schema's properties: each sent (not undefined) key, but
 * those in `except`, which the caller maps itself (a password to seal, an address to fold).
 */
export function patchFields(schema: { properties: object }, patch: object, except: readonly string[] = []): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const key of Object.keys(schema.properties)) {
    const value = (patch as Record<string, unknown>)[key];
    if (!except.includes(key) && value !== undefined) fields[key] = value;
  }
  return fields;
}
