/**
 * Prints the absolute path of the Temporal CLI on stdout, building it first if
 * needed (progress goes to stderr). Used by scripts/run.mjs and .ci/run:
 *   node --import tsx scripts/ensure-temporal-cli.ts
 */
import { ensureTemporalCli } from '../src/infra/temporal-cli.ts';

try {
  const path = await ensureTemporalCli({ log: (line) => process.stderr.write(`${line}\n`) });
  process.stdout.write(`${path}\n`);
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
