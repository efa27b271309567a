import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Router from '@koa/router';
import { ROUTER_OPTIONS } from '../routing.ts';
import { sourceFile } from '../../src/infra/paths.ts';

/** The widget's source: plain JavaScript, served as it is (no build step). */
export const EMBED_SCRIPT_PATH = sourceFile('web', 'embed.js');

/**
 * Serves `GET /embed.js`, the chat widget that web pages load with the embed snippet
 * `<script src="{base_url}/embed.js" data-agent="wgt_..." async></script>`.
 * The file is read once, when the router is built: a changed widget ships with a restart, and
 * its strong ETag lets browsers revalidate a cached copy with a 304 after the five-minute max-age.
 * Any page may load it (`Access-Control-Allow-Origin: *`, `Cross-Origin-Resource-Policy:
 * cross-origin`, so pages with COEP can too); which pages may talk to an agent is decided by
 * the public endpoints against the agent's `domains`.
 *
 * @example
 * const embed = embedRouter();
 * app.use(embed.routes());
 */
export function embedRouter(file: string = EMBED_SCRIPT_PATH): Router {
  const body = readFileSync(file);
  const etag = `"${createHash('sha256').update(body).digest('base64url')}"`;
  const router = new Router(ROUTER_OPTIONS);
  router.get('/embed.js', (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.set('Cross-Origin-Resource-Policy', 'cross-origin');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('ETag', etag);
    if (noneMatch(ctx.get('If-None-Match'), etag)) {
      ctx.status = 304;
      return;
    }
    ctx.type = 'application/javascript; charset=utf-8';
    ctx.body = body;
  });
  return router;
}

/**
 * Whether an If-None-Match value names our ETag (RFC 9110 13.1.2: weak comparison, lists, `*`).
 * Not Koa's `ctx.fresh`: it also requires the request to lack `Cache-Control: no-cache`, which is
 * a rule for caches, and fetch() adds exactly that header to every conditional request it sends.
 */
function noneMatch(header: string, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}
