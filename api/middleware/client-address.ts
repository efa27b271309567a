import type { Socket } from 'node:net';
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
  // Without X-Forwarded-For the client is the peer, which a connection keeps: worked out once per
  // connection, not per request (parsing and normalizing it was 2-3 % of a GET's CPU; issue 48).
  const peers = new WeakMap<Socket, string>();
  // Not async: nothing to do after the rest of the chain, so no promise and no frame of its own to wait in.
  return (ctx, next) => {
    const forwardedFor = ctx.get('X-Forwarded-For');
    const socket = ctx.req.socket;
    let address = forwardedFor ? undefined : peers.get(socket);
    if (address === undefined) {
      address = clientAddress(socket.remoteAddress ?? '', forwardedFor || undefined, trusted);
      if (!forwardedFor && socket.remoteAddress !== undefined) peers.set(socket, address);
    }
    ctx.request.ip = address;
    return next();
  };
}
