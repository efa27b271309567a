import { parseKnowledgeFileRevision } from '../src/knowledge/files.ts';
import type { ActivityDeps, ActivityRegistration } from './index.ts';
import { heartbeating } from './index.ts';

export function createKnowledgeFileActivities(deps: ActivityDeps) {
  return {
    /** Reads a revision of a knowledge file into the index (idempotent: the swap replaces the file's pages whole). */
    async parseKnowledgeFileRevision(input: { fileId: string; revision: number }): Promise<'ready' | 'failed' | 'superseded'> {
      return heartbeating(() => parseKnowledgeFileRevision(deps, input.fileId, input.revision));
    },
  };
}

export type KnowledgeFileActivities = ReturnType<typeof createKnowledgeFileActivities>;

/** Run by the crawls queue's worker, beside the crawls (activities/index.ts finds this module). */
export const registration: ActivityRegistration = { queue: 'crawls', create: createKnowledgeFileActivities };
