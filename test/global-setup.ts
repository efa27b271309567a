import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DefaultLogger } from '@temporalio/worker';
import type { TestProject } from 'vitest/node';
import { createScratchDatabase, startScratchTemporal } from '../fixtures/scratch.ts';
import { bundleWorkflows } from '../src/temporal/workflow-bundle.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Server URL without a database name; tests create their own databases on it. */
    pgServerUrl: string;
    /** The fresh database of this run. */
    databaseUrl: string;
    temporalAddress: string;
    temporalUiUrl: string | null;
    workflowBundlePath: string;
    cliPath: string;
  }
}

/**
 * One real Temporal dev server (in memory) and one fresh PostgreSQL database for the whole run,
 * plus the workflow bundle built once. PostgreSQL is the machine's server when it answers,
 * else an embedded one.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dataDir = join(process.cwd(), '.data', 'test');
  await mkdir(dataDir, { recursive: true });
  const log = (l: string) => process.stderr.write(`${l}\n`);
  const [database, temporal, bundle] = await Promise.all([
    createScratchDatabase({ prefix: 'ams_test', log }),
    startScratchTemporal({ log, ui: process.env.TEST_TEMPORAL_UI === '1' }),
    bundleWorkflows(new DefaultLogger('WARN')),
  ]);
  const workflowBundlePath = join(dataDir, 'workflow-bundle.js');
  await writeFile(workflowBundlePath, bundle.code);

  project.provide('pgServerUrl', database.serverUrl);
  project.provide('databaseUrl', database.url);
  project.provide('temporalAddress', temporal.address);
  project.provide('temporalUiUrl', temporal.uiUrl);
  project.provide('workflowBundlePath', workflowBundlePath);
  project.provide('cliPath', temporal.cliPath);

  return async () => {
    await temporal.stop();
    await database.drop();
  };
}
