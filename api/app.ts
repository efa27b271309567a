import Koa from 'koa';
import type Router from '@koa/router';
import compose from 'koa-compose';
import type { AppContext, AppDeps } from './context.ts';
import { logRequest, startRequest } from './middleware/request-context.ts';
import { clientAddressOf } from './middleware/client-address.ts';
import { refuseUnanswered, renderFailure } from './middleware/errors.ts';
import { authenticate } from './middleware/authenticate.ts';
import { auditTrail, isWrite } from './middleware/audit.ts';
import type { RouteFamily } from './routing.ts';
import { routeTable } from './route-table.ts';
import { loadFamilies } from './families.ts';
import { buildOpenApi } from './openapi.ts';
import { systemRouter } from './routes/system.ts';
import { embedRouter } from './routes/embed.ts';
import { inboxPageRouter } from './routes/inbox-page.ts';
import { errorPagesRouter } from './routes/error-pages.ts';
import { publicCors } from './middleware/cors.ts';
import { publicRateLimit } from './middleware/public-rate-limit.ts';
import { createRateLimiter } from './middleware/rate-limit.ts';
import { CARD_PATH, conversationCardsRouter } from './routes/conversation-cards.ts';
import { ARTIFACT_PATH } from '../src/reports/links.ts';
import { reportArtifactsRouter } from './routes/report-artifacts.ts';
import { MCP_PATH, mcpEndpoint } from './mcp/endpoint.ts';
import { carrierWebhooksRouter } from './routes/carrier-webhooks.ts';

/** Every resource family the API serves (each module of api/routes/ exporting one), in the order the reference lists them. */
export const FAMILIES: RouteFamily[] = await loadFamilies();

export const API_VERSION = '1.0.0';

/**
 * The API's two areas. Each family declares whether it is public (`RouteFamily.public`), which
 * puts its routes in one area's route table, reachable only through that area's own middleware:
 * nothing else decides by path whether a guard applies. An area takes every request under its
 * prefix (an unknown path there is still authenticated, then 404); case matters everywhere.
 */
const PUBLIC_PREFIX = '/api/v1/public';
const AUTHENTICATED_PREFIX = '/api/v1';

/** Characters by which a route's path is a pattern from there on (path-to-regexp's syntax), not literal text. */
const PATTERN = /[:*?+(){}\\]/;

/** The end of an area's or own paths' chain: nothing after it. */
const end = () => Promise.resolve();

/**
 * A part of the application: it serves the request (the promise of its answer) when the path is one of its own,
 * else answers undefined and the next part is asked. The front frame asks each in turn (createApp).
 */
type Part = (ctx: AppContext, path: string) => Promise<void> | undefined;

/**
 * Serves every request under `prefix` with the chain `chainOf` picks for it (guards, then the area's route table and
 * routers); no request under it goes further. The guards run before the table, so an unknown path there is still
 * guarded, then a 404.
 */
function area(prefix: string, chainOf: (ctx: AppContext) => Koa.Middleware): Part {
  const under = `${prefix}/`;
  return (ctx, path) => (path === prefix || path.startsWith(under) ? chainOf(ctx)(ctx as Koa.Context, end) : undefined);
}

/** A router's dispatch and its 405/501/OPTIONS answers, as one middleware each. */
const served = (router: Router): Koa.Middleware[] => [router.routes() as Koa.Middleware, router.allowedMethods() as Koa.Middleware];

/**
 * Serves the paths each router has routes for (any method: a 405 comes from it too), trying the routers in order;
 * other paths go further. A path that starts with none of a router's literal beginnings (each route's path before
 * its first pattern character; matching is case-sensitive) is no route of it: passed on without testing every
 * route's pattern, which every request under /api/v1 paid for five routers (issue 48). One middleware for all of
 * them, reading the path once: each was a frame of the application's chain of its own, which every request went
 * through (issue 48, round three).
 */
function ownPaths(routers: Router[]): Part {
  const own = routers.map((router) => {
    const beginnings = router.stack.map((layer) => (typeof layer.path === 'string' ? layer.path.split(PATTERN)[0]! : ''));
    return { router, beginnings, stack: compose(served(router)) };
  });
  return (ctx, path) => {
    for (const { router, beginnings, stack } of own) {
      if (beginnings.some((b) => path.startsWith(b)) && router.match(path, ctx.method).path.length > 0) return stack(ctx as Koa.Context, end);
    }
    return undefined;
  };
}

