import { type ChildProcess, spawn, type SpawnOptions } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';

/** Receives one line of human-readable progress or child output. */
export type LineLogger = (line: string) => void;

/** A logger that drops everything; the default when callers pass none. */
export const silentLogger: LineLogger = () => undefined;

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Calls `onLine` for every non-empty line a stream emits. Child processes
 * write in arbitrary chunks, so splitting on chunk boundaries would cut lines.
 */
export function forEachLine(stream: Readable | null, onLine: (line: string) => void): void {
  if (!stream) return;
  const reader = createInterface({ input: stream, crlfDelay: Infinity });
  reader.on('line', (line) => {
    const trimmed = line.trimEnd();
    if (trimmed.length > 0) onLine(trimmed);
  });
}

/**
 * Keeps the last `capacity` lines of a child's output so a failure message
 * can show why it died without buffering everything it ever printed.
 */
export class LastLines {
  private readonly lines: string[] = [];

  constructor(private readonly capacity: number) {}

  /** Appends a line, dropping the oldest one when full. */
  push(line: string): void {
    this.lines.push(line);
    if (this.lines.length > this.capacity) this.lines.shift();
  }

  /** The kept lines joined for an error message (indented for readability). */
  format(): string {
    return this.lines.length === 0 ? '  (no output)' : this.lines.map((l) => `  ${l}`).join('\n');
  }
}

/**
 * Sends `signal` to the child when this process exits, and returns a function
 * that removes that hook. The 'exit' event runs for process.exit() and a
 * normal end of the event loop (not for SIGKILL, nor for an unhandled fatal
 * signal), so a server child does not outlive a parent that forgot to stop it.
 */
export function killOnParentExit(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): () => void {
  const hook = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  process.on('exit', hook);
  return () => {
    process.removeListener('exit', hook);
  };
}

/** Resolves with the exit code/signal once the child has exited (immediately if it already has). */
export function waitForExit(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

/**
 * Stops a child: `signal` first, SIGKILL if it is still alive after
 * `graceMs`. Resolves once the process has really exited, so its ports and
 * files are released when the promise settles.
 */
export async function terminateChild(
  child: ChildProcess,
  graceMs: number,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<void> {
  const exited = waitForExit(child);
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill(signal);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), graceMs);
  });
  const outcome = await Promise.race([exited, timedOut]);
  clearTimeout(timer);
  if (outcome === 'timeout') {
    child.kill('SIGKILL');
    await exited;
  }
}

const SETPRIV = '/usr/bin/setpriv';

/** Whether util-linux `setpriv` (with --pdeathsig) is available; checked once. */
let setprivAvailable: boolean | undefined;
function hasSetpriv(): boolean {
  if (setprivAvailable === undefined) {
    try {
      accessSync(SETPRIV, constants.X_OK);
      setprivAvailable = process.platform === 'linux';
    } catch {
      setprivAvailable = false;
    }
  }
  return setprivAvailable;
}

/**
 * Spawns `command` so that the kernel sends it `signal` (SIGTERM by default) if this process dies,
 * even by SIGKILL, where no JavaScript hook runs. On Linux it goes through
 * `setpriv --pdeathsig <signal>`, which sets the flag and then execs the command
 * (same pid, so signals and exit codes are the command's own). Elsewhere, or
 * without setpriv, it is spawned directly. Combine with {@link killOnParentExit}.
 */
export function spawnTiedToParent(command: string, args: readonly string[], options: SpawnOptions, signal: 'TERM' | 'INT' = 'TERM'): ChildProcess {
  return hasSetpriv()
    ? spawn(SETPRIV, ['--pdeathsig', signal, '--', command, ...args], options)
    : spawn(command, [...args], options);
}
