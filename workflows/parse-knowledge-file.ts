import { proxyActivities } from '@temporalio/workflow';
import type { KnowledgeFileActivities } from '../activities/knowledge-files.ts';
import { workflowIds, workflowKind } from '../src/temporal/ids.ts';

export interface ParseKnowledgeFileInput { fileId: string; revision: number }

const { parseKnowledgeFileRevision } = proxyActivities<KnowledgeFileActivities>({
  // A 500-page PDF is read in well under this; the activity heartbeats, so a worker that died is noticed within a minute.
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '1 minute',
  // A file that cannot be read is marked failed by the activity itself (no retry reads it better); retries cover the store.
  retry: { initialInterval: '2 seconds', maximumInterval: '1 minute', maximumAttempts: 10 },
});

/**
 * Reads one uploaded revision of a knowledge file into its knowledge base's index: its text, passages and their
 * vectors, swapped in for the file's previous ones in one transaction. Answers the file's status after it
 * (`superseded` when a newer revision was uploaded or the file was deleted meanwhile).
 */
export async function parseKnowledgeFile(input: ParseKnowledgeFileInput): Promise<'ready' | 'failed' | 'superseded'> {
  return parseKnowledgeFileRevision(input);
}

/** One parse per uploaded revision, ever. */
export const parseKnowledgeFileKind = workflowKind(parseKnowledgeFile, { queue: 'crawls', reuse: 'rejectDuplicate', id: workflowIds.knowledgeFileParse });
