import type { AsyncLocalStorage } from 'node:async_hooks';
import type { ActivityInboundCallsInterceptor, ActivityInterceptorsFactory } from '@temporalio/worker';

/**
 * Keeps Temporal's AsyncLocalStorage instances switched off while nothing of Temporal's needs them.
 *
 * On Node 20, while any AsyncLocalStorage is enabled, a hook runs on every promise the process
 * creates (Node 22's AsyncContextFrame removes it). The SDK enables three and never disables them:
 * the activity context (one `run()` per activity), and each connection's call context
 * (`withDeadline`, `withAbortSignal`: the worker wraps every activity in one). After the first
 * activity of an `npm start` process, every API request then paid that hook on each of its promises
 * (about 1.7x the CPU of the same request in an API-only process, bench/README.md).
 *
 * The storages are disabled again once no activity and no call through `hold()` is in flight;
 * `run()` enables them again for the next one. A disabled storage only forgets the store of the
 * code that runs outside every `run()`, which is none of ours: activities read their context
 * inside their execution, and our own deadlines go through `hold()`.
 */
export interface AsyncContextGate {
  /** Runs `work` with the storages allowed to stay enabled until it settles. */
  hold<T>(work: () => Promise<T>): Promise<T>;
  /** Adds a storage the gate disables when idle (a connection's call context, say). */
  register(storage: AsyncLocalStorage<unknown> | undefined): void;
  /** The activity interceptor that holds the gate for the whole of each activity. */
  activityInterceptor: ActivityInterceptorsFactory;
  /** How many holds are in flight (for tests and diagnostics). */
  readonly inFlight: number;
}

const ACTIVITY_STORAGE = Symbol.for('__temporal_activity_context_storage__');

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
    const activity = (globalThis as Record<symbol, unknown>)[ACTIVITY_STORAGE] as AsyncLocalStorage<unknown> | undefined;
    activity?.disable();
    for (const storage of storages) storage.disable();
  };

  const release = () => {
    inFlight -= 1;
    // After the current turn: the SDK's own wrappers around the activity settle first.
    if (inFlight === 0 && !pending) {
      pending = true;
      setImmediate(quiesce);
    }
  };

  const hold = async <T>(work: () => Promise<T>): Promise<T> => {
    inFlight += 1;
    try {
      return await work();
    } finally {
      release();
    }
  };

  const inbound: ActivityInboundCallsInterceptor = {
    execute: (input, next) => hold(() => next(input)),
  };

  return {
    hold,
    register: (storage) => { if (storage) storages.add(storage); },
    activityInterceptor: () => ({ inbound }),
    get inFlight() { return inFlight; },
  };
}

/** The process's gate: the storages are process-wide, so is the count of what needs them. */
export const asyncContextGate: AsyncContextGate = createGate();
