import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { AppMiddleware } from '../context.ts';

const WELL_FORMED_ID = /^[A-Za-z0-9._-]{1,200}$/;

/**
 * Gives every request an id (echoing a well-formed `X-Request-Id`, else a fresh one), a child
 * logger carrying it, and one access-log line when it ends. Headers are never logged: they carry tokens.
 */
export function requestContext(): AppMiddleware {
  return async (ctx, next) => {
    const incoming = ctx.get('X-Request-Id');
    const requestId = WELL_FORMED_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    // The child logger is made on first use: most requests log only the access line below.
    let log: Logger | undefined;
    Object.defineProperty(ctx.state, 'log', {
      get: () => (log ??= ctx.deps.log.child({ request_id: requestId })),
      configurable: true, enumerable: true,
    });
    ctx.set('X-Request-Id', requestId);
    const started = performance.now();
    try {
      await next();
    } finally {
      if (ctx.deps.log.isLevelEnabled('info')) ctx.state.log.info({
        method: ctx.method, path: ctx.path, status: ctx.status,
        duration_ms: Math.round((performance.now() - started) * 100) / 100,
        org_id: ctx.state.principal?.orgId, key_id: ctx.state.principal?.keyId,
      }, 'request');
    }
  };
}
