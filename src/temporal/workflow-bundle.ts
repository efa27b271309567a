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
 */
export async function bundleWorkflows(logger: BundleOptions['logger']): Promise<{ code: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'ams-workflows-'));
  try {
    const workflowsPath = join(dir, 'workflows.js');
    await writeFile(workflowsPath, workflowsEntry());
    const { code } = await bundleWorkflowCode({
      workflowsPath, logger,
      webpackConfigHook: (config) => ({ ...config, resolve: { ...config.resolve, modules: [...(config.resolve?.modules ?? []), NODE_MODULES] } }),
    });
    return { code: asciiComments(code) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
