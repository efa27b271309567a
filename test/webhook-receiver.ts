import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';

/** One request a receiver got. */
export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** How a path answers: `failFirst` requests with `failStatus` (default 500), then `status` (default 200) with `body` (default "ok"), each after `delayMs`. */
export interface Behaviour { failFirst?: number; failStatus?: number; status?: number; headers?: Record<string, string>; body?: string; delayMs?: number }

/**
 * A local webhook receiver (node:http on 127.0.0.1) with one inbox per path, so each test gets
 * its own URL and its own answers.
 */
export interface Receiver {
  /** A new URL on this receiver, answering as `behaviour` says. */
  url(behaviour?: Behaviour): string;
  /** What the path of `url` received so far. */
  received(url: string): Received[];
  /** The most requests the path of `url` had open at once (received, not yet answered). */
  peakOpen(url: string): number;
  /** Changes how the path of `url` answers from now on (counting restarts). */
  setBehaviour(url: string, behaviour: Behaviour): void;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const inboxes = new Map<string, { behaviour: Behaviour; requests: Received[]; open: number; peakOpen: number }>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    const path = req.url ?? '/';
    const inbox = inboxes.get(path) ?? { behaviour: { status: 404 }, requests: [], open: 0, peakOpen: 0 };
    inbox.open += 1;
    inbox.peakOpen = Math.max(inbox.peakOpen, inbox.open);
    res.once('close', () => { inbox.open -= 1; });
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      inbox.requests.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      const b = inbox.behaviour;
      const failing = inbox.requests.length <= (b.failFirst ?? 0);
      const answer = () => {
        res.writeHead(failing ? (b.failStatus ?? 500) : (b.status ?? 200), b.headers);
        res.end(failing ? 'not now' : (b.body ?? 'ok'));
      };
      if (b.delayMs) setTimeout(answer, b.delayMs); else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const inboxOf = (url: string) => {
    const inbox = inboxes.get(new URL(url).pathname);
    if (!inbox) throw new Error(`not a receiver URL: ${url}`);
    return inbox;
  };
  return {
    url(behaviour = {}) {
      const path = `/hooks/${randomBytes(6).toString('hex')}`;
      inboxes.set(path, { behaviour, requests: [], open: 0, peakOpen: 0 });
      return base + path;
    },
    received: (url) => inboxOf(url).requests,
    peakOpen: (url) => inboxOf(url).peakOpen,
    setBehaviour(url, behaviour) {
      const inbox = inboxOf(url);
      inbox.behaviour = behaviour;
    },
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
