import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleWorkflowCode, type BundleOptions } from '@temporalio/worker';
import { moduleFiles } from '../modules.ts';
import { sourceFile } from '../infra/paths.ts';

const WORKFLOWS_DIR = new URL('../../workflows/', import.meta.url);
const NODE_MODULES = sourceFile('node_modules');

/** The worker's entry module: every workflow file of workflows/, so a new workflow registers itself by being there. */
export function workflowsEntry(): string {
  return moduleFiles(WORKFLOWS_DIR).map((path) => `export * from ${JSON.stringify(path)};\n`).join('');
}

/** A line of comment, as far as its first non-ASCII character: ` * `, `// `, `/* ` before it. */
const COMMENT_LINE = /^(?<head>[ \t]*(?:\/\/|\/\*|\*)[^\n\r\u0080-\uffff]*)(?<rest>[\u0080-\uffff].*)$/gm;

/**
 * The bundle with the non-ASCII characters of its comment lines written as `\uXXXX` (a handful: `→`, `—`, `ø`
 * in our comments and the SDK's). One such character makes V8 keep the whole text, 1.9 million characters, in
 * two bytes each, in the workflow thread for the life of the process; all-ASCII, it takes one. Only lines that
 * begin as comments are touched, so what the code says is unchanged (an escape in a string or a regular expression
 * on such a line would mean the same character), and the source map's columns move only after the character. A
 * non-ASCII character on any other line is left as it is (the bundle then stays in two bytes, as before).
 */
export function asciiComments(code: string): string {
  return code.replace(COMMENT_LINE, (_line, head: string, rest: string) =>
    head + rest.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
}

/**
 * Bundles every workflow of workflows/ (webpack, through the SDK). The entry listing them is
 * written to a temporary folder for the build; the SDK's own entry, written beside it, finds the
 * SDK in this project's node_modules.
 *
 * The entry and every module it imports (our workflow files and src/temporal/ids.ts) are preloaded (the SDK's
 * `preloadModules`, for its reused V8 context): evaluated once in the workflow thread and shared by every run, where
 * each run would otherwise evaluate all 22 of them again in a module cache of its own when it starts (issue 48:
 * about 1 ms of the workflow thread's CPU per run, half of what creating and disposing a run costs; a campaign
 * call is one run). The SDK's condition for sharing a module: no state of a run at module scope. Ours hold only
 * constants, definitions (`defineSignal`, `proxyActivities`: stateless until called inside a run) and functions;
 * the SDK deep-freezes their exports. Keep it so: a module-level `let` or a mutable Map in workflows/ would be
 * shared between runs.
 */
export async function bundleWorkflows(logger: BundleOptions['logger']): Promise<{ code: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'ams-workflows-'));
  try {
    const workflowsPath = join(dir, 'workflows.js');
    await writeFile(workflowsPath, workflowsEntry());
    const { code } = await bundleWorkflowCode({
      workflowsPath, logger,
      // Evaluated once when the workflow thread loads the bundle, not again for every workflow run (see above).
      preloadModules: [workflowsPath],
      webpackConfigHook: (config) => ({ ...config, resolve: { ...config.resolve, modules: [...(config.resolve?.modules ?? []), NODE_MODULES] } }),
    });
    return { code: asciiComments(code) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
