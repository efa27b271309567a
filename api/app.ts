import Koa from 'koa';
import Router from '@koa/router';
import type { AppDeps, AppMiddleware } from './context.ts';
import { requestContext } from './middleware/request-context.ts';
import { errorHandler } from './middleware/errors.ts';
import { authenticate } from './middleware/authenticate.ts';
import { mountFamily, type RouteFamily } from './routing.ts';
import { buildOpenApi } from './openapi.ts';
import { systemRouter } from './routes/system.ts';
import { embedRouter } from './routes/embed.ts';
import { agentsFamily } from './routes/agents.ts';
import { apiKeysFamily } from './routes/api-keys.ts';
import { webhooksFamily } from './routes/webhooks.ts';
import { transferRulesFamily } from './routes/transfer-rules.ts';
import { sipTrunksFamily } from './routes/sip-trunks.ts';
import { widgetsFamily } from './routes/widgets.ts';
import { sitesFamily } from './routes/sites.ts';
import { knowledgeBasesFamily } from './routes/knowledge-bases.ts';
import { publicWidgetsFamily } from './routes/public-widgets.ts';
import { publicCors } from './middleware/cors.ts';
import { publicRateLimit } from './middleware/public-rate-limit.ts';
import { createRateLimiter } from './middleware/rate-limit.ts';
import { voiceProfilesFamily } from './routes/voice-profiles.ts';
import { emailInboxesFamily } from './routes/email-inboxes.ts';
import { conversationsFamily } from './routes/conversations.ts';
import { CARD_PATH, conversationCardsRouter } from './routes/conversation-cards.ts';
import { contactsFamily } from './routes/contacts.ts';
import { mcpEndpoint } from './mcp/endpoint.ts';

/** Every resource family the API serves, in the order the reference lists them. */
export const FAMILIES: RouteFamily[] = [agentsFamily, widgetsFamily, transferRulesFamily, apiKeysFamily, webhooksFamily, voiceProfilesFamily, sipTrunksFamily, emailInboxesFamily, sitesFamily, knowledgeBasesFamily, publicWidgetsFamily, conversationsFamily, contactsFamily];

export const API_VERSION = '1.0.0';

const isAuthenticatedPath = (path: string) =>
  path.startsWith('/api/v1/') && !path.startsWith('/api/v1/public/') && path !== '/api/v1/openapi.json';

/** Builds the Koa application: the error middleware first, then auth, then one router per family. */
export function createApp(deps: AppDeps): Koa {
  const app = new Koa({ proxy: false });
  app.silent = true; // errors are logged by our error middleware, with the request id
  (app.context as unknown as { deps: AppDeps }).deps = deps;

  let openApi: unknown;
  const system = systemRouter(() => (openApi ??= buildOpenApi(FAMILIES, { version: API_VERSION })));

  const api = new Router();
  for (const family of FAMILIES) mountFamily(api, family);

  const auth = authenticate();
  const authWhereNeeded: AppMiddleware = (ctx, next) => (isAuthenticatedPath(ctx.path) ? auth(ctx, next) : next());

  app.use(requestContext() as Koa.Middleware);
  // Before the error middleware: its problem documents keep the CORS headers.
  app.use(publicCors() as Koa.Middleware);
  app.use(errorHandler() as Koa.Middleware);
  app.use(publicRateLimit(createRateLimiter(deps.config.PUBLIC_RATE_LIMIT_PER_MINUTE)) as Koa.Middleware);
  // Resource paths never match a system route: spare them the second router.
  const routes = system.routes();
  const allowed = system.allowedMethods();
  app.use((ctx, next) => (ctx.path.startsWith('/api/v1/rest/') ? next() : routes(ctx as never, () => allowed(ctx as never, next))));
  const embed = embedRouter().routes();
  app.use((ctx, next) => (ctx.path === '/embed.js' ? embed(ctx as never, next) : next()));
  app.use(mcpEndpoint(FAMILIES, { version: API_VERSION, listener: () => app.callback() }) as Koa.Middleware);
  app.use(authWhereNeeded as Koa.Middleware);
  // The transcript cards behind `card_url`: public (a signed URL), HTML, so not a JSON route family.
  const cards = conversationCardsRouter().routes();
  app.use((ctx, next) => (ctx.path.startsWith(CARD_PATH) ? cards(ctx as never, next) : next()));
  app.use(api.routes());
  app.use(api.allowedMethods());
  return app;
}
