import type { RequestListener } from 'node:http';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { AppContext } from '../context.ts';
import { readJsonBody } from '../middleware/body.ts';
import type { RouteFamily } from '../routing.ts';
import { inProcessCaller } from './in-process.ts';
import { createMcpServer } from './server.ts';
import { buildRouteTools } from './tools.ts';

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
 * Answers an authenticated `POST /mcp` with the official SDK's Streamable HTTP transport: a fresh
 * stateless server per request, JSON responses. Loaded by endpoint.ts on the first such request
 * (the SDK and its schemas hold about 17 MiB an idle service does not need).
 */
export function createMcpHandler(families: RouteFamily[], opts: { version: string; listener: () => RequestListener }): (ctx: AppContext) => Promise<void> {
  const tools = buildRouteTools(families);
  let listener: RequestListener | undefined;
  return async (ctx) => {
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
}
