import type { ChunkRow } from '../db/page-chunks.ts';

/** A chunk of a source's index, as the engine reads it at start. */
export interface GenerationChunk { id: string; text: string; section: string | null; url: string; title: string | null; embedding: Uint8Array | null }

/**
 * What the engine reads of an agent's knowledge, injected by its caller (issue 41, item 10): the engine itself does no
 * I/O, so it runs the same over PostgreSQL (`chunkStore` in `src/db/page-chunks.ts`) or any other source of chunks.
 */
export interface KnowledgeStore {
  /** The chunks of the agent's knowledge holding any of the words (full text, each chunk's language), best first. */
  findChunksWithAnyWord(agentId: string, words: string[], limit: number, prefixes?: string[]): Promise<ChunkRow[]>;
  /** How many chunks there are, and how many hold each word: the statistics of term weights. */
  countChunksWithWords(agentId: string, words: string[]): Promise<{ total: number; df: Map<string, number> }>;
  /**
   * The sites and knowledge bases the agent answers from, each with the index generation it serves and how many of its
   * passages still wait for their vector (`embedding`, computed after the site is ready; absent: none).
   */
  knowledgeSources(agentId: string): Promise<{ id: string; generation: number; embedding?: number }[]>;
  /** Every chunk of one served generation of a source, with its page and vector (null when stored without one). */
  chunksOfGeneration(sourceId: string, generation: number): Promise<GenerationChunk[]>;
  /** The vectors of one served generation's passages that have one (read again while they are being computed). */
  vectorsOfGeneration(sourceId: string, generation: number): Promise<{ id: string; embedding: Uint8Array }[]>;
  /** The chunks of these ids. */
  chunksByIds(ids: string[]): Promise<ChunkRow[]>;
  /** The chunks within `span` places of each of `ids` on its page, each with the id it stands near (`near`). */
  chunksNear(ids: string[], span: number): Promise<(ChunkRow & { near: string })[]>;
}
