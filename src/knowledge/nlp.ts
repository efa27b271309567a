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
