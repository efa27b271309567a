import type { Socket } from 'node:net';
import { clientAddress, parseTrustedProxies } from '../../src/domain/client-address.ts';
import type { AppContext } from '../context.ts';

/**
 * The client's address of a request, which the front frame (api/app.ts) sets as `ctx.ip` first, so that
 * everything keyed on the client address (the failed-authentication limiter, the public rate limit, the
 * live stream cap) counts the client, not the load balancer: X-Forwarded-For is read only from a peer in
 * TRUSTED_PROXIES, right to left past trusted hops (src/domain/client-address.ts). The app keeps
 * Koa's `proxy` off, so X-Forwarded-Host and X-Forwarded-Proto are never believed.
 *
 * @example const addressOf = clientAddressOf('10.0.0.0/8'); ctx.request.ip = addressOf(ctx);
 */
export function clientAddressOf(trustedProxies: string): (ctx: AppContext) => string {
  const trusted = parseTrustedProxies(trustedProxies);
  // Without X-Forwarded-For the client is the peer, which a connection keeps: worked out once per
  // connection, not per request (parsing and normalizing it was 2-3 % of a GET's CPU; issue 48).
  const peers = new WeakMap<Socket, string>();
  return (ctx) => {
    // As Koa's ctx.get reads it, without its delegates (issue 48).
    const forwardedFor = (ctx.req.headers['x-forwarded-for'] as string | undefined) || '';
    const socket = ctx.req.socket;
    let address = forwardedFor ? undefined : peers.get(socket);
    if (address === undefined) {
      address = clientAddress(socket.remoteAddress ?? '', forwardedFor || undefined, trusted);
      if (!forwardedFor && socket.remoteAddress !== undefined) peers.set(socket, address);
    }
    return address;
  };
}
