import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Collects start-up's garbage once the service is up and quiet. Start-up leaves tens of MiB of
 * garbage and a grown young generation (module sources, the workflow bundle's text, migration
 * files, schema compilation) that V8 collects and gives back only under allocation pressure,
 * which an idle service never creates: measured, the `npm start` process sat at about 270-300 MiB
 * resident idle, and at about 200 MiB after collections like these.
 *
 * Two full collections: the first frees start-up's garbage; the second, `quietMs` later, sees a
 * low allocation rate since the first, which is when V8 also shrinks the young generation and
 * returns its pages. `gc` is exposed for these calls (the technique Jest's leak detector uses)
 * when the process was not started with --expose-gc; each takes some tens of milliseconds.
 */
export function collectStartupGarbage(quietMs = 5000): void {
  collectGarbage();
  setTimeout(collectGarbage, quietMs).unref();
}

let exposedGc: (() => void) | undefined;

/** One full collection, now (`gc` exposed as above when the process was started without it). */
export function collectGarbage(): void {
  exposedGc ??= (globalThis as { gc?: () => void }).gc;
  if (!exposedGc) {
    setFlagsFromString('--expose-gc');
    exposedGc = runInNewContext('gc') as () => void;
  }
  exposedGc();
}
