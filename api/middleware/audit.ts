import type { IncomingMessage } from 'node:http';
import { AppError } from '../../src/errors.ts';
import { appendAuditEntries, appendAuditEntry, type AuditRecord } from '../../src/db/audit-log.ts';
import type { Sql } from '../../src/db/index.ts';
import type { AuditChannel } from '../../src/schemas/audit-log.ts';
import type { AppContext, AppMiddleware } from '../context.ts';

/**
 * An in-process request made for an MCP tool call, with the client address of the MCP request that
 * made it (the in-process request itself has none). Only code in this process can put a request here.
 */
export const carriedCallers = new WeakMap<IncomingMessage, { channel: 'mcp'; address: string }>();

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Whether a request of this method is a write, which `auditTrail` records (it passes any other on untouched). */
export const isWrite = (method: string): boolean => WRITES.has(method);

/** The /inbox console calls the REST API from its own page: the browser names that page in `Referer`. */
function channelOf(ctx: AppContext): { channel: AuditChannel; address: string } {
  const carried = carriedCallers.get(ctx.req);
  if (carried) return carried;
  const referer = ctx.get('Referer');
  if (referer) {
    try {
      const url = new URL(referer);
      if (url.host === ctx.host && (url.pathname === '/inbox' || url.pathname.startsWith('/inbox/'))) return { channel: 'inbox', address: ctx.ip };
    } catch { /* not a URL: an ordinary REST call */ }
  }
  return { channel: 'rest', address: ctx.ip };
}

/** The resource acted on: a created resource's id, else the last path parameter. */
function resourceOf(ctx: AppContext): string | null {
  const body = ctx.body as { id?: unknown } | undefined;
  if (ctx.status === 201 && body && typeof body === 'object' && typeof body.id === 'string') return body.id;
  const params = Object.values(ctx.params ?? {});
  return params.length ? params[params.length - 1]! : null;
}

/**
 * Appends entries to the audit log through the service's database pool, one statement at a time: an entry that comes while one is
 * being written waits for it and goes with every other that came meanwhile, in one statement (issue 48: a
 * write no longer costs a round trip of its own under load, and alone it waits for nothing). Each caller's
 * promise settles once its own entry is stored (or failed: a batch that fails is written again entry by entry,
 * so one bad entry fails alone).
 */
function batchedAppender(sql: Sql): (record: AuditRecord) => Promise<void> {
  type Waiting = { record: AuditRecord; resolve: () => void; reject: (err: unknown) => void };
  let queue: Waiting[] = [];
  let writing = false;
  async function drain(): Promise<void> {
    writing = true;
    try {
      while (queue.length > 0) {
        const batch = queue;
        queue = [];
        try {
          if (batch.length === 1) await appendAuditEntry(sql, batch[0]!.record);
          else await appendAuditEntries(sql, batch.map((w) => w.record));
          for (const w of batch) w.resolve();
        } catch (err) {
          if (batch.length === 1) batch[0]!.reject(err);
          else await Promise.all(batch.map((w) => appendAuditEntry(sql, w.record).then(w.resolve, w.reject)));
        }
      }
    } finally {
      writing = false;
    }
  }
  return (record) => new Promise<void>((resolve, reject) => {
    queue.push({ record, resolve, reject });
    if (!writing) void drain();
  });
}

/** One appender per pool (the service has one; tests start several services in a process). */
const appenders = new WeakMap<Sql, (record: AuditRecord) => Promise<void>>();
function appenderOf(sql: Sql): (record: AuditRecord) => Promise<void> {
  let append = appenders.get(sql);
  if (!append) appenders.set(sql, (append = batchedAppender(sql)));
  return append;
}

/**
 * Records every write of an authenticated principal in the audit log (issue 45 item 8), after the
 * handler answered or failed and before the answer leaves, so an entry exists once the client has
 * its answer. A request that named no operation (an unknown path) is not an operation and is not kept.
 * A failure to record is logged and does not change the answer: the write itself has happened.
 *
 * @example area('/api/v1', [authenticate(failures), auditTrail()], routers)
 */
export function auditTrail(): AppMiddleware {
  return async (ctx, next) => {
    if (!WRITES.has(ctx.method)) return next();
    let failure: unknown;
    try {
      await next();
    } catch (err) {
      failure = err;
    }
    const principal = ctx.state.principal;
    const operation = ctx.state.operation;
    if (principal && operation) {
      const status = failure ? (failure instanceof AppError ? failure.status : 500) : ctx.status;
      const { channel, address } = channelOf(ctx);
      try {
        await appenderOf(ctx.deps.sql)({
          orgId: principal.orgId, apiKeyId: principal.keyId, memberId: principal.memberId, channel, method: ctx.method, path: ctx.path,
          operation, resourceId: resourceOf(ctx), status, outcome: status < 400 ? 'succeeded' : 'failed',
          errorCode: failure ? (failure instanceof AppError ? failure.code : 'internal_error') : null,
          clientAddress: address || null, requestId: ctx.state.requestId ?? null,
        });
      } catch (err) {
        ctx.state.log.error({ err, operation }, 'audit entry not recorded');
      }
    }
    if (failure) throw failure;
  };
}
