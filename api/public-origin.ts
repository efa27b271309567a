import type { AppContext } from './context.ts';

/** A loopback name or address, with an optional port, and nothing else (no user info, no path). */
const LOOPBACK_HOST = /^(localhost|[a-z0-9-]+\.localhost|127(\.\d{1,3}){3}|\[::1\])(:\d{1,5})?$/i;

/**
 * The origin that links the service hands out name (transcript cards, report downloads, the embed
 * script a web simulation loads, carrier callbacks): PUBLIC_BASE_URL when it is set. Unset, a
 * request's own origin only when its Host is a loopback name (development on this machine), else
 * `http://localhost:<the port it came in on>`: a request's Host is never believed unchecked (issue
 * 40, I16), or a client could have a signed link name its host. X-Forwarded-Host and
 * X-Forwarded-Proto are never read (the app keeps Koa's `proxy` off).
 */
export function publicOrigin(ctx: AppContext): string {
  const configured = ctx.deps.config.PUBLIC_BASE_URL;
  if (configured) return configured.replace(/\/+$/, '');
  const host = ctx.get('Host');
  if (LOOPBACK_HOST.test(host)) return `${ctx.protocol}://${host}`;
  return `http://localhost:${ctx.req.socket.localPort ?? ctx.deps.config.PORT}`;
}
