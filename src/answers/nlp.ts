import { createRequire } from 'node:module';
import type compromise from 'compromise';

let loaded: typeof compromise | undefined;

/**
 * compromise's `nlp`, loaded on first use (its CommonJS build, so callers stay synchronous): its
 * lexicon and models hold about 35 MiB that an idle service does not need.
 */
export function nlp(text: string): ReturnType<typeof compromise> {
  loaded ??= createRequire(import.meta.url)('compromise') as typeof compromise;
  return loaded(text);
}

/**
 * compromise loaded, and one sentence read with it (its first reading sets up more than the next ones), ahead of a
 * question: a streamed call's greeting (issue 44). Two blocks of the event loop (loading it is one, 0.3-0.6 s, which no
 * part of it can be split from), a turn of the loop between them.
 */
export async function warmNlp(): Promise<void> {
  loaded ??= createRequire(import.meta.url)('compromise') as typeof compromise;
  await new Promise<void>((resolve) => { setImmediate(resolve); });
  nlp('Where can I park on Saturday morning, Dr. Park?').match('#Noun').out('array');
}

/** compromise's lexicon: a word (lower case) to its tag. */
function lexicon(): Record<string, unknown> {
  loaded ??= createRequire(import.meta.url)('compromise') as typeof compromise;
  return (loaded.model() as { one: { lexicon: Record<string, unknown> } }).one.lexicon;
}

/** Whether compromise's lexicon knows `word` (lower case) at all: its irregular forms too ("seen", "brought", "cannot"). */
export function isLexiconWord(word: string): boolean {
  return lexicon()[word] !== undefined;
}

/** Whether compromise's lexicon knows `word` (lower case) as a first name ("helen", "marcus"; not "maya", a people). */
export function isFirstName(word: string): boolean {
  const tag = lexicon()[word];
  return tag === 'FirstName' || tag === 'MaleName' || tag === 'FemaleName';
}
