import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Principal } from '../../src/auth/authenticator.ts';
import type { AppMiddleware, AppState } from '../context.ts';

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

/**
 * Gives every request an id (echoing a well-formed `X-Request-Id`, else a fresh one), a child
 * logger carrying it, and one access-log line when it ends. Headers are never logged: they carry tokens.
 */
export function requestContext(): AppMiddleware {
  return async (ctx, next) => {
    const incoming = ctx.get('X-Request-Id');
    const requestId = incoming && WELL_FORMED_ID.test(incoming) ? incoming : randomUUID();
    const state = new RequestState(requestId, ctx.deps.log);
    ctx.state = state;
    ctx.set('X-Request-Id', requestId);
    const started = performance.now();
    try {
      await next();
    } finally {
      if (ctx.deps.log.isLevelEnabled('info')) state.log.info({
        method: ctx.method, path: ctx.path, status: ctx.status,
        duration_ms: Math.round((performance.now() - started) * 100) / 100,
        org_id: state.principal?.orgId, key_id: state.principal?.keyId,
      }, 'request');
    }
  };
}
