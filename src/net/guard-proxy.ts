import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Dispatcher } from 'undici';
import { undici } from './undici.ts';
import { createOutboundAgent, OutboundTargetError, resolveOutboundHost, type OutboundPolicy } from './outbound.ts';

/**
 * A forward HTTP proxy on 127.0.0.1 that applies the outbound policy to every connection a client
 * makes through it: headless Chromium runs with it as its only way out (issue 40, D12). A plain
 * request is forwarded by the outbound agent (resolved, checked, connected to the checked address);
 * a CONNECT tunnel (https, wss) is opened to the address that was checked, never to a second lookup
 * (DNS rebinding), and TLS stays end to end between the browser and the site.
 */

export interface GuardProxy {
  /** `http://127.0.0.1:<port>`, for the browser's proxy setting. */
  readonly url: string;
  close(): Promise<void>;
}

export interface GuardProxyOptions {
  policy: OutboundPolicy;
  /**
   * Origins (`http://host:port`) reached whatever the policy says: this service's own, which the
   * embed script and the widget's API calls come from. The caller decides which paths of it may be
   * asked for (the proxy sees no path inside a tunnel).
   */
  trustedOrigins?: readonly string[];
  /** Called for each refused request, with the origin asked for and why. */
  onBlocked(origin: string, reason: OutboundTargetError['code']): void;
  /** Called with what went wrong reaching an allowed target (for logs only: never shown to users). */
  onError?(origin: string, err: Error): void;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer',
  'transfer-encoding', 'upgrade', 'host']);
const TUNNEL_CONNECT_TIMEOUT_MS = 10_000;

const originOf = (protocol: string, host: string, port: string) => {
  const bare = host.replace(/^\[|\]$/g, '');
  const shown = bare.includes(':') ? `[${bare}]` : bare;
  const defaultPort = protocol === 'https:' ? '443' : '80';
  return `${protocol}//${shown}${port && port !== defaultPort ? `:${port}` : ''}`;
};

/** `host:port` of a CONNECT request, its host unbracketed; null when malformed. */
function tunnelTarget(authority: string | undefined): { host: string; port: number } | null {
  const match = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(authority ?? '');
  if (!match) return null;
  const port = Number(match[2]);
  return port > 0 && port < 65536 ? { host: match[1]!.replace(/^\[|\]$/g, ''), port } : null;
}

/**
 * Starts the proxy. Each refusal is answered at once (403 to a plain request, a failed tunnel to a
 * CONNECT) and reported through `onBlocked`; the refused target is never contacted.
 *
 * @example
 * const proxy = await startGuardProxy({ policy: outboundPolicy(config), onBlocked: (o, r) => blocked.push({ o, r }) });
 * await chromium.launch({ proxy: { server: proxy.url } });
 */
export async function startGuardProxy(opts: GuardProxyOptions): Promise<GuardProxy> {
  const guarded = createOutboundAgent(opts.policy, { connections: 8 });
  const { Agent } = undici();
  const trustedAgent: Dispatcher = new Agent({ connections: 8 });
  const trusted = new Set(opts.trustedOrigins ?? []);
  const sockets = new Set<Socket>();

  const server: Server = createServer((req, res) => { void forward(req, res); });
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => { void tunnel(req, client, head); });
  // A plain-text WebSocket handshake (ws:) through the proxy: refused outright, wss: comes as a tunnel.
  server.on('upgrade', (_req: IncomingMessage, client: Socket) => client.destroy());
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let target: URL;
    try {
      target = new URL(req.url ?? '');
      if (target.protocol !== 'http:') throw new TypeError('not an absolute http URL');
    } catch {
      res.writeHead(400).end();
      return;
    }
    const origin = originOf(target.protocol, target.hostname, target.port);
    const isTrusted = trusted.has(origin);
    if (!isTrusted) {
      try {
        await resolveOutboundHost(target.hostname, opts.policy);
      } catch (err) {
        refuse(origin, err as Error);
        res.writeHead(err instanceof OutboundTargetError && err.code === 'private_network_target' ? 403 : 502, { 'content-type': 'text/plain' })
          .end();
        return;
      }
    }
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
    }
    try {
      const upstream = await undici().request(target, {
        method: req.method as Dispatcher.HttpMethod, headers, dispatcher: isTrusted ? trustedAgent : guarded,
        body: req.method === 'GET' || req.method === 'HEAD' ? null : req,
        headersTimeout: 30_000, bodyTimeout: 30_000,
      });
      const out: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(upstream.headers)) {
        if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
      }
      res.writeHead(upstream.statusCode, out);
      for await (const chunk of upstream.body) {
        if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve));
      }
      res.end();
    } catch (err) {
      // A refusal at connection time (the name now resolves elsewhere: DNS rebinding) is a block too.
      const cause = (err as { cause?: unknown }).cause;
      if (err instanceof OutboundTargetError || cause instanceof OutboundTargetError) refuse(origin, (cause instanceof OutboundTargetError ? cause : err) as Error);
      else opts.onError?.(origin, err as Error);
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    }
  }

  async function tunnel(req: IncomingMessage, client: Socket, head: Buffer): Promise<void> {
    client.on('error', () => undefined);
    const target = tunnelTarget(req.url);
    if (!target) {
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    const origin = originOf(target.port === 80 ? 'http:' : 'https:', target.host, String(target.port));
    let address = target.host;
    if (!trusted.has(origin)) {
      try {
        address = (await resolveOutboundHost(target.host, opts.policy))[0]!.address;
      } catch (err) {
        refuse(origin, err as Error);
        client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
        return;
      }
    }
    const upstream = connect({ host: address, port: target.port, timeout: TUNNEL_CONNECT_TIMEOUT_MS });
    upstream.once('timeout', () => upstream.destroy(new Error('connect timeout')));
    upstream.once('error', (err) => {
      opts.onError?.(origin, err);
      if (client.writable) client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
    });
    upstream.once('connect', () => {
      upstream.setTimeout(0);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
      client.once('close', () => upstream.destroy());
      upstream.once('close', () => client.destroy());
    });
  }

  function refuse(origin: string, err: Error): void {
    if (err instanceof OutboundTargetError) opts.onBlocked(origin, err.code);
    else opts.onError?.(origin, err);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
      await Promise.all([guarded.destroy(), trustedAgent.destroy()]);
    },
  };
}
