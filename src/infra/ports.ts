import { createServer } from 'node:net';

/**
 * Asks the kernel for a currently unused TCP port on 127.0.0.1.
 *
 * The port is released before returning, so another process could grab it in
 * between; callers that spawn a server on it should treat "address in use" as
 * a retryable failure.
 */
export async function getFreePort(): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => {
      const address = server.address();
      // address() is only a string for pipes/unix sockets; we listened on TCP.
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close((err) => (err ? reject(err) : resolve(port)));
    });
  });
}

/**
 * Reports whether `port` can be bound on `host` (127.0.0.1 by default; undefined: every interface,
 * as a server given no host binds) right now.
 * Used to detect a port already taken before spawning a server that would
 * otherwise fail later with a less helpful message.
 */
export async function isPortFree(port: number, host: string | undefined = '127.0.0.1'): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ host, port, exclusive: true }, () => {
      server.close(() => resolve(true));
    });
  });
}

/**
 * A currently free port in [low, high) on 127.0.0.1, tried at random. For servers that cannot use
 * the kernel's ephemeral range: Temporal keeps membership ports in a smallint column (< 32768).
 */
export async function getFreePortBetween(low: number, high: number): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (await isPortFree(port)) return port;
  }
  throw new Error(`no free port found between ${low} and ${high}`);
}

/** A port a server of this process is about to bind, and the setting that moves it. */
export interface PortNeed {
  port: number;
  /** Where it binds; undefined: every interface. */
  host?: string | undefined;
  /** What listens there, for people ("API", "Temporal dev server"). */
  what: string;
  /** The environment variable that moves it. */
  setting: string;
  /** What else the setting (or another one) can do, after "set SETTING to another port". */
  alternatives?: string;
}

/**
 * The needs whose port is taken, checked all at once so that one message can name every busy
 * port (a start that stopped at the first one would need one attempt per port). Port 0 means
 * "any free port" and is never busy.
 */
export async function findBusyPorts(needs: readonly PortNeed[]): Promise<PortNeed[]> {
  const free = await Promise.all(needs.map((need) => need.port === 0 || isPortFree(need.port, need.host)));
  return needs.filter((_, i) => !free[i]);
}

/** One line per busy port naming the setting that moves it, after a first line saying what happened. */
export function describeBusyPorts(busy: readonly PortNeed[]): string {
  const lines = busy.map((need) => `  port ${need.port} (${need.what}) is in use: set ${need.setting} to another port${need.alternatives ? `, ${need.alternatives}` : ''}`);
  const count = busy.length === 1 ? 'a port it needs is' : `${busy.length} ports it needs are`;
  return [`cannot start: ${count} in use (another instance of this service?)`, ...lines].join('\n');
}

/** Thrown before anything starts when ports are taken; its message is meant for people, without a stack. */
export class BusyPortsError extends Error {
  constructor(readonly busy: readonly PortNeed[]) {
    super(describeBusyPorts(busy));
    this.name = 'BusyPortsError';
  }
}
