import type { RequestListener } from 'node:http';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { AppContext } from '../context.ts';
import { readJsonBody } from '../middleware/body.ts';
import type { RouteFamily } from '../routing.ts';
import { inProcessCaller } from './in-process.ts';
import { batchRefusal, inRequestOrder, screenMessages } from './messages.ts';
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

/** The JSON-RPC answers of a 200 JSON response, as a list (the SDK answers a lone request with an object). */
function answersOf(text: string): { id?: unknown }[] {
  const parsed = JSON.parse(text) as { id?: unknown } | { id?: unknown }[];
  return Array.isArray(parsed) ? parsed : [parsed];
}

/**
 * Answers an authenticated `POST /mcp` with the official SDK's Streamable HTTP transport: a fresh
 * stateless server per request, JSON responses. Loaded by endpoint.ts on the first such request
 * (the SDK and its schemas hold about 17 MiB an idle service does not need).
 *
 * Before the SDK sees a body, a batch over MCP_MAX_BATCH is refused whole (400, JSON-RPC -32600),
 * each message past the first takes one unit of the token's rate limit, and requests past the budget
 * or with malformed params are answered here (messages.ts); the SDK's answers and these are merged.
 */
export function createMcpHandler(families: RouteFamily[], opts: { version: string; listener: () => RequestListener }): (ctx: AppContext) => Promise<void> {
  const tools = buildRouteTools(families);
  let listener: RequestListener | undefined;
  return async (ctx) => {
    const parsedBody = await readJsonBody(ctx);
    const principal = ctx.state.principal!;
    const refusal = batchRefusal(parsedBody);
    if (refusal) {
      ctx.status = 400;
      ctx.body = refusal;
      return;
    }
    const { forward, answered } = parsedBody === undefined ? { forward: [], answered: [] } : screenMessages(parsedBody, () => ctx.deps.rateLimiter.take(principal.keyId));
    if (parsedBody !== undefined) {
      // What the batch left of the budget, where authenticate wrote what the request found.
      const rate = ctx.deps.rateLimiter.peek(principal.keyId);
      ctx.set('RateLimit', `"default";r=${rate.remaining};t=${rate.resetSeconds}`);
    }
    let answers: { id?: unknown }[] = [];
    if (forward.length || parsedBody === undefined) {
      listener ??= opts.listener();
      const server = createMcpServer({
        tools, principal, requestId: ctx.state.requestId, version: opts.version,
        call: inProcessCaller(listener, principal, { requestId: ctx.state.requestId, host: ctx.host || 'localhost', address: ctx.ip }),
      });
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      try {
        await server.connect(transport);
        const batch = Array.isArray(parsedBody);
        const response = await transport.handleRequest(webRequest(ctx), { parsedBody: batch ? forward : forward[0] ?? parsedBody });
        response.headers.forEach((value, name) => ctx.set(name, value));
        const text = await response.text();
        // As the SDK answered: one message; a body the transport refused whole (406, 415, a message that
        // is no JSON-RPC); notifications only (202, empty), unless some requests were answered here.
        if (!batch || (response.status !== 200 && (response.status !== 202 || !answered.length))) {
          ctx.status = response.status;
          ctx.body = text;
          return;
        }
        if (response.status === 200) answers = answersOf(text);
      } finally {
        await server.close();
      }
    }
    answers = inRequestOrder(parsedBody, [...answers, ...answered]);
    ctx.status = 200;
    ctx.body = Array.isArray(parsedBody) ? answers : answers[0];
  };
}
