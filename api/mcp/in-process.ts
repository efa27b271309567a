import type { RequestListener } from 'node:http';
import inject from 'light-my-request';
import type { Principal } from '../../src/auth/authenticator.ts';
import { carriedPrincipals } from '../middleware/authenticate.ts';
import { carriedCallers } from '../middleware/audit.ts';
import type { ToolRequest } from './tools.ts';

/** A REST answer as a tool sees it: the JSON body, or for an image the bytes and their type. */
export interface Reply { status: number; body: unknown; image?: { mimeType: string; data: Buffer } }

/** Runs one REST request through the whole Koa app as a principal, without a socket. */
export type Caller = (request: ToolRequest & { idempotencyKey?: string }) => Promise<Reply>;

/**
 * A caller whose requests pass through every middleware and route of the app (permissions,
 * validation, idempotency, errors), as the principal of the MCP request that makes them and
 * under its request id. They are not counted against the rate limit again: each MCP message was
 * (authenticate counts the HTTP request, messages.ts each further message of a batch).
 */
export function inProcessCaller(listener: RequestListener, principal: Principal, origin: { requestId: string; host: string; address: string }): Caller {
  const dispatch: RequestListener = (req, res) => {
    carriedPrincipals.set(req, principal);
    carriedCallers.set(req, { channel: 'mcp', address: origin.address });
    listener(req, res);
  };
  return async ({ method, url, body, idempotencyKey }) => {
    const res = await inject(dispatch, {
      method, url,
      headers: {
        host: origin.host,
        'x-request-id': origin.requestId,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
      },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });
    const type = String(res.headers['content-type'] ?? '');
    // An image (a simulation's screenshot) stays bytes: MCP carries it as an image content block.
    if (res.statusCode < 300 && type.startsWith('image/')) return { status: res.statusCode, body: undefined, image: { mimeType: type.split(';')[0]!, data: res.rawPayload } };
    let parsed: unknown;
    try {
      parsed = res.payload ? JSON.parse(res.payload) : undefined;
    } catch {
      parsed = { text: res.payload };
    }
    return { status: res.statusCode, body: parsed };
  };
}
