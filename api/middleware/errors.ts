import { isDatabaseUnavailable } from '../../src/db/index.ts';
import { AppError, problemBody } from '../../src/errors.ts';
import type { AppContext } from '../context.ts';

/**
 * After the chain: a request nothing answered is 404, and a route table's or router's bare 405 or 501 becomes a problem (thrown,
 * for `renderFailure`). Part of the front frame (api/app.ts), which catches what a request threw.
 */
export function refuseUnanswered(ctx: AppContext): void {
  const status = ctx.status;
  if (status === 404 && ctx.body === undefined) throw new AppError(404, 'not_found', `no route for ${ctx.method} ${ctx.path}`);
  if ((status === 405 || status === 501) && ctx.body === undefined) {
    const allow = ctx.response.get('Allow');
    // A table or router answers 501 for methods it does not know, even on unknown paths: no Allow, no route.
    if (status === 501 && !allow) throw new AppError(404, 'not_found', `no route for ${ctx.method} ${ctx.path}`);
    throw new AppError(405, 'method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}`, {
      headers: { Allow: allow },
    });
  }
}

/** Maps whatever a request threw to RFC 9457 problem details; 5xx show no internals. */
export function renderFailure(ctx: AppContext, err: unknown): void {
  renderProblem(ctx, toAppError(ctx, err));
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

function renderProblem(ctx: AppContext, error: AppError): void {
  ctx.status = error.status;
  for (const [name, value] of Object.entries(error.headers)) if (value) ctx.set(name, value);
  if (error.status === 401) ctx.set('WWW-Authenticate', 'Bearer');
  ctx.type = 'application/problem+json';
  ctx.body = problemBody(error, ctx.state.requestId);
}
