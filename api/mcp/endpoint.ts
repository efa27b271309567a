import type { RequestListener } from 'node:http';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { AppError } from '../../src/errors.ts';
import type { AppContext, AppMiddleware } from '../context.ts';
import { readJsonBody } from '../middleware/body.ts';
import type { RouteFamily } from '../routing.ts';
import { inProcessCaller } from './in-process.ts';
import { createMcpServer } from './server.ts';
import { buildRouteTools } from './tools.ts';

export const MCP_PATH = '/mcp';

/** Hop-by-hop and framing headers describe the HTTP message, not the JSON-RPC one handed on. */
const DROPPED_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade']);

function webRequest(ctx: AppContext): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(ctx.req.headers)) {
    if (value === undefined || DROPPED_HEADERS.has(name)) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  return new Request(new URL(ctx.originalUrl, 'http://localhost'), { method: 'POST', headers });
}

/**
 * `POST /mcp`: the MCP Streamable HTTP transport of the official SDK, stateless (no session, a
 * fresh server per request, JSON responses), so any replica answers. The same bearer tokens,
 * rate limit and request ids as the REST API; every tool call runs through the REST app itself
 * (`listener`), so the tools need nothing of their own.
 *
 * @example app.use(mcpEndpoint(FAMILIES, { version: '1.0.0', auth: authenticate(failures), listener: () => app.callback() }))
 */
export function mcpEndpoint(families: RouteFamily[], opts: { version: string; auth: AppMiddleware; listener: () => RequestListener }): AppMiddleware {
  const tools = buildRouteTools(families);
  const { auth } = opts;
  let listener: RequestListener | undefined;

  const serve = async (ctx: AppContext): Promise<void> => {
    // A stateless server has no stream to offer on GET and no session to end on DELETE.
    if (ctx.method !== 'POST') {
      throw new AppError(405, 'method_not_allowed', `${ctx.method} is not allowed on ${MCP_PATH}: this stateless MCP server takes POST only`, {
        headers: { Allow: 'POST' },
      });
    }
    const parsedBody = await readJsonBody(ctx);
    listener ??= opts.listener();
    const server = createMcpServer({
      tools, principal: ctx.state.principal!, requestId: ctx.state.requestId, version: opts.version,
      call: inProcessCaller(listener, ctx.state.principal!, { requestId: ctx.state.requestId, host: ctx.host || 'localhost' }),
    });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    try {
      await server.connect(transport);
      const response = await transport.handleRequest(webRequest(ctx), { parsedBody });
      ctx.status = response.status;
      response.headers.forEach((value, name) => ctx.set(name, value));
      ctx.body = await response.text(); // notifications only: 202 and an empty body
    } finally {
      await server.close();
    }
  };

  return (ctx, next) => (ctx.path === MCP_PATH ? auth(ctx, () => serve(ctx)) : next());
}
