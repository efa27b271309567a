import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { Worker as Thread } from 'node:worker_threads';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { ThreadedVMWorkflowCreator, WorkerThreadClient } from '@temporalio/worker/lib/workflow/threaded-vm.js';
import type { Logger } from 'pino';
import type { Sql } from '../db/index.ts';
import { createActivities, type ActivityDeps } from '../../activities/index.ts';
import { createSecretBox, loadSecretsKey } from '../crypto/secret-box.ts';
import { startDispatcher } from '../events/dispatcher.ts';
import { createRuntime } from '../runtime/index.ts';
import type { AgentRuntime } from '../runtime/types.ts';
import { activityContextStorage, asyncContextGate, callContextStorageOf } from './async-context.ts';
import { registerColocatedClient } from './eager.ts';
import { taskQueues, type TaskQueueKind } from './ids.ts';
import { codeFile } from '../infra/paths.ts';
import { isWorkflowPromise } from './workflow-realm.ts';

const BUNDLER = codeFile('src', 'temporal', 'bundle-workflows');

/**
 * The workflow bundle, built by webpack in a child process (see bundle-workflows.ts) into a file of a folder of its
 * own: the SDK reads it once (see workersSharingOneWorkflowThread), where a bundle given as text stays in every
 * worker's options for the life of the process (1.9 million characters, 3.6 MiB: its comments hold a few non-ASCII
 * characters, so V8 keeps it in two bytes a character). `remove` deletes the folder once the workers are created.
 */
