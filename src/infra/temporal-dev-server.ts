import type { ChildProcess } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdir } from 'node:fs/promises';
import { connect as connectHttp2 } from 'node:http2';
import { dirname, resolve } from 'node:path';
import { Connection } from '@temporalio/client';
import {
  forEachLine,
  killOnParentExit,
  LastLines,
  type LineLogger,
  silentLogger,
  sleep,
  spawnTiedToParent,
  terminateChild,
  waitForExit,
} from './child-process.ts';
import { getFreePort, isPortFree } from './ports.ts';

/** Search attribute types accepted by `temporal server start-dev --search-attribute`. */
export type DevServerSearchAttributeType = 'Keyword' | 'Text' | 'Int' | 'Bool' | 'Datetime' | 'Double' | 'KeywordList';

/** Options for {@link startTemporalDevServer}. */
export interface TemporalDevServerOptions {
  /** Absolute path of the `temporal` binary (see ensureTemporalCli). */
  cliPath: string;
  /** SQLite file for persistent state (parent folders are created); omit for an in-memory server. */
  dbFile?: string;
  /** Frontend gRPC port; 0 or omitted picks a free one. */
  port?: number;
  /** Web UI port; `false` runs headless, 0 picks a free one, omitted tries port+1000 then a free one. */
  uiPort?: number | false;
  /** Namespace to create at launch and wait for ("default" always exists). */
  namespace?: string;
  /** Custom search attributes registered at launch. */
  searchAttributes?: Record<string, DevServerSearchAttributeType>;
  /** Extra `--dynamic-config-value KEY=JSON` settings, only when a feature needs one. */
  dynamicConfig?: Record<string, unknown>;
  /** How long to wait for the frontend to answer (default 60 s). */
  startTimeoutMs?: number;
  /** Receives the server's own output lines and lifecycle notes. */
  log?: LineLogger;
}

/** A running dev server. */
export interface TemporalDevServer {
  /** Frontend address, `127.0.0.1:<port>`. */
  address: string;
  /** Web UI URL, or null when headless. */
  uiUrl: string | null;
  /** SIGTERM, then SIGKILL after 10 s; resolves once the process has exited. Safe to call twice. */
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';
const STOP_GRACE_MS = 10_000;
const READY_POLL_MS = 250;

/**
 * Spawns `temporal server start-dev` bound to 127.0.0.1 and resolves once its
 * frontend serves the namespace and lists the requested search attributes.
 *
 * The child runs in a process group of its own, so a terminal's Ctrl-C reaches only us: we drain
 * our workers first, then stop it (issue 42: stopped with us, it cut the drain short). A process
 * 'exit' hook and the kernel's parent-death signal make sure it does not outlive us.
 * Fails with the server's last output lines if it exits during startup.
 */
export async function startTemporalDevServer(opts: TemporalDevServerOptions): Promise<TemporalDevServer> {
  if (opts.dbFile) await mkdir(dirname(resolve(opts.dbFile)), { recursive: true });
  // A port picked by us can be taken by someone else before the CLI binds it:
  // retry that case with a new port; a port chosen by the caller is not retried.
  const attempts = opts.port ? 1 : 3;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startOnce(opts);
    } catch (err) {
      if (attempt >= attempts || !(err instanceof PortRaceError)) throw err;
      (opts.log ?? silentLogger)('Temporal dev server: a port was taken while it started; retrying with other ports');
    }
  }
}

/** The server exited during startup because a port we had found free was taken meanwhile. */
class PortRaceError extends Error {}

async function startOnce(opts: TemporalDevServerOptions): Promise<TemporalDevServer> {
  const log = opts.log ?? silentLogger;
  const port = await chooseFrontendPort(opts.port);
  const uiPort = await chooseUiPort(opts.uiPort, port);
  const address = `${HOST}:${port}`;
  const started = Date.now();
  const { child, recent } = await spawnServer(opts.cliPath, buildArgs(opts, port, uiPort), log);
  const removeExitHook = killOnParentExit(child);
  const stop = async (): Promise<void> => {
    removeExitHook();
    await terminateChild(child, STOP_GRACE_MS);
  };
  try {
    await waitUntilReady(child, recent, {
      address,
      namespace: opts.namespace || 'default',
      searchAttributes: Object.keys(opts.searchAttributes ?? {}),
      timeoutMs: opts.startTimeoutMs ?? 60_000,
    });
  } catch (err) {
    await stop();
    throw err;
  }
  const uiUrl = uiPort === null ? null : `http://${HOST}:${uiPort}`;
  log(`Temporal dev server ready at ${address} in ${Date.now() - started} ms${uiUrl ? ` (UI ${uiUrl})` : ''}`);
  return { address, uiUrl, stop };
}

