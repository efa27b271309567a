import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import type { Logger } from 'pino';
import { createActivities, type ActivityDeps } from '../../activities/index.ts';
import { createRuntime } from '../runtime/index.ts';
import type { AgentRuntime } from '../runtime/types.ts';
import { registerColocatedClient } from './eager.ts';
import { taskQueues, type TaskQueueKind } from './ids.ts';

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
export async function startWorkers(opts: Omit<ActivityDeps, 'temporal' | 'runtime'> & {
  /** The agent runtime of the conversation activities; by default the one LLM_BASE_URL selects. */
  runtime?: AgentRuntime;
  address: string; namespace: string; log: Logger;
  kinds?: TaskQueueKind[]; workflowBundle?: WorkerOptions['workflowBundle'];
}): Promise<WorkerSet> {
  const connection = await NativeConnection.connect({ address: opts.address });
  // Activities that start workflows (the webhook recovery sweep) need a client of their own.
  const clientConnection = await Connection.connect({ address: opts.address });
  const temporal = new Client({ connection: clientConnection, namespace: opts.namespace });
  const queues = taskQueues(opts.config);
  const activities = createActivities({ ...opts, temporal, runtime: opts.runtime ?? createRuntime(opts.config) });
  const kinds = opts.kinds ?? (Object.keys(queues) as TaskQueueKind[]);
  const workflowSource = opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath: WORKFLOWS_PATH };
  const workers = await Promise.all(kinds.map((kind) => Worker.create({
    connection, namespace: opts.namespace, taskQueue: queues[kind],
    activities: activities[kind], ...workflowSource,
    shutdownGraceTime: '10 seconds',
  })));
  const running = Promise.all(workers.map((w) => w.run()));
  // Starts through this client on these queues may be eager (see eager.ts).
  const unregister = registerColocatedClient(new Client({ connection, namespace: opts.namespace }), opts.namespace, kinds.map((kind) => queues[kind]));
  let stopped: Promise<void> | undefined;
  return {
    run: async () => { await running; },
    shutdown: () => stopped ??= (async () => {
      unregister();
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await running;
      await connection.close();
      await clientConnection.close();
    })(),
  };
}
