import { AppError } from '../../src/errors.ts';
import type { AppMiddleware } from '../context.ts';
import type { RateLimiter } from './rate-limit.ts';

/**
 * The public endpoints have no token to count against: they count per client address
 * (PUBLIC_RATE_LIMIT_PER_MINUTE), so one page cannot flood an agent with conversations. The
 * RateLimit fields go on every public response, as on authenticated ones. The app mounts it in
 * the public area only.
 */
export function publicRateLimit(limiter: RateLimiter): AppMiddleware {
  return async (ctx, next) => {
    if (ctx.method === 'OPTIONS') return next();
    const rate = limiter.take(`ip:${ctx.ip}`);
    ctx.set('RateLimit-Policy', `"public";q=${rate.limit};w=60`);
    ctx.set('RateLimit', `"public";r=${rate.remaining};t=${rate.resetSeconds}`);
    if (!rate.allowed) {
      throw new AppError(429, 'rate_limited', `rate limit of ${rate.limit} requests a minute from one address exceeded`, {
        headers: { 'Retry-After': String(rate.resetSeconds) },
      });
    }
    await next();
  };
}
