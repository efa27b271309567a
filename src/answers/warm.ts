import type { KnowledgeStore } from './store.ts';
import { warmStemmer } from './analysis.ts';
import { warmSentenceEncoder } from './meaning.ts';
import { warmNlp } from './nlp.ts';
import { readKnowledgeAhead, warmKnowledge } from './retrieval.ts';
import { warmWordNet } from './wordnet.ts';

/**
 * The answer engine made ready for an agent's first question (issue 44): WordNet's indexes, compromise, Snowball's French
 * stemmer, the agent's knowledge as retrieval keeps it (its passages' sentences read as the ranking reads them) and, for an agent with
 * knowledge, the sentence encoder's thread and model, each loaded on its first use otherwise, which made a streamed
 * call's first turn about 2 s slower than the next ones. A streamed call starts it while its greeting plays
 * (src/voice/call-stream.ts); never at the service's start (an idle service does not hold them, issue 48). In the
 * background: WordNet is read a few ms at a time, the passages one per turn of the event loop, and the encoder loads
 * in its own thread; loading compromise is the one long block of the event loop. Every part is what a question would
 * load itself, so replies are the same, warmed or not.
 * @example
 * void warmAnswerEngine(chunkStore(sql), agent.id).catch((err) => log.warn({ err }, 'answer engine not warmed'));
 */
export async function warmAnswerEngine(store: KnowledgeStore, agentId: string): Promise<void> {
  const knowledge = warmKnowledge(store, agentId);
  // An agent with no knowledge never loads the encoder (100-190 MiB), warmed or not.
  const encoder = knowledge.then((some) => (some ? warmSentenceEncoder() : undefined));
  const reading = (async () => {
    await warmWordNet();
    await warmNlp();
    // Snowball's French stemmer, which the first word WordNet does not know would load (0.3-0.9 s of one block).
    await new Promise((resolve) => setImmediate(resolve));
    warmStemmer();
    // Its passages' sentences, as the ranking reads them (WordNet's senses and definitions of their words included).
    await knowledge;
    await readKnowledgeAhead(store, agentId);
  })();
  await Promise.all([knowledge, encoder, reading]);
}