/**
 * Picks the frontend port. A fixed port that is taken gets a specific error,
 * distinguishing "another Temporal server" (typically a second `npm start`)
 * from an unrelated program.
 */
async function chooseFrontendPort(requested: number | undefined): Promise<number> {
  if (!requested) return getFreePort();
  if (await isPortFree(requested)) return requested;
  if (await answersAsTemporal(`${HOST}:${requested}`)) {
    throw new Error(
      `A Temporal server is already running on ${HOST}:${requested} (another instance of this service?). ` +
        'Stop it, or set TEMPORAL_DEV_PORT to another port (0 picks a free one).',
    );
  }
  throw new Error(`Cannot start the Temporal dev server: port ${requested} on ${HOST} is used by another program (set TEMPORAL_DEV_PORT to another port).`);
}

async function chooseUiPort(requested: number | false | undefined, frontendPort: number): Promise<number | null> {
  if (requested === false) return null;
  if (requested === 0) return getFreePort();
  if (requested !== undefined) {
    if (await isPortFree(requested)) return requested;
    throw new Error(`Cannot start the Temporal dev server: UI port ${requested} on ${HOST} is already in use (set TEMPORAL_UI_PORT to another port).`);
  }
  // Mirror the CLI's default (frontend + 1000), but never collide with a busy port.
  const conventional = frontendPort + 1000;
  return conventional <= 65_535 && (await isPortFree(conventional)) ? conventional : getFreePort();
}

function buildArgs(opts: TemporalDevServerOptions, port: number, uiPort: number | null): string[] {
  const args = ['server', 'start-dev', '--ip', HOST, '--port', String(port), '--log-level', 'warn'];
  args.push(...(uiPort === null ? ['--headless'] : ['--ui-port', String(uiPort)]));
  if (opts.dbFile) {
    // WAL + NORMAL: far fewer fsyncs than the default rollback journal, while a
    // crash can lose at most the last transactions, never corrupt the file.
    args.push('--db-filename', resolve(opts.dbFile));
    args.push('--sqlite-pragma', 'journal_mode=WAL', '--sqlite-pragma', 'synchronous=NORMAL');
  }
  if (opts.namespace && opts.namespace !== 'default') args.push('--namespace', opts.namespace);
  for (const [key, type] of Object.entries(opts.searchAttributes ?? {})) {
    args.push('--search-attribute', `${key}=${type}`);
  }
  for (const [key, value] of Object.entries(opts.dynamicConfig ?? {})) {
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  }
  return args;
}

/**
 * Spawns the CLI tied to this process: a kernel parent-death signal covers
 * the case where we die by SIGKILL, which no 'exit' hook can handle.
 */
