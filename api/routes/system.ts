import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import Router from '@koa/router';
import { ROUTER_OPTIONS } from '../routing.ts';
import type { AppContext } from '../context.ts';

const swaggerDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const DOC_ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const DOCS_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Agent Management Service API</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="/docs/assets/favicon-32x32.png"><link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><div id="reference"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script><script src="/docs/init.js"></script></body></html>`;

const DOCS_INIT = `window.ui = SwaggerUIBundle({ url: '/api/v1/openapi.json', dom_id: '#reference', deepLinking: true,
  persistAuthorization: true, tryItOutEnabled: true, displayRequestDuration: true });`;

/**
 * Unauthenticated endpoints: liveness, readiness, the OpenAPI document and the browsable reference
 * (served from the package's own files: these machines reach no CDN).
 */
export function systemRouter(openApi: () => unknown): Router {
  const router = new Router(ROUTER_OPTIONS);
  const assets = new Map<string, Buffer>();
  router.get('/healthz', (ctx) => { ctx.body = { status: 'ok' }; });
  router.get('/readyz', async (ctx) => {
    const checks = await (ctx as unknown as AppContext).deps.checkReadiness();
    const ready = checks.postgres && checks.temporal;
    ctx.status = ready ? 200 : 503;
    ctx.body = { status: ready ? 'ready' : 'unavailable', checks: { postgres: checks.postgres ? 'ok' : 'unreachable', temporal: checks.temporal ? 'ok' : 'unreachable' } };
  });
  router.get('/api/v1/openapi.json', (ctx) => { ctx.body = openApi(); });
  router.get('/docs', (ctx) => { ctx.type = 'text/html; charset=utf-8'; ctx.body = DOCS_HTML; });
  router.get('/docs/init.js', (ctx) => { ctx.type = 'text/javascript; charset=utf-8'; ctx.body = DOCS_INIT; });
  router.get('/docs/assets/:file', async (ctx) => {
    const type = DOC_ASSETS[ctx.params.file!];
    if (!type) return; // falls through to the 404 problem
    let body = assets.get(ctx.params.file!);
    if (!body) {
      body = await readFile(join(swaggerDir, ctx.params.file!));
      assets.set(ctx.params.file!, body);
    }
    ctx.type = type;
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = body;
  });
  return router;
}
