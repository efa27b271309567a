/** BENCH_BASELINE: another commit of the service, built beside this checkout (bench:api, bench:idle-memory). */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { onCleanup, say } from './harness.ts';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

/**
 * BENCH_BASELINE=<git ref>: that commit of the service, compiled in a scratch folder (sharing this checkout's
 * node_modules), measured in the same rounds: a before and after of the request path in one run, on the same
 * load, which separate runs on a shared machine cannot give.
 */
export function buildBaseline(ref: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'ams-bench-baseline-'));
  onCleanup('baseline build', async () => rmSync(dir, { recursive: true, force: true }));
  const archive = spawnSync('sh', ['-c', `git -C "${ROOT}" archive "$0" | tar -x -C "${dir}"`, ref], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (archive.status !== 0) throw new Error(`BENCH_BASELINE: cannot export ${ref}`);
  // BENCH_BASELINE_MODULES: another node_modules for it (a dependency's patch measured before and after).
  symlinkSync(process.env.BENCH_BASELINE_MODULES ?? join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  say(`compiling the baseline ${ref} in ${dir}...`);
  spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(dir, 'tsconfig.build.json')], { stdio: ['ignore', 'inherit', 'inherit'] });
  const main = join(dir, 'dist', 'src', 'main.js');
  if (!existsSync(main)) throw new Error(`BENCH_BASELINE: the build of ${ref} produced nothing`);
  return main;
}

