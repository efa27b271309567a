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
    return await bundleWorkflowCode({
      workflowsPath, logger,
      webpackConfigHook: (config) => ({ ...config, resolve: { ...config.resolve, modules: [...(config.resolve?.modules ?? []), NODE_MODULES] } }),
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
