import type { Client } from '@temporalio/client';
import type { Config } from '../config.ts';
import { scheduleIds, taskQueues, workflowIds } from './ids.ts';
import { deleteSchedule } from './start.ts';
import { sweepNowSignal, webhookRecoverySweeper, type WebhookSweeperInput } from '../../workflows/sweep-webhook-events.ts';

/**
 * Starts the deployment's webhook recovery sweeper, or, when it runs, signals it to sweep now with
 * this configuration (a worker that starts after a crash gets what the dead one held swept at
 * once). Before issue 42 a Schedule started a sweep run every WEBHOOK_SWEEP_SECONDS, which filled
 * the Web UI's list: that Schedule is deleted here. Idempotent: every worker calls it at start.
 */
export async function ensureSchedules(client: Client, config: Config): Promise<void> {
  await deleteSchedule(client, scheduleIds.webhookRecoverySweep(config));
  const input: WebhookSweeperInput = { olderThanSeconds: config.WEBHOOK_CLAIM_TIMEOUT_SECONDS, everySeconds: config.WEBHOOK_SWEEP_SECONDS };
  await client.workflow.signalWithStart(webhookRecoverySweeper, {
    workflowId: workflowIds.webhookRecoverySweeper(config),
    taskQueue: taskQueues(config).webhooks,
    args: [input],
    signal: sweepNowSignal,
    signalArgs: [input],
    staticSummary: `Webhook recovery sweeper of deployment ${config.TASK_QUEUE_PREFIX}: sweeps every ${config.WEBHOOK_SWEEP_SECONDS} s`,
  });
}
