import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll } from 'vitest';
import { freshDatabase, startTestService, type TestService } from '../helpers.ts';
import { startWorkerProcess } from './worker-child.ts';

/** What a crash test works with: the API (in this process, no worker), its database, and workers it can kill. */
export interface CrashStage {
  readonly api: TestService;
  readonly databaseUrl: string;
  /** A worker in a process of its own, resolved once it polls; killed, if still running, after the file. */
  startWorkerProcess(): Promise<ChildProcess>;
}

/**
 * The stage of a test that kills a worker with SIGKILL mid-work and restarts it (campaigns, webhooks, assignment,
 * retention): a database of its own, the API without a worker, and workers in processes of their own, all with
 * `settings` and one secrets key; everything stopped and dropped after the file.
 */
export function crashStage(settings: Record<string, string | number | boolean>, secretsKey: string): CrashStage {
  let db: Awaited<ReturnType<typeof freshDatabase>> | undefined;
  let api: TestService | undefined;
  const children = new Set<ChildProcess>();
  beforeAll(async () => {
    db = await freshDatabase();
    api = await startTestService(settings, { worker: false, databaseUrl: db.url, env: { SECRETS_KEY: secretsKey } });
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await api?.stop();
    await db?.drop();
  });
  return {
    get api() { return api!; },
    get databaseUrl() { return db!.url; },
    startWorkerProcess: () => startWorkerProcess({ settings, databaseUrl: db!.url, taskQueuePrefix: api!.config.TASK_QUEUE_PREFIX, secretsKey }, children),
  };
}
