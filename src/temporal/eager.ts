import type { Client } from '@temporalio/client';

/**
 * Clients on the connection of a running worker of this process, by namespace and task queue.
 * A workflow started through one with `requestEagerStart` can have its first workflow task handed
 * to that worker in the start response (Eager Workflow Start): no matching, no poll round trip.
 * The TypeScript SDK offers it only on a NativeConnection shared by the client and the worker.
 * A leaf module: the code that starts workflows reads it without loading the worker or activities.
 */
const colocated = new Map<string, Client>();
const colocatedKey = (namespace: string, taskQueue: string) => `${namespace}\u0000${taskQueue}`;

/** A client whose starts on `taskQueue` may be eager, while a worker of this process polls it. */
export function colocatedClient(namespace: string, taskQueue: string): Client | undefined {
  return colocated.get(colocatedKey(namespace, taskQueue));
}

/** Registers a worker's client for its task queues; the returned function unregisters it. */
export function registerColocatedClient(client: Client, namespace: string, taskQueueNames: string[]): () => void {
  const keys = taskQueueNames.map((queue) => colocatedKey(namespace, queue));
  for (const key of keys) colocated.set(key, client);
  return () => {
    for (const key of keys) if (colocated.get(key) === client) colocated.delete(key);
  };
}
