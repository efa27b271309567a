import Koa from 'koa';
import Router from '@koa/router';
import compose from 'koa-compose';
import type { AppContext, AppDeps } from './context.ts';
import { logRequest, startRequest } from './middleware/request-context.ts';
import { clientAddressOf } from './middleware/client-address.ts';
import { refuseUnanswered, renderFailure } from './middleware/errors.ts';
import { authenticate } from './middleware/authenticate.ts';
import { auditTrail, isWrite } from './middleware/audit.ts';
import { compileFamily, registerRoutes, ROUTER_OPTIONS, type CompiledRoute, type RouteFamily } from './routing.ts';
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
import { MCP_PATH, mcpEndpoint } from './mcp/endpoint.ts';
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
 * Serves every request under `prefix` with the chain `chainOf` picks for it (guards, then routers' middleware); no
 * request under it goes further. The guards run before the routers, so an unknown path there is still guarded, then a
 * 404 from the router.
 */
function area(prefix: string, chainOf: (ctx: AppContext) => Koa.Middleware): Part {
  const under = `${prefix}/`;
  return (ctx, path) => (path === prefix || path.startsWith(under) ? chainOf(ctx)(ctx as Koa.Context, end) : undefined);
}

/** A router's dispatch and its 405/501/OPTIONS answers, as one middleware each. */
const served = (router: Router): Koa.Middleware[] => [router.routes() as Koa.Middleware, router.allowedMethods() as Koa.Middleware];

/**
 * The same two as one middleware, chained as koa-compose chains them (the dispatch first; `allowedMethods` runs when
 * no route took the request, as its `next`), without its bound frames and promises (issue 48). Each calls its `next`
 * at most once and returns a promise, which is all koa-compose added.
 */
function servedAlone(router: Router): Koa.Middleware {
  const routes = router.routes() as Koa.Middleware;
  const allowed = router.allowedMethods() as Koa.Middleware;
  return (ctx, next) => routes(ctx, () => allowed(ctx, next));
}

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
 * Where a request path goes below an area's prefix: its first two segments (`rest/agents`, null when it has fewer)
 * and how many segments it has. A trailing slash is not a segment: a route matches with or without one (non-strict).
 */
function pathKeyOf(path: string, prefix: string): { key: string | null; count: number } {
  const below = path.endsWith('/') ? path.slice(prefix.length, -1) : path.slice(prefix.length);
  let count = 0;
  let third = -1;
  for (let i = below.indexOf('/'); i !== -1; i = below.indexOf('/', i + 1)) if (++count === 3) third = i;
  return { key: count >= 2 ? below.slice(1, third === -1 ? undefined : third) : null, count };
}

/** How a route's own path is keyed: its first two segments if both are literal (else null), and its segment count. */
function routeKeyOf(path: string, prefix: string): { key: string | null; count: number } {
  const segments = path.slice(prefix.length).split('/');
  const literal = segments.length >= 3 && !segments.slice(1, 3).some((segment) => segment === '' || PATTERN.test(segment));
  return { key: literal ? `${segments[1]}/${segments[2]}` : null, count: segments.length - 1 };
}

/**
 * The routes of an area's families, matched against the ones that can match the request, not all of them:
 * @koa/router tests every route's pattern in turn (about 150 under /api/v1, a tenth of what a GET cost beyond a
 * bare route; issue 48, bench/README.md). The routes are grouped by their first two segments below the prefix
 * (`rest/agents`) and by their number of segments, one router per group, chosen by the request path's own two
 * segments and count. Every route's pattern is a fixed number of segments (a parameter never spans a `/`, and no
 * route has an optional or repeated part: checked here), so a route can match only paths of its own count. A route
 * whose first two segments are not both literal could match any path of its count: it is in every group of that
 * count, in its place, and alone in the group of a path no literal route starts with. Each router holds, in their
 * order, every route that can match the paths it serves, so the route that answers, and the 404, 405 and OPTIONS
 * answers (from the routes matching the path; an empty router answers as one whose routes match nothing), are those
 * of one router holding every route. Routes are matched case-sensitively, as the key is compared.
 */
function routeTable(families: RouteFamily[], prefix: string): Koa.Middleware {
  const routes: (CompiledRoute & { key: string | null; count: number })[] = [];
  for (const family of families) {
    if (!family.base.startsWith(prefix)) throw new Error(`family ${family.tag} (${family.base}) lies outside its area ${prefix}`);
    for (const r of compileFamily(family)) {
      // A parameter with its own pattern, an optional or repeated part, or a wildcard could span segments.
      if (/[*?+(){}\\]/.test(r.path)) throw new Error(`route ${r.method} ${r.path}: the route table takes fixed-segment paths only`);
      routes.push({ ...r, ...routeKeyOf(r.path, prefix) });
    }
  }
  const routerOf = (key: string | null, count: number) => {
    const router = new Router(ROUTER_OPTIONS);
    registerRoutes(router, routes.filter((r) => (r.key === null || r.key === key) && r.count === count));
    return servedAlone(router);
  };
  const groups = new Map<string, Koa.Middleware>();
  for (const r of routes) {
    const key = `${r.key}#${r.count}`;
    if (r.key !== null && !groups.has(key)) groups.set(key, routerOf(r.key, r.count));
  }
  // The paths no literal route's group serves: the routes of their count whose first two segments are not literal.
  const rest = new Map<number, Koa.Middleware>();
  const restOf = (count: number) => {
    let router = rest.get(count);
    if (!router) rest.set(count, (router = routerOf(null, count)));
    return router;
  };
  for (const count of new Set(routes.map((r) => r.count))) restOf(count);
  const none = routerOf(null, -1);
  return (ctx, next) => {
    const { key, count } = pathKeyOf(ctx.path, prefix);
    return ((key !== null && groups.get(`${key}#${count}`)) || rest.get(count) || none)(ctx, next);
  };
}

/**
 * The one frame of the application's chain (issue 48, round five: each frame cost a bound dispatch and a promise, and
 * each read the path through Koa's delegates): sets the client address (`ctx.ip`) first, then the request id and its
 * logger, asks the parts in order for the one serving the path, turns what nothing answered into 404 (or the router's
 * bare 405) and whatever was thrown into a problem, and writes the access line last, once the answer is final. This
 * is what the client-address, request-context and error middleware did as three frames, in the same order.
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
    routeTable(publicFamilies, PUBLIC_PREFIX), ...served(conversationCardsRouter()), ...served(reportArtifactsRouter())] as Koa.Middleware[]);
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
