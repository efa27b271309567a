import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import type { Logger } from 'pino';
import { createActivities, type ActivityDeps } from '../../activities/index.ts';
import { taskQueues, type TaskQueueKind } from './index.ts';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../../workflows/index.ts', import.meta.url));

/**
 * Clients on the connection of a running worker of this process, by namespace and task queue.
 * A workflow started through one with `requestEagerStart` can have its first workflow task handed
 * to that worker in the start response (Eager Workflow Start): no matching, no poll round trip.
 * The TypeScript SDK offers it only on a NativeConnection shared by the client and the worker.
 */
const colocated = new Map<string, Client>();
const colocatedKey = (namespace: string, taskQueue: string) => `${namespace}\u0000${taskQueue}`;

/** A client whose starts on `taskQueue` may be eager, while a worker of this process polls it. */
export function colocatedClient(namespace: string, taskQueue: string): Client | undefined {
  return colocated.get(colocatedKey(namespace, taskQueue));
}

export interface WorkerSet {
  /** Resolves when every worker has stopped (after shutdown()). */
  run(): Promise<void>;
  shutdown(): Promise<void>;
}

/**
 * Starts one worker per task queue (all of them, or the kinds named), sharing one connection.
 * Tests pass a prebuilt `workflowBundle` so workflow code is bundled once, not per worker.
 */
export async function startWorkers(opts: Omit<ActivityDeps, 'temporal'> & {
  address: string; namespace: string; log: Logger;
  kinds?: TaskQueueKind[]; workflowBundle?: WorkerOptions['workflowBundle'];
}): Promise<WorkerSet> {
  const connection = await NativeConnection.connect({ address: opts.address });
  // Activities that start workflows (the webhook recovery sweep) need a client of their own.
  const clientConnection = await Connection.connect({ address: opts.address });
  const temporal = new Client({ connection: clientConnection, namespace: opts.namespace });
  const queues = taskQueues(opts.config);
  const activities = createActivities({ ...opts, temporal });
  const kinds = opts.kinds ?? (Object.keys(queues) as TaskQueueKind[]);
  const workflowSource = opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath: WORKFLOWS_PATH };
  const workers = await Promise.all(kinds.map((kind) => Worker.create({
    connection, namespace: opts.namespace, taskQueue: queues[kind],
    activities: activities[kind], ...workflowSource,
    shutdownGraceTime: '10 seconds',
  })));
  const running = Promise.all(workers.map((w) => w.run()));
  const eagerClient = new Client({ connection, namespace: opts.namespace });
  const eagerKeys = kinds.map((kind) => colocatedKey(opts.namespace, queues[kind]));
  for (const key of eagerKeys) colocated.set(key, eagerClient);
  let stopped: Promise<void> | undefined;
  return {
    run: async () => { await running; },
    shutdown: () => stopped ??= (async () => {
      for (const key of eagerKeys) if (colocated.get(key) === eagerClient) colocated.delete(key);
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await running;
      await connection.close();
      await clientConnection.close();
    })(),
  };
}
