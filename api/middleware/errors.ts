import { isDatabaseUnavailable } from '../../src/db/index.ts';
import { AppError, problemBody } from '../../src/errors.ts';
import type { AppContext, AppMiddleware } from '../context.ts';

/** Maps whatever a request threw to RFC 9457 problem details; 5xx show no internals. */
export function errorHandler(): AppMiddleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw new AppError(404, 'not_found', `no route for ${ctx.method} ${ctx.path}`);
      if ((ctx.status === 405 || ctx.status === 501) && ctx.body === undefined) {
        const allow = ctx.response.get('Allow');
        // The router answers 501 for methods it does not know, even on unknown paths: no Allow, no route.
        if (ctx.status === 501 && !allow) throw new AppError(404, 'not_found', `no route for ${ctx.method} ${ctx.path}`);
        throw new AppError(405, 'method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}`, {
          headers: { Allow: allow },
        });
      }
    } catch (err) {
      renderProblem(ctx, toAppError(ctx, err));
    }
  };
}

function toAppError(ctx: AppContext, err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (isDatabaseUnavailable(err)) {
    ctx.state.log.warn({ err }, 'database unavailable');
    // Whether a write committed before the connection failed is unknown: an Idempotency-Key makes the retry safe.
    return new AppError(503, 'service_unavailable', 'the database is unavailable; try again (with the same Idempotency-Key for a write)', {
      headers: { 'Retry-After': '1' },
    });
  }
  ctx.state.log.error({ err }, 'unhandled error');
  return new AppError(500, 'internal_error', 'an unexpected error occurred; quote the request_id when reporting it');
}

export function renderProblem(ctx: AppContext, error: AppError): void {
  ctx.status = error.status;
  for (const [name, value] of Object.entries(error.headers)) if (value) ctx.set(name, value);
  if (error.status === 401) ctx.set('WWW-Authenticate', 'Bearer');
  ctx.type = 'application/problem+json';
  ctx.body = problemBody(error, ctx.state.requestId);
}
