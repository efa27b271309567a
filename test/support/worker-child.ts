import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** What a worker in its own process is started with: the API's settings, database, queues and secrets key. */
export interface WorkerChildOptions { settings: Record<string, string | number | boolean>; databaseUrl: string; taskQueuePrefix: string; secretsKey: string }

/**
 * A worker in a process of its own (test/support/worker-process.ts), resolved once it polls, so a
 * test can kill it with SIGKILL. Each child is added to `children` until it exits.
 */
export async function startWorkerProcess(opts: WorkerChildOptions, children: Set<ChildProcess>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/worker-process.ts'], {
    cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env, ...Object.fromEntries(Object.entries(opts.settings).map(([k, v]) => [k, String(v)])),
      DATABASE_URL: opts.databaseUrl, TEMPORAL_ADDRESS: inject('temporalAddress'), TASK_QUEUE_PREFIX: opts.taskQueuePrefix,
      SECRETS_KEY: opts.secretsKey, LOG_LEVEL: 'silent', WORKFLOW_BUNDLE_PATH: inject('workflowBundlePath'),
    },
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (out.includes('ready')) resolve();
    });
    child.once('exit', (code, signal) => reject(new Error(`worker process exited (${code ?? signal}) before it was ready`)));
  });
  return child;
}
