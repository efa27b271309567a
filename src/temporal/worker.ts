import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import type { Logger } from 'pino';
import { createActivities, type ActivityDeps } from '../../activities/index.ts';
import { taskQueues, type TaskQueueKind } from './index.ts';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../../workflows/index.ts', import.meta.url));

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
  let stopped: Promise<void> | undefined;
  return {
    run: async () => { await running; },
    shutdown: () => stopped ??= (async () => {
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await running;
      await connection.close();
      await clientConnection.close();
    })(),
  };
}
