import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import type { Config } from '../config.ts';
import { taskQueues } from './index.ts';
import type { sweepWebhookEvents } from '../../workflows/sweep-webhook-events.ts';

/** An event younger than this is left to the API process that committed it (which dispatches at once). */
const SWEEP_MIN_AGE_SECONDS = 10;

/**
 * Schedule ids. Scoped by TASK_QUEUE_PREFIX because the schedule targets that deployment's task
 * queue: two deployments sharing a namespace (or the test files of one run) each keep their own.
 * In production (prefix `ams`) the sweep is `webhook-recovery-sweep:ams`.
 */
export const scheduleIds = {
  webhookRecoverySweep: (config: Pick<Config, 'TASK_QUEUE_PREFIX'>) => `webhook-recovery-sweep:${config.TASK_QUEUE_PREFIX}`,
};

function webhookRecoverySweep(config: Config): ScheduleOptions {
  const id = scheduleIds.webhookRecoverySweep(config);
  return {
    scheduleId: id,
    spec: { intervals: [{ every: `${config.WEBHOOK_SWEEP_SECONDS} seconds` }] },
    action: {
      type: 'startWorkflow',
      workflowType: 'sweepWebhookEvents',
      workflowId: id,
      taskQueue: taskQueues(config).webhooks,
      args: [{ olderThanSeconds: Math.min(SWEEP_MIN_AGE_SECONDS, config.WEBHOOK_SWEEP_SECONDS) }] satisfies Parameters<typeof sweepWebhookEvents>,
    },
    policies: {
      // One sweep at a time; while no worker runs, the pending one waits and the ticks are skipped.
      overlap: ScheduleOverlapPolicy.SKIP,
      // Ticks missed while Temporal was down are not worth replaying: the next one sweeps everything.
      catchupWindow: `${Math.max(60, config.WEBHOOK_SWEEP_SECONDS * 2)} seconds`,
    },
  };
}

/**
 * Creates the service's Temporal Schedules, or brings existing ones up to date with this
 * configuration (interval, task queue). Idempotent: every worker calls it at start.
 */
export async function ensureSchedules(client: Client, config: Config): Promise<void> {
  const options = webhookRecoverySweep(config);
  try {
    await client.schedule.create(options);
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(options.scheduleId).update((previous) => ({
      spec: options.spec, action: options.action, policies: options.policies, state: previous.state,
    }));
  }
}
