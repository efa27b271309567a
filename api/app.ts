import Koa from 'koa';
import Router from '@koa/router';
import compose from 'koa-compose';
import type { AppDeps, AppMiddleware } from './context.ts';
import { requestContext } from './middleware/request-context.ts';
import { clientAddressOf } from './middleware/client-address.ts';
import { errorHandler } from './middleware/errors.ts';
import { authenticate } from './middleware/authenticate.ts';
import { auditTrail } from './middleware/audit.ts';
import { mountFamily, ROUTER_OPTIONS, type RouteFamily } from './routing.ts';
import { loadFamilies } from './families.ts';
import { buildOpenApi } from './openapi.ts';
import { systemRouter } from './routes/system.ts';
import { embedRouter } from './routes/embed.ts';
import { inboxPageRouter } from './routes/inbox-page.ts';
import { errorPagesRouter } from './routes/error-pages.ts';
import { publicCors } from './middleware/cors.ts';
import { publicRateLimit } from './middleware/public-rate-limit.ts';
import { createRateLimiter } from './middleware/rate-limit.ts';
import { conversationCardsRouter } from './routes/conversation-cards.ts';
import { reportArtifactsRouter } from './routes/report-artifacts.ts';
import { mcpEndpoint } from './mcp/endpoint.ts';
import { carrierWebhooksRouter } from './routes/carrier-webhooks.ts';

/** Every resource family the API serves (each module of api/routes/ exporting one), in the order the reference lists them. */
export const FAMILIES: RouteFamily[] = await loadFamilies();

export const API_VERSION = '1.0.0';

/**
 * The API's two areas. Each family declares whether it is public (`RouteFamily.public`), which
 * puts its routes in one area's router, reachable only through that area's own middleware:
 * nothing else decides by path whether a guard applies. An area takes every request under its
 * prefix (an unknown path there is still authenticated, then 404); case matters everywhere.
 */
const PUBLIC_PREFIX = '/api/v1/public';
const AUTHENTICATED_PREFIX = '/api/v1';

/** The end of an area's or own paths' chain: nothing after it. */
const end = () => Promise.resolve();

/**
 * Serves `routers` behind `guards` for every request under `prefix`; no request under it goes further.
 * The guards run before the routers, so an unknown path there is still guarded, then a 404 from the router.
 */
function area(prefix: string, guards: AppMiddleware[], routers: Router[]): Koa.Middleware {
  const stack = compose([
    ...guards as Koa.Middleware[],
    ...routers.flatMap((r) => [r.routes() as Koa.Middleware, r.allowedMethods() as Koa.Middleware]),
  ]);
  const under = `${prefix}/`;
  return (ctx, next) => (ctx.path === prefix || ctx.path.startsWith(under) ? stack(ctx, end) : next());
}

/** Serves the paths `router` has routes for (any method: a 405 comes from it too); other paths go further. */
function ownPaths(router: Router): Koa.Middleware {
  const stack = compose([router.routes() as Koa.Middleware, router.allowedMethods() as Koa.Middleware]);
  return (ctx, next) => (router.match(ctx.path, ctx.method).path.length > 0 ? stack(ctx, end) : next());
}

function familyRouter(families: RouteFamily[], prefix: string): Router {
  const router = new Router(ROUTER_OPTIONS);
  for (const family of families) {
    if (!family.base.startsWith(prefix)) throw new Error(`family ${family.tag} (${family.base}) lies outside its area ${prefix}`);
    mountFamily(router, family);
  }
  return router;
}

/** Builds the Koa application: request id and errors first, then the system routes and the two areas. */
export function createApp(deps: AppDeps): Koa {
  const app = new Koa({ proxy: false });
  app.silent = true; // errors are logged by our error middleware, with the request id
  (app.context as unknown as { deps: AppDeps }).deps = deps;

  let openApi: unknown;
  const system = systemRouter(() => (openApi ??= buildOpenApi(FAMILIES, { version: API_VERSION })));
  const publicFamilies = FAMILIES.filter((f) => f.public);
  const authenticatedFamilies = FAMILIES.filter((f) => !f.public);

  app.use(clientAddressOf(deps.config.TRUSTED_PROXIES) as Koa.Middleware);
  app.use(requestContext() as Koa.Middleware);
  app.use(errorHandler() as Koa.Middleware);
  // Liveness, readiness, the OpenAPI document and reference, the embed script: no token.
  app.use(ownPaths(system));
  app.use(ownPaths(embedRouter()));
  // The carrier's webhooks: authenticated by X-Twilio-Signature, not a bearer token, limited per client address; TwiML answers.
  app.use(ownPaths(carrierWebhooksRouter(deps.config.CARRIER_WEBHOOK_RATE_LIMIT_PER_MINUTE)));
  app.use(ownPaths(inboxPageRouter()));
  // The page behind each problem's `type` URL.
  app.use(ownPaths(errorPagesRouter()));
  // The widget endpoints and the transcript cards behind `card_url` (a signed URL, HTML): CORS
  // (on errors too, so the embed can read their code) and a rate limit per client address.
  app.use(area(PUBLIC_PREFIX, [publicCors(), publicRateLimit(createRateLimiter(deps.config.PUBLIC_RATE_LIMIT_PER_MINUTE))],
    [familyRouter(publicFamilies, PUBLIC_PREFIX), conversationCardsRouter(), reportArtifactsRouter()]));
  // Everything else under /api/v1, and the MCP endpoint: a bearer token (unknown ones limited per client address), counted against its rate limit;
  // every write then goes into the audit log (MCP tool calls too: they run through this area in-process).
  const auth = authenticate(createRateLimiter(deps.config.AUTH_FAILURE_LIMIT_PER_MINUTE));
  app.use(mcpEndpoint(FAMILIES, { version: API_VERSION, auth, listener: () => app.callback() }) as Koa.Middleware);
  app.use(area(AUTHENTICATED_PREFIX, [auth, auditTrail()], [familyRouter(authenticatedFamilies, AUTHENTICATED_PREFIX)]));
  return app;
}
