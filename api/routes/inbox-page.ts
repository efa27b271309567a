import { readFileSync } from 'node:fs';
import Router from '@koa/router';
import { ROUTER_OPTIONS } from '../routing.ts';
import { sourceFile } from '../../src/infra/paths.ts';

const WEB = (name: string) => sourceFile('web', name);

/** The operator page's files, served as they are (no build step), and the type each is served with. */
const FILES: Record<string, { file: string; type: string }> = {
  '/inbox': { file: 'inbox.html', type: 'text/html; charset=utf-8' },
  '/inbox.js': { file: 'inbox.js', type: 'application/javascript; charset=utf-8' },
  '/inbox.css': { file: 'inbox.css', type: 'text/css; charset=utf-8' },
};

/**
 * Serves the live inbox operator page at `/inbox`: a member pastes a user token and works the
 * live conversations through the REST API and its live stream. The page holds no secret; its
 * Content-Security-Policy allows only its own script, style and API.
 *
 * @example
 * app.use(inboxPageRouter().routes());
 */
export function inboxPageRouter(): Router {
  const router = new Router(ROUTER_OPTIONS);
  for (const [path, { file, type }] of Object.entries(FILES)) {
    const body = readFileSync(WEB(file));
    router.get(path, (ctx) => {
      ctx.set('Cache-Control', 'no-cache');
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.set('Content-Security-Policy', "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
      ctx.set('Referrer-Policy', 'no-referrer');
      ctx.type = type;
      ctx.body = body;
    });
  }
  return router;
}
