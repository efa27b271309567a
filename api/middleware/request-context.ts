import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Principal } from '../../src/auth/authenticator.ts';
import type { AppContext, AppState } from '../context.ts';

const WELL_FORMED_ID = /^[A-Za-z0-9._-]{1,200}$/;

/** A request's state; its child logger is made on first use: most requests log only the access line. */
class RequestState implements AppState {
  principal?: Principal;
  #log: Logger | undefined;
  constructor(readonly requestId: string, private readonly root: Logger) {}
  get log(): Logger {
    return this.#log ??= this.root.child({ request_id: this.requestId });
  }
}

/** The counter's room: 12 hex digits. */
const COUNTER_END = 2 ** 48;
let prefix = '';
let counter = COUNTER_END;

/**
 * A fresh request id: UUID-shaped (RFC 9562's version 8, the layout of its maker's choice), 74 bits drawn at
 * random once per process (again every 2^48 ids) followed by a counter in the last 12 hex digits. Unique
 * across processes as a random UUID is, and within one by the counter; a request id is a label for logs and
 * support, not a secret (nothing is found or allowed by it). `randomUUID` per request was 3 µs of a GET's CPU
 * (issue 48, bench/README.md).
 */
export function freshRequestId(): string {
  if (counter >= COUNTER_END) {
    const hex = randomBytes(10).toString('hex');
    const variant = (8 + (parseInt(hex[15]!, 16) & 3)).toString(16);
    prefix = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(12, 15)}-${variant}${hex.slice(16, 19)}-`;
    counter = 0;
  }
  return prefix + (counter++).toString(16).padStart(12, '0');
}

/**
 * Gives a request its id (echoing a well-formed `X-Request-Id`, else a fresh one) in its state and its
 * `X-Request-Id` header, and a child logger carrying it. Read and written on Node's own request and response:
 * Koa's `ctx.get` and `ctx.set` go through its delegates and allocate per call (issue 48).
 */
export function startRequest(ctx: AppContext): void {
  const incoming = ctx.req.headers['x-request-id'];
  const requestId = typeof incoming === 'string' && incoming && WELL_FORMED_ID.test(incoming) ? incoming : freshRequestId();
  ctx.state = new RequestState(requestId, ctx.deps.log);
  ctx.res.setHeader('X-Request-Id', requestId);
}

/** The access-log line of a request that ended (headers are never logged: they carry tokens). */
export function logRequest(ctx: AppContext, started: number): void {
  const state = ctx.state;
  if (ctx.deps.log.isLevelEnabled('info')) state.log.info({
    method: ctx.method, path: ctx.path, status: ctx.status,
    duration_ms: Math.round((performance.now() - started) * 100) / 100,
    org_id: state.principal?.orgId, key_id: state.principal?.keyId,
  }, 'request');
}
