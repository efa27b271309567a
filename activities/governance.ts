import { ApplicationFailure, Context } from '@temporalio/activity';
import { pruneRetentionProgress, recordRetentionProgress, retentionProgress } from '../src/db/retention.ts';
import { retentionSteps } from '../src/governance/plugins.ts';
import { planRetention } from '../src/governance/retention-policy.ts';
import type { RetentionTask } from '../workflows/enforce-retention.ts';
import type { ActivityDeps, ActivityRegistration } from './index.ts';

/** How long a run's per-step counts are kept after its last batch. */
const PROGRESS_KEPT_DAYS = 30;

/** Activities of retention runs and of an erase's history deletion: idempotent, heartbeating long work. */
export function createGovernanceActivities({ sql, config, temporal, log, secrets }: Pick<ActivityDeps, 'sql' | 'config' | 'temporal' | 'log' | 'secrets'>) {
  return {
    /** The run's tasks, from the policies as they are now (recorded in the history, so a replay keeps them). */
    async planRetention(input: { orgId: string; now: string }): Promise<RetentionTask[]> {
      await pruneRetentionProgress(sql, PROGRESS_KEPT_DAYS);
      return planRetention({ sql }, input.orgId, new Date(input.now));
    },

    /**
     * Deletes a task's rows a batch per transaction, counting each batch in the same transaction
     * and heartbeating the running total; a retry after a crash resumes with what is left.
     */
    async runRetentionTask(input: { runKey: string; orgId: string; task: RetentionTask }): Promise<number> {
      const { task } = input;
      const step = (await retentionSteps())[task.step];
      if (!step) throw ApplicationFailure.nonRetryable(`unknown retention step ${task.step}`, 'UnknownRetentionStep');
      const scope = { orgId: input.orgId, cutoff: new Date(task.cutoff), agentId: task.agentId, excludeAgentIds: task.excludeAgentIds };
      const ctx = Context.current();
      let deleted = (ctx.info.heartbeatDetails as { deleted?: number } | undefined)?.deleted ?? 0;
      await step.prepare?.(sql, scope);
      for (;;) {
        const n = await sql.begin(async (tx) => {
          const count = await step.deleteBatch(tx, scope, config.RETENTION_BATCH_SIZE, { config, secrets });
          if (count > 0) await recordRetentionProgress(tx, input.runKey, task.step, count);
          return count;
        });
        deleted += n;
        ctx.heartbeat({ step: task.step, agentId: task.agentId, deleted });
        if (n < config.RETENTION_BATCH_SIZE) break;
      }
      return deleted;
    },

    /** What the run deleted, per step: counted by the batches themselves, so exact across retries. */
    async retentionSummary(input: { runKey: string }): Promise<Record<string, number>> {
      return retentionProgress(sql, input.runKey);
    },

    /** Deletes workflow executions (histories and their payloads); one already gone counts as done. */
    async deleteWorkflowHistories(input: { workflowIds: string[] }): Promise<number> {
      const ctx = Context.current();
      const start = (ctx.info.heartbeatDetails as { next?: number } | undefined)?.next ?? 0;
      let deleted = 0;
      for (let i = start; i < input.workflowIds.length; i++) {
        try {
          await temporal.workflowService.deleteWorkflowExecution({
            namespace: temporal.options.namespace, workflowExecution: { workflowId: input.workflowIds[i] },
          });
          deleted++;
        } catch (err) {
          // NOT_FOUND (5): never ran, or already past the namespace's retention.
          if ((err as { code?: number }).code !== 5) throw err;
        }
        ctx.heartbeat({ next: i + 1 });
      }
      log.info({ deleted, asked: input.workflowIds.length }, 'erased contact: workflow histories deleted');
      return deleted;
    },
  };
}
export type GovernanceActivities = ReturnType<typeof createGovernanceActivities>;

/** Run by the maintenance queue's worker (activities/index.ts finds this module). */
export const registration: ActivityRegistration = { queue: 'maintenance', create: createGovernanceActivities };
