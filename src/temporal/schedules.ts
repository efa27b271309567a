import { ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import type { Config } from '../config.ts';
import { scheduleIds, taskQueues } from './ids.ts';
import { upsertSchedule } from './start.ts';
import type { sweepWebhookEvents } from '../../workflows/sweep-webhook-events.ts';

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
      args: [{ olderThanSeconds: config.WEBHOOK_CLAIM_TIMEOUT_SECONDS }] satisfies Parameters<typeof sweepWebhookEvents>,
      staticSummary: `Webhook recovery sweep of deployment ${config.TASK_QUEUE_PREFIX}, every ${config.WEBHOOK_SWEEP_SECONDS} s`,
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
  await upsertSchedule(client, webhookRecoverySweep(config));
}
