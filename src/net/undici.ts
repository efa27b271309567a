import { createRequire } from 'node:module';
import type * as Undici from 'undici';

let loaded: typeof Undici | undefined;

/**
 * The undici package, loaded on first use (it is CommonJS; about 11 MiB that an idle service,
 * which fetches nothing, does not need). Types come from `import type` as usual.
 */
export function undici(): typeof Undici {
  return loaded ??= createRequire(import.meta.url)('undici') as typeof Undici;
}