async function spawnServer(cliPath: string, args: string[], log: LineLogger): Promise<{ child: ChildProcess; recent: LastLines }> {
  await assertExecutable(cliPath);
  // `detached`: a group of its own, out of reach of the terminal's SIGINT, which would stop it
  // while our workers still drain; we stop it ourselves after them (see startTemporalDevServer).
  const child = spawnTiedToParent(cliPath, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const recent = new LastLines(20);
  const onLine = (line: string): void => {
    recent.push(line);
    log(line);
  };
  forEachLine(child.stdout, onLine);
  forEachLine(child.stderr, onLine);
  // Without a listener, a later 'error' (e.g. a failed kill) would crash the parent.
  child.on('error', (err) => log(`temporal CLI process error: ${err.message}`));
  return { child, recent };
}

async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

async function assertExecutable(cliPath: string): Promise<void> {
  if (!(await isExecutable(cliPath))) {
    throw new Error(`Temporal CLI not found or not executable at ${cliPath} (see ensureTemporalCli / TEMPORAL_CLI_PATH).`);
  }
}

interface ReadinessTarget {
  address: string;
  namespace: string;
  searchAttributes: string[];
  timeoutMs: number;
}

/**
 * Polls the frontend until ready, racing the child's exit so an early crash
 * (bad flag, port taken, locked db file) fails at once with its output.
 */
async function waitUntilReady(child: ChildProcess, recent: LastLines, target: ReadinessTarget): Promise<void> {
  let settled = false;
  const failedEarly = new Promise<never>((_, reject) => {
    child.once('error', (err) => {
      if (!settled) reject(new Error(`Cannot run the Temporal CLI at ${child.spawnfile}: ${err.message}`));
    });
    void waitForExit(child).then(({ code, signal }) => {
      if (settled) return;
      const output = recent.format();
      const message =
        `The Temporal dev server exited during startup (code ${String(code)}, signal ${String(signal)}). ` +
        `Last output:\n${output}`;
      reject(/address already in use/i.test(output) ? new PortRaceError(message) : new Error(message));
    });
  });
  try {
    await Promise.race([pollReady(target, () => settled, recent), failedEarly]);
  } finally {
    settled = true;
  }
}

async function pollReady(target: ReadinessTarget, isCancelled: () => boolean, recent: LastLines): Promise<void> {
  const deadline = Date.now() + target.timeoutMs;
  let lastError = 'no answer yet';
  while (!isCancelled()) {
    try {
      if (await isReady(target)) return;
      lastError = 'namespace or search attributes not registered yet';
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() > deadline) {
      throw new Error(
        `The Temporal dev server at ${target.address} was not ready within ${target.timeoutMs} ms ` +
          `(last check: ${lastError}). Last output:\n${recent.format()}`,
      );
    }
    await sleep(READY_POLL_MS);
  }
}

/** True once the namespace exists and every requested search attribute is listed. */
async function isReady(target: ReadinessTarget): Promise<boolean> {
  return withConnection(target.address, 1_000, async (connection) => {
    await connection.workflowService.describeNamespace({ namespace: target.namespace });
    if (target.searchAttributes.length === 0) return true;
    const listed = await connection.operatorService.listSearchAttributes({ namespace: target.namespace });
    const custom = listed.customAttributes ?? {};
    return target.searchAttributes.every((key) => key in custom);
  });
}

/**
 * Whether the program on `address` answers Temporal's GetSystemInfo. Spoken as
 * raw gRPC over node:http2 rather than through @temporalio/client: against a
 * program that is not an HTTP/2 server, grpc-js keeps its half-open socket
 * even after close(), which would keep this process alive.
 */
async function answersAsTemporal(address: string): Promise<boolean> {
  return new Promise<boolean>((resolveProbe) => {
    const session = connectHttp2(`http://${address}`);
    const finish = (answer: boolean): void => {
      clearTimeout(timer);
      session.destroy();
      resolveProbe(answer);
    };
    const timer = setTimeout(() => finish(false), 2_000);
    session.on('error', () => finish(false));
    const request = session.request({
      ':method': 'POST',
      ':path': '/temporal.api.workflowservice.v1.WorkflowService/GetSystemInfo',
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    request.on('response', (headers) => finish(String(headers['content-type'] ?? '').startsWith('application/grpc')));
    request.on('error', () => finish(false));
    // An empty protobuf message in gRPC framing: no compression flag, zero length.
    request.end(Buffer.alloc(5));
  });
}

/**
 * Runs `fn` over a short-lived connection that is closed even when connecting
 * fails: `Connection.connect()` leaves its gRPC channel open when it throws,
 * which would keep retrying (and keep the process alive) in the background.
 */
async function withConnection<T>(address: string, connectTimeoutMs: number, fn: (connection: Connection) => Promise<T>): Promise<T> {
  const connection = Connection.lazy({ address, connectTimeout: connectTimeoutMs });
  try {
    await connection.ensureConnected();
    return await fn(connection);
  } finally {
    await connection.close();
  }
}
