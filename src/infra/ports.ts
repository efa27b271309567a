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
 * Reports whether `port` can be bound on 127.0.0.1 right now.
 * Used to detect a port already taken before spawning a server that would
 * otherwise fail later with a less helpful message.
 */
export async function isPortFree(port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => {
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
