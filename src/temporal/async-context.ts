import type { AsyncLocalStorage } from 'node:async_hooks';
import '@temporalio/activity';

/**
 * Keeps Temporal's AsyncLocalStorage instances switched off while nothing runs inside them.
 *
 * On Node 20, while any AsyncLocalStorage is enabled, a hook runs on every promise the process
 * creates (Node 22's AsyncContextFrame removes it). The SDK enables several and never disables
 * them: the activity context (one `run()` per activity) and each connection's call context (one
 * `run()` per `withDeadline`, `withAbortSignal`, and per workflow-service call, which sets the
 * namespace header through `withMetadata`). After the first activity or workflow start of a
 * process, every API request then paid that hook on each of its promises (about 1.7x the CPU of
 * the same request in a process where none had run, bench/README.md).
 *
 * The gate wraps each registered storage's `run()` to count the runs in flight, and disables every
 * storage once none is; the next `run()` enables them again. A disabled storage forgets the stores
 * only of code that runs after its `run()` has settled: the SDK reads them synchronously when a
 * call starts, and an activity reads its context while it runs.
 */
export interface AsyncContextGate {
  /** Puts a storage under the gate (idempotent). */
  register(storage: AsyncLocalStorage<unknown> | undefined): void;
  /** Runs in flight in the registered storages (for tests and diagnostics). */
  readonly inFlight: number;
}

const ACTIVITY_STORAGE = Symbol.for('__temporal_activity_context_storage__');

/** The activity context storage of @temporalio/activity (created when that module loads, imported above). */
export function activityContextStorage(): AsyncLocalStorage<unknown> | undefined {
  return (globalThis as Record<symbol, AsyncLocalStorage<unknown> | undefined>)[ACTIVITY_STORAGE];
}

/** The call-context storage of a Temporal `Connection` or `NativeConnection` (an SDK internal, read defensively). */
export function callContextStorageOf(connection: unknown): AsyncLocalStorage<unknown> | undefined {
  const storage = (connection as { callContextStorage?: unknown } | null)?.callContextStorage;
  return storage && typeof (storage as AsyncLocalStorage<unknown>).disable === 'function' ? storage as AsyncLocalStorage<unknown> : undefined;
}

function createGate(): AsyncContextGate {
  const storages = new Set<AsyncLocalStorage<unknown>>();
  let inFlight = 0;
  let pending = false;

  const quiesce = () => {
    pending = false;
    if (inFlight > 0) return;
    for (const storage of storages) storage.disable();
  };

  const settle = () => {
    if (inFlight === 0 && !pending) {
      pending = true;
      setImmediate(quiesce);
    }
  };

  const release = () => {
    inFlight -= 1;
    // On a later turn: what settled the run (the SDK's own wrappers) finishes first.
    settle();
  };

  return {
    register(storage) {
      if (!storage || storages.has(storage)) return;
      storages.add(storage);
      // A storage is registered once what made it has run: a connection's first run (its `connect`, which sets a
      // deadline) enabled it before the gate saw it, and nothing closed that run. Off on a later turn if nothing is in
      // flight, as after any run: an API process without a worker or a readiness probe kept the hook on every promise
      // of every request for good (issue 48, round eleven, bench/README.md).
      settle();
      const run = storage.run.bind(storage);
      storage.run = ((store: unknown, callback: (...args: unknown[]) => unknown, ...args: unknown[]) => {
        inFlight += 1;
        let result: unknown;
        try {
          result = run(store, callback, ...args);
        } catch (err) {
          release();
          throw err;
        }
        if (result !== null && typeof result === 'object' && typeof (result as PromiseLike<unknown>).then === 'function') {
          (result as PromiseLike<unknown>).then(release, release);
        } else {
          release();
        }
        return result;
      }) as AsyncLocalStorage<unknown>['run'];
    },
    get inFlight() { return inFlight; },
  };
}

/** The process's gate: the hook is process-wide, so is the count of what needs it. */
export const asyncContextGate: AsyncContextGate = createGate();
