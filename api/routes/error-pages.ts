import Router from '@koa/router';
import type { Context } from 'koa';
import { ROUTER_OPTIONS } from '../routing.ts';
import { ERRORS, ERROR_TYPE_BASE, type ErrorCode } from '../../src/errors.ts';

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
/** `code` spans of the table's text as <code>, the rest escaped. */
const prose = (text: string) => escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');

const STYLE = `body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:#1f2328;max-width:42rem;margin:3rem auto;padding:0 1rem}
h1{font-size:1.6rem;margin:.2rem 0 1rem}.code{color:#57606a;font-family:ui-monospace,Menlo,monospace}h2{font-size:1.05rem;margin:1.5rem 0 .3rem}
code{background:#f6f8fa;padding:.1rem .3rem;border-radius:4px;font-size:.9em}footer{margin-top:2.5rem;color:#57606a;font-size:.9rem}`;

/** The page of one error code: its title, what it means and what to do, from the one table in src/errors.ts. */
export function errorPage(code: ErrorCode): string {
  const e = ERRORS[code];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(e.title)} (${code})</title><style>${STYLE}</style></head>
<body><main>
<p class="code">HTTP ${e.status} · <code>${code}</code></p>
<h1>${escapeHtml(e.title)}</h1>
<h2>What it means</h2><p>${prose(e.means)}</p>
<h2>What to do</h2><p>${prose(e.todo)}</p>
<footer>Every error of the API is an RFC 9457 problem whose <code>type</code> is <code>${escapeHtml(ERROR_TYPE_BASE)}${code}</code>
and whose <code>code</code> is <code>${code}</code>: branch on <code>code</code>, never on text. The <code>request_id</code> of a
problem finds it in the service's logs. <a href="/errors">All error codes</a> · <a href="/docs">API reference</a></footer>
</main></body></html>`;
}

function indexPage(): string {
  const rows = (Object.keys(ERRORS) as ErrorCode[])
    .map((code) => `<li><a href="/errors/${code}"><code>${code}</code></a> (${ERRORS[code].status}): ${escapeHtml(ERRORS[code].title)}</li>`).join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Error codes</title><style>${STYLE}</style></head>
<body><main><h1>Error codes</h1><ul>
${rows}
</ul><footer><a href="/docs">API reference</a></footer></main></body></html>`;
}

/**
 * The pages behind problems' `type` URLs (issue 42): `/errors/<code>` is a short human page per
 * code, `/errors` lists them; an unknown code is the 404 problem. A documentation host serving
 * `ERROR_TYPE_BASE` proxies to these.
 *
 * @example
 * app.use(errorPagesRouter().routes());
 */
export function errorPagesRouter(): Router {
  const router = new Router(ROUTER_OPTIONS);
  const send = (ctx: Context, html: string) => {
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = html;
  };
  router.get('/errors', (ctx) => send(ctx, indexPage()));
  router.get('/errors/:code', (ctx) => {
    const code = ctx.params.code!;
    if (!Object.hasOwn(ERRORS, code)) return; // falls through to the 404 problem
    send(ctx, errorPage(code as ErrorCode));
  });
  return router;
}
