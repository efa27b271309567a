import { clientAddress, parseTrustedProxies } from '../../src/domain/client-address.ts';
import type { AppMiddleware } from '../context.ts';

/**
 * Sets `ctx.ip` to the client's address once, first in the chain, so that everything keyed on the
 * client address (the failed-authentication limiter, the public rate limit, the live stream cap)
 * counts the client, not the load balancer: X-Forwarded-For is read only from a peer in
 * TRUSTED_PROXIES, right to left past trusted hops (src/domain/client-address.ts). The app keeps
 * Koa's `proxy` off, so X-Forwarded-Host and X-Forwarded-Proto are never believed.
 *
 * @example app.use(clientAddressOf('10.0.0.0/8'));
 */
export function clientAddressOf(trustedProxies: string): AppMiddleware {
  const trusted = parseTrustedProxies(trustedProxies);
  return async (ctx, next) => {
    ctx.request.ip = clientAddress(ctx.req.socket.remoteAddress ?? '', ctx.get('X-Forwarded-For') || undefined, trusted);
    await next();
  };
}
