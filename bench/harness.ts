import { createScratchDatabase, startScratchTemporal } from '../src/infra/scratch.ts';

/** Shared plumbing of the benchmark scripts: settings, output, and cleanup that always runs. */

/** A positive whole number from the environment, or the fallback when unset. */
export function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got ${raw}`);
  return value;
}

export const say = (line = '') => process.stdout.write(`${line}\n`);

/** Cleanup steps, run last-in first-out whatever happened. */
const cleanups: { name: string; run: () => Promise<unknown> }[] = [];

export function onCleanup(name: string, run: () => Promise<unknown>): void {
  cleanups.push({ name, run });
}

let cleaning: Promise<boolean> | undefined;
/** Runs every cleanup step once (later calls share the first); false when one failed. */
export function cleanUp(): Promise<boolean> {
  return cleaning ??= (async () => {
    let ok = true;
    for (const step of cleanups.reverse()) {
      try {
        await step.run();
      } catch (err) {
        ok = false;
        process.stderr.write(`cleanup of ${step.name} failed: ${(err as Error).message}\n`);
      }
    }
    return ok;
  })();
}

/** A fresh database (dropped at the end) on the machine's PostgreSQL, or an embedded one. */
export async function freshDatabase(): Promise<string> {
  const db = await createScratchDatabase({ prefix: 'ams_bench', log: say });
  onCleanup('database', () => db.drop());
  return db.url;
}

/** An in-memory Temporal dev server, stopped at the end. */
export async function startTemporal(): Promise<string> {
  const dev = await startScratchTemporal({ log: say });
  onCleanup('Temporal dev server', () => dev.stop());
  return dev.address;
}
