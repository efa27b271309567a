import type { Db, Sql } from '../db/index.ts';
import { daysOfOldConversations, deleteOldConversationsBatch, reportTimeZones, type RetentionScope } from '../db/retention.ts';
import { refreshRollups } from '../db/report-rollups.ts';
import { emitEvent } from '../events/emit.ts';
import type { RetentionStep } from '../governance/plugins.ts';
import { recordingKey, recordingStore } from '../voice/recordings.ts';

/**
 * Conversations past their retention go with their messages, captured data, annotations and tool
 * calls; each emits `conversation.deleted`, in the transaction that deletes it. Reports' daily
 * rollups count the days first (prepare), and the delete leaves them as counted.
 */
async function countDaysFirst(sql: Sql, scope: RetentionScope, surface?: string): Promise<void> {
  for (const tz of await reportTimeZones(sql, scope.orgId)) {
    const days = await daysOfOldConversations(sql, scope, tz, surface);
    if (days.length) await refreshRollups(sql, scope.orgId, tz, days);
  }
}

async function deleteBatch(tx: Db, scope: RetentionScope, batchSize: number, surface?: string): Promise<number> {
  const gone = await deleteOldConversationsBatch(tx, scope, batchSize, surface);
  for (const conversation of gone) {
    // Its recording's row went with it (cascade); the blob goes by its key. A batch rolled back after this leaves its
    // conversations, whose recording is then gone: the next run deletes them (they are past their window all the same).
    await recordingStore().delete(recordingKey(scope.orgId, conversation.widget_id, conversation.id));
    await emitEvent(tx, { orgId: scope.orgId, agentId: conversation.widget_id, type: 'conversation.deleted', data: { conversation } });
  }
  return gone.length;
}

export const retentionSteps: Record<string, RetentionStep> = {
  conversations: {
    key: 'conversations', perAgent: true,
    prepare: (sql, scope) => countDaysFirst(sql, scope),
    deleteBatch: (tx, scope, batchSize) => deleteBatch(tx, scope, batchSize),
  },
  /** What came in by mail: email conversations, under their own (usually shorter) window. */
  inbound_mail: {
    key: 'inbound_mail', perAgent: true,
    prepare: (sql, scope) => countDaysFirst(sql, scope, 'email'),
    deleteBatch: (tx, scope, batchSize) => deleteBatch(tx, scope, batchSize, 'email'),
  },
};
