import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { Sql } from '../src/db/index.ts';
import type { Logger } from 'pino';
import type { Config } from '../src/config.ts';
import type { AgentRuntime } from '../src/runtime/types.ts';
import type { SecretBox } from '../src/crypto/secret-box.ts';
import { TASK_QUEUE_KINDS, type TaskQueueKind } from '../src/temporal/ids.ts';
import { importModules } from '../src/modules.ts';

/**
 * What activities are given; they build nothing themselves. `temporal` lets an activity start
 * workflows (the webhook recovery sweep hands deliveries over); `runtime` answers and evaluates;
 * `secrets` opens what is sealed at rest (webhook signing secrets).
 */
export interface ActivityDeps { sql: Sql; config: Config; temporal: Client; log: Logger; runtime: AgentRuntime; secrets: SecretBox }

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Activities = Record<string, (...args: any[]) => unknown>;

/**
 * What each module of activities/ exports as `registration`: the task queue whose worker runs its
 * activities, and their factory. The worker finds the modules itself: a new family's module
 * registers by being in this folder.
 * @example export const registration: ActivityRegistration = { queue: 'maintenance', create: createPurgeActivities };
 */
export interface ActivityRegistration { queue: TaskQueueKind; create: (deps: ActivityDeps) => Activities }

/** Activities grouped by the task queue whose worker runs them, from every module of this folder. */
export async function createActivities(deps: ActivityDeps): Promise<Record<TaskQueueKind, Activities>> {
  const byQueue = Object.fromEntries(TASK_QUEUE_KINDS.map((queue) => [queue, {}])) as Record<TaskQueueKind, Activities>;
  for (const { path, exports } of await importModules(new URL('./', import.meta.url))) {
    const registration = exports.registration as ActivityRegistration | undefined;
    if (!registration || !TASK_QUEUE_KINDS.includes(registration.queue) || typeof registration.create !== 'function') {
      throw new Error(`${path} must export its registration: { queue: one of ${TASK_QUEUE_KINDS.join(', ')}, create: (deps) => activities }`);
    }
    const queue = byQueue[registration.queue];
    for (const [name, activity] of Object.entries(registration.create(deps))) {
      if (name in queue) throw new Error(`activity ${name} of ${path} is already registered on the ${registration.queue} queue`);
      queue[name] = activity;
    }
  }
  return byQueue;
}

/**
 * Runs `work`, heartbeating every `everyMs` meanwhile, so that with a heartbeat timeout on the
 * activity a worker that died mid-way is noticed in seconds rather than after the whole
 * start-to-close timeout (the rehearsal's kill -9 left evaluations waiting their 3 minutes).
 * Run as a local activity, it just runs `work`.
 */
export async function heartbeating<T>(work: () => Promise<T>, everyMs = 5_000): Promise<T> {
  const ctx = Context.current();
  // A local activity has no heartbeats: its workflow task is what times out when its worker dies.
  if (ctx.info.isLocal) return work();
  const timer = setInterval(() => ctx.heartbeat(), everyMs);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}
