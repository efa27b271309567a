import type { RequestListener } from 'node:http';
import { AppError } from '../../src/errors.ts';
import type { AppContext, AppMiddleware } from '../context.ts';
import type { RouteFamily } from '../routing.ts';

export const MCP_PATH = '/mcp';

/**
 * `POST /mcp`: the MCP Streamable HTTP transport of the official SDK, stateless (no session, a
 * fresh server per request, JSON responses), so any replica answers. The same bearer tokens,
 * rate limit (one unit per JSON-RPC message; batches of 20 at most, messages.ts) and request ids
 * as the REST API; every tool call runs through the REST app itself
 * (`listener`), so the tools need nothing of their own. The SDK is loaded on the first call
 * (serve.ts), not at start-up.
 *
 * It serves MCP_PATH only: the app sends it the requests of that path (api/app.ts).
 *
 * @example const mcp = mcpEndpoint(FAMILIES, { version: '1.0.0', auth: authenticate(failures), listener: () => app.callback() }); await mcp(ctx);
 */
export function mcpEndpoint(families: RouteFamily[], opts: { version: string; auth: AppMiddleware; listener: () => RequestListener }): (ctx: AppContext) => Promise<void> {
  const { auth } = opts;
  let handler: Promise<(ctx: AppContext) => Promise<void>> | undefined;

  const serve = async (ctx: AppContext): Promise<void> => {
    // A stateless server has no stream to offer on GET and no session to end on DELETE.
    if (ctx.method !== 'POST') {
      throw new AppError(405, 'method_not_allowed', `${ctx.method} is not allowed on ${MCP_PATH}: this stateless MCP server takes POST only`, {
        headers: { Allow: 'POST' },
      });
    }
    handler ??= import('./serve.ts').then((m) => m.createMcpHandler(families, opts));
    await (await handler)(ctx);
  };

  return (ctx) => auth(ctx, () => serve(ctx)) as Promise<void>;
}
