import type { IncomingMessage } from 'node:http';
import { AppError } from '../../src/errors.ts';
import type { Principal } from '../../src/auth/authenticator.ts';
import type { AppMiddleware } from '../context.ts';
import type { RateLimiter } from './rate-limit.ts';

const BEARER = /^Bearer[ ]+(\S+)\s*$/i;

/**
 * The principal of an in-process request (an MCP tool call) made on behalf of a request that was
 * already authenticated and counted: it is neither looked up nor counted again. Only code in this
 * process can put a request here; no header can.
 */
export const carriedPrincipals = new WeakMap<IncomingMessage, Principal>();

/**
 * Resolves the bearer token (401 otherwise), then counts the request against the token's rate
 * limit. The RateLimit fields go on every authenticated response, errors included.
 * Failed authentications are counted per client address (`ctx.ip`, the client behind trusted
 * proxies: TRUSTED_PROXIES): past `failures.limit` in the window (AUTH_FAILURE_LIMIT_PER_MINUTE)
 * an unknown token is 429, not 401. A valid token is never refused for its address's failures
 * (issue 40, D16): behind one balancer, anyone's bad tokens would otherwise lock every client out.
 * Guessing gains nothing from this: a token is 256 random bits.
 */
export function authenticate(failures: RateLimiter): AppMiddleware {
  // The policy's text changes only with the limit, which is the limiter's own: made once, not per request (issue 48).
  let policyLimit = -1;
  let policy = '';
  return async (ctx, next) => {
    const carried = carriedPrincipals.get(ctx.req);
    if (carried) {
      ctx.state.principal = carried;
      return next();
    }
    // As Koa's ctx.get reads it, without its delegates (issue 48).
    const header = ctx.req.headers.authorization || '';
    const match = BEARER.exec(header);
    // A cached token answers at once: no promise to wait for on nearly every request (issue 48).
    const principal = match ? ctx.deps.authenticator.cached(match[1]!) ?? await ctx.deps.authenticator.authenticate(match[1]!) : null;
    if (!principal) {
      const address = `ip:${ctx.ip}`;
      const blocked = failures.peek(address);
      if (!blocked.allowed) {
        throw new AppError(429, 'rate_limited', `too many failed authentications from this address (${blocked.limit} a minute); try again later`, {
          headers: { 'Retry-After': String(blocked.resetSeconds) },
        });
      }
      failures.take(address);
      throw new AppError(401, 'unauthorized', header ? 'the bearer token is unknown or revoked' : 'send Authorization: Bearer <token>');
    }
    ctx.state.principal = principal;
    const rate = ctx.deps.rateLimiter.take(principal.keyId);
    if (rate.limit !== policyLimit) policy = `"default";q=${(policyLimit = rate.limit)};w=60`;
    // On Node's response, as Koa's ctx.set would (nothing is sent yet), without its per-call arrays (issue 48).
    ctx.res.setHeader('RateLimit-Policy', policy);
    ctx.res.setHeader('RateLimit', `"default";r=${rate.remaining};t=${rate.resetSeconds}`);
    if (!rate.allowed) {
      throw new AppError(429, 'rate_limited', `rate limit of ${rate.limit} requests a minute exceeded`, {
        headers: { 'Retry-After': String(rate.resetSeconds) },
      });
    }
    return next();
  };
}