/**
 * The one frame of the application's chain (issue 48, round five: each frame cost a bound dispatch and a promise, and
 * each read the path through Koa's delegates): sets the client address (`ctx.ip`) first, then the request id and its
 * logger, asks the parts in order for the one serving the path, turns what nothing answered into 404 (or the table's
 * or a router's bare 405) and whatever was thrown into a problem, and writes the access line last, once the answer is
 * final. This is what the client-address, request-context and error middleware did as three frames, in the same order.
 */
function front(addressOf: (ctx: AppContext) => string, parts: Part[]): Koa.Middleware {
  return async (koaCtx) => {
    const ctx = koaCtx as unknown as AppContext;
    ctx.request.ip = addressOf(ctx);
    startRequest(ctx);
    const started = performance.now();
    try {
      const path = ctx.path;
      let served: Promise<void> | undefined;
      for (const part of parts) if ((served = part(ctx, path)) !== undefined) break;
      await served;
      refuseUnanswered(ctx);
    } catch (err) {
      renderFailure(ctx, err);
    } finally {
      logRequest(ctx, started);
    }
  };
}

/** Builds the Koa application: one front frame, then the system routes and the two areas (see `front`). */
export function createApp(deps: AppDeps): Koa {
  const app = new Koa({ proxy: false });
  app.silent = true; // errors are logged by our error middleware, with the request id
  (app.context as unknown as { deps: AppDeps }).deps = deps;

  let openApi: unknown;
  const system = systemRouter(() => (openApi ??= buildOpenApi(FAMILIES, { version: API_VERSION })));
  const publicFamilies = FAMILIES.filter((f) => f.public);
  const authenticatedFamilies = FAMILIES.filter((f) => !f.public);

  // Liveness, readiness, the OpenAPI document and reference, the embed script: no token.
  const own = ownPaths([
    system,
    embedRouter(),
    // The carrier's webhooks: authenticated by X-Twilio-Signature, not a bearer token, limited per client address; TwiML answers.
    carrierWebhooksRouter(deps.config.CARRIER_WEBHOOK_RATE_LIMIT_PER_MINUTE),
    inboxPageRouter(),
    // The page behind each problem's `type` URL.
    errorPagesRouter(),
  ]);
  // The widget endpoints and the transcript cards behind `card_url` (a signed URL, HTML): CORS
  // (on errors too, so the embed can read their code) and a rate limit per client address.
  const publicChain = compose([publicCors(), publicRateLimit(createRateLimiter(deps.config.PUBLIC_RATE_LIMIT_PER_MINUTE)),
    // The table asks the cards' and artifacts' routers only for paths none of its routes matches.
    routeTable(publicFamilies, PUBLIC_PREFIX, [CARD_PATH, ARTIFACT_PATH]),
    ...served(conversationCardsRouter()), ...served(reportArtifactsRouter())] as Koa.Middleware[]);
  // Everything else under /api/v1, and the MCP endpoint: a bearer token (unknown ones limited per client address), counted against its rate limit;
  // every write then goes into the audit log (MCP tool calls too: they run through this area in-process). A read skips
  // the audit frame, which passes reads on untouched.
  const auth = authenticate(createRateLimiter(deps.config.AUTH_FAILURE_LIMIT_PER_MINUTE));
  const table = routeTable(authenticatedFamilies, AUTHENTICATED_PREFIX);
  const reads = compose([auth, table] as Koa.Middleware[]);
  const writes = compose([auth, auditTrail(), table] as Koa.Middleware[]);
  const mcp = mcpEndpoint(FAMILIES, { version: API_VERSION, auth, listener: () => app.callback() });
  app.use(front(clientAddressOf(deps.config.TRUSTED_PROXIES), [
    own,
    area(PUBLIC_PREFIX, () => publicChain),
    (ctx, path) => (path === MCP_PATH ? mcp(ctx) : undefined),
    area(AUTHENTICATED_PREFIX, (ctx) => (isWrite(ctx.method) ? writes : reads)),
  ]));
  return app;
}