export async function bundleWorkflowsInChild(): Promise<{ codePath: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'ams-workflow-bundle-'));
  const codePath = join(dir, 'workflow-bundle.js');
  try {
    await promisify(execFile)(process.execPath, [...process.execArgv, BUNDLER, codePath], { encoding: 'utf8' });
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return { codePath, remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * Sizes per task queue, instead of the SDK's defaults sized for a whole machine (a workflow cache of
 * about 600 runs per GiB of heap, 100 concurrent activities, per worker; four workers here). A run
 * evicted from the cache is replayed from its history on its next task: correct, only slower.
 * One workflow thread for all of them (see workersSharingOneWorkflowThread) is plenty: our workflows
 * only orchestrate. Crawl activities each fetch CRAWL_CONCURRENCY pages at once, so few
 * run at a time.
 */
const WORKER_SIZES: Record<TaskQueueKind, Pick<WorkerOptions, 'maxCachedWorkflows' | 'maxConcurrentWorkflowTaskExecutions' | 'maxConcurrentActivityTaskExecutions' | 'maxConcurrentLocalActivityExecutions'>> = {
  maintenance: { maxCachedWorkflows: 50, maxConcurrentWorkflowTaskExecutions: 10, maxConcurrentActivityTaskExecutions: 10, maxConcurrentLocalActivityExecutions: 10 },
  webhooks: { maxCachedWorkflows: 200, maxConcurrentWorkflowTaskExecutions: 40, maxConcurrentActivityTaskExecutions: 100, maxConcurrentLocalActivityExecutions: 100 },
  crawls: { maxCachedWorkflows: 50, maxConcurrentWorkflowTaskExecutions: 10, maxConcurrentActivityTaskExecutions: 8, maxConcurrentLocalActivityExecutions: 10 },
  conversations: { maxCachedWorkflows: 500, maxConcurrentWorkflowTaskExecutions: 40, maxConcurrentActivityTaskExecutions: 50, maxConcurrentLocalActivityExecutions: 50 },
  // A campaign runs up to 50 call workflows at once, each a few short local activities (and its evaluation).
  campaigns: { maxCachedWorkflows: 300, maxConcurrentWorkflowTaskExecutions: 40, maxConcurrentActivityTaskExecutions: 60, maxConcurrentLocalActivityExecutions: 60 },
};

type WorkflowCreator = Awaited<ReturnType<typeof Worker['createWorkflowCreator']>>;

/** The SDK's deadlock timeout of a workflow activation (its default outside `debugMode`, which would lift it). */
const WORKFLOW_TASK_TIMEOUT = '5s';

/**
 * Creates the workflow creator and, when it runs workflows in this thread (WORKFLOW_THREAD=main), keeps the
 * process-wide `unhandledRejection` listener the SDK adds for workflow code (once a process) to workflow code:
 * it would throw on any other rejection, where in a thread of its own it never sees one, so the process's own
 * handler (src/main.ts) stays the only judge of those.
 */
async function scopedWorkflowCreator(create: () => Promise<WorkflowCreator>): Promise<WorkflowCreator> {
  const before = new Set(process.listeners('unhandledRejection'));
  const creator = await create();
  for (const listener of process.listeners('unhandledRejection')) {
    if (before.has(listener)) continue;
    process.off('unhandledRejection', listener);
    process.on('unhandledRejection', (reason, promise) => {
      if (isWorkflowPromise(promise)) listener(reason, promise);
    });
  }
  return creator;
}

/**
 * The young generation of the workflow thread's V8 heap, at most (MiB; semi-spaces of a third of it). Left to V8, it
 * grows to 16 MiB semi-spaces while the thread loads the bundle and stays that size at idle (nothing collects the
 * thread's garbage then, where src/infra/heap.ts collects the main thread's): 6-9 MiB of idle RSS (issue 48,
 * bench/README.md). Workflow code's garbage is short-lived, so a small young generation only means more frequent
 * scavenges, each of little that survives.
 */
const WORKFLOW_THREAD_YOUNG_GENERATION_MB = 3;

type CreatorArgs = Parameters<typeof Worker['createWorkflowCreator']>;

/**
 * The SDK's workflow thread pool (ThreadedVMWorkflowCreator.create, @temporalio/worker 1.24), its threads started with
 * a bounded young generation: the SDK starts them with no resource limits and has no option for them. Same thread
 * module, same init message, same creator.
 */
async function createWorkflowThreads(...[workflowBundle, options, logger]: CreatorArgs): Promise<WorkflowCreator> {
  const threadModule = createRequire(import.meta.url).resolve('@temporalio/worker/lib/workflow/workflow-worker-thread');
  const clients = Array.from({ length: options.workflowThreadPoolSize }, () => new WorkerThreadClient(
    new Thread(threadModule, { resourceLimits: { maxYoungGenerationSizeMb: WORKFLOW_THREAD_YOUNG_GENERATION_MB } }),
    logger, options.patchActivationCallback));
  await Promise.all(clients.map((client) => client.send({
    type: 'init', workflowBundle, isolateExecutionTimeoutMs: options.isolateExecutionTimeoutMs, reuseV8Context: options.reuseV8Context ?? true,
    registeredActivityNames: new Set(options.activities.keys()), hasPatchActivationCallback: options.patchActivationCallback !== undefined,
  })));
  return new ThreadedVMWorkflowCreator(clients);
}

/**
 * What a worker of the set holds of the shared creator: its own `destroy`, counted. Built here, outside
 * `createWorkflowCreator`, so its closures hold the creator only: a closure made in that method would share its
 * scope, and with it the bundle it was called with (3.6 MiB of code and its source map, one per worker).
 */
function creatorUse(creator: WorkflowCreator, release: (creator: WorkflowCreator) => Promise<void>): WorkflowCreator {
  let destroyed = false;
  return {
    createWorkflow: (createOptions) => creator.createWorkflow(createOptions),
    destroy: async () => {
      if (destroyed) return;
      destroyed = true;
      await release(creator);
    },
  };
}

/**
 * A Worker class whose instances share ONE workflow thread (a V8 isolate holding the SDK and the
 * bundle, about 55 MiB) instead of one each: the SDK's extension point for this is the protected
 * static `createWorkflowCreator`. Workflow runs are keyed by run id, so runs of every task queue can
 * live in one thread, as runs of one queue already do with the SDK's reused V8 context. The thread
 * knows the activity names of every worker (it only uses them to fail unknown local activities
 * early), and is destroyed when the last worker using it shuts down.
 *
 * The bundle is parsed once for the set too (`getOrCreateBundle`, the SDK's other protected static): the
 * SDK parses it again for every worker (a new copy of its code with the source map rewritten, and a
 * throw-away V8 context running it), and each copy is the same text, so the workers' build ids (the
 * code's hash) are unchanged. `forgetBundle` drops the set's reference once its workers are created.
 */
function workersSharingOneWorkflowThread(activityNames: string[]): { Worker: typeof Worker; forgetBundle(): void } {
  let shared: Promise<WorkflowCreator> | undefined;
  let bundle: ReturnType<typeof Worker['getOrCreateBundle']> | undefined;
  let users = 0;
  const release = async (creator: WorkflowCreator) => {
    users -= 1;
    if (users === 0) {
      shared = undefined;
      await creator.destroy();
    }
  };
  return {
    forgetBundle: () => { bundle = undefined; },
    Worker: class SharedThreadWorker extends Worker {
      protected static override getOrCreateBundle(...args: Parameters<typeof Worker['getOrCreateBundle']>): ReturnType<typeof Worker['getOrCreateBundle']> {
        return bundle ??= super.getOrCreateBundle(...args);
      }

      protected static override async createWorkflowCreator(...[workflowBundle, options, logger]: Parameters<typeof Worker['createWorkflowCreator']>): Promise<WorkflowCreator> {
        const all = { ...options, activities: new Map(activityNames.map((name) => [name, async () => undefined])) };
        // In the main thread (debugMode) the SDK's own creator; else its thread pool, with a bounded young generation.
        shared ??= scopedWorkflowCreator(() => (options.debugMode ? super.createWorkflowCreator(workflowBundle, all, logger) : createWorkflowThreads(workflowBundle, all, logger)));
        const creator = await shared;
        users += 1;
        return creatorUse(creator, release);
      }
    },
  };
}

export interface WorkerSet {
  /** Resolves when every worker has stopped (after shutdown()). */
  run(): Promise<void>;
  shutdown(): Promise<void>;
}

/**
 * Starts one worker per task queue (all of them, or the kinds named), sharing one connection and one
 * workflow bundle (built here unless given: tests pass the one their global setup built).
 */
export async function startWorkers(opts: Omit<ActivityDeps, 'temporal' | 'runtime' | 'secrets'> & {
  /** The agent runtime of the conversation activities; by default the one LLM_BASE_URL selects. */
  runtime?: AgentRuntime;
  /** Opens webhook signing secrets; by default the box of SECRETS_KEY (or DATA_DIR's key file). */
  secrets?: ActivityDeps['secrets'];
  address: string; namespace: string; log: Logger;
  kinds?: TaskQueueKind[]; workflowBundle?: WorkerOptions['workflowBundle'];
  /** The webhook dispatcher's pool for its bookkeeping, committing asynchronously (see startDispatcher); the main pool when absent. */
  bookkeepingSql?: Sql;
}): Promise<WorkerSet> {
  const connection = await NativeConnection.connect({ address: opts.address });
  // Activities that start workflows (the webhook recovery sweep) need a client of their own.
  const clientConnection = await Connection.connect({ address: opts.address });
  const temporal = new Client({ connection: clientConnection, namespace: opts.namespace });
  // Their AsyncLocalStorages are switched off between uses (see async-context.ts).
  for (const storage of [activityContextStorage(), callContextStorageOf(connection), callContextStorageOf(clientConnection)]) asyncContextGate.register(storage);
  const queues = taskQueues(opts.config);
  const secrets = opts.secrets ?? createSecretBox(await loadSecretsKey(opts.config));
  const activities = await createActivities({ ...opts, temporal, secrets, runtime: opts.runtime ?? createRuntime(opts.config) });
  const kinds = opts.kinds ?? (Object.keys(queues) as TaskQueueKind[]);
  // One bundle for every worker: each `workflowsPath` would run webpack again and keep its output.
  const built = opts.workflowBundle ? undefined : await bundleWorkflowsInChild();
  const workflowBundle = opts.workflowBundle ?? { codePath: built!.codePath };
  const workerSet = workersSharingOneWorkflowThread(kinds.flatMap((kind) => Object.keys(activities[kind])));
  const workers = await Promise.all(kinds.map((kind) => workerSet.Worker.create({
    connection, namespace: opts.namespace, taskQueue: queues[kind],
    activities: activities[kind], workflowBundle, ...WORKER_SIZES[kind],
    shutdownGraceTime: '10 seconds',
    // In the main thread: the SDK's in-process creator (its `debugMode`), with the deadlock timeout it has in a thread.
    ...(opts.config.WORKFLOW_THREAD === 'main' ? { debugMode: true, isolateExecutionTimeout: WORKFLOW_TASK_TIMEOUT } : {}),
  }))).finally(async () => {
    workerSet.forgetBundle();
    await built?.remove();
  });
  const running = Promise.all(workers.map((w) => w.run()));
  // Starts through this client on these queues may be eager (see eager.ts).
  const unregister = registerColocatedClient(new Client({ connection, namespace: opts.namespace }), opts.namespace, kinds.map((kind) => queues[kind]));
  // The webhook fast path lives beside the webhook worker: its retries start eagerly on it.
  const dispatcher = kinds.includes('webhooks')
    ? await startDispatcher({ sql: opts.sql, temporal, config: opts.config, log: opts.log, secrets, ...(opts.bookkeepingSql ? { bookkeeping: opts.bookkeepingSql } : {}) }) : null;
  let stopped: Promise<void> | undefined;
  return {
    run: async () => { await running; },
    shutdown: () => stopped ??= (async () => {
      await dispatcher?.stop();
      unregister();
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await running;
      await connection.close();
      await clientConnection.close();
    })(),
  };
}
