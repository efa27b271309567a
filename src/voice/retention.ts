import type { Db } from '../db/index.ts';
import type { RetentionScope } from '../db/retention.ts';
import { oldRecordingsBatch } from '../db/voice.ts';
import type { RetentionStep } from '../governance/plugins.ts';
import { deleteConversationRecording } from './recordings.ts';

/**
 * Call recordings past their own window (issue 47's `recordings` key, usually shorter than the conversations'): each
 * goes, row and blob, and its conversation stays. A conversation deleted by retention takes its recording with it
 * (`src/conversations/retention.ts`).
 */
async function deleteBatch(tx: Db, scope: RetentionScope, batchSize: number): Promise<number> {
  const old = await oldRecordingsBatch(tx, scope, batchSize);
  for (const r of old) await deleteConversationRecording(tx, scope.orgId, r.conversation_id);
  return old.length;
}

export const retentionSteps: Record<string, RetentionStep> = {
  recordings: { key: 'recordings', perAgent: true, deleteBatch },
};
