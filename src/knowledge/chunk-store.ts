import type { KnowledgeStore } from '../answers/store.ts';
import type { Db } from '../db/index.ts';
import {
  chunksByIds, chunksNear, chunksOfGeneration, countChunksWithWords, findChunksWithAnyWord, knowledgeSources, vectorsOfGeneration,
} from '../db/page-chunks.ts';

/** The engine's view of an agent's chunks (`src/answers/store.ts`), read from PostgreSQL through the repository. */
export function chunkStore(db: Db): KnowledgeStore {
  return {
    findChunksWithAnyWord: (agentId, words, limit, prefixes) => findChunksWithAnyWord(db, agentId, words, limit, prefixes),
    countChunksWithWords: (agentId, words) => countChunksWithWords(db, agentId, words),
    knowledgeSources: (agentId) => knowledgeSources(db, agentId),
    chunksOfGeneration: (sourceId, generation) => chunksOfGeneration(db, sourceId, generation),
    vectorsOfGeneration: (sourceId, generation) => vectorsOfGeneration(db, sourceId, generation),
    chunksByIds: (ids) => chunksByIds(db, ids),
    chunksNear: (ids, span) => chunksNear(db, ids, span),
  };
}
