/**
 * Prints the workflow bundle (webpack output of workflows/index.ts) on stdout. Run as a child process
 * by `startWorkers`: webpack's memory then leaves with the child instead of staying in the service
 * process (about 80 MiB of resident memory that a long-running process never gives back).
 *   node --import tsx src/temporal/bundle-workflows.ts
 */
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { codeFile } from '../infra/paths.ts';

const WORKFLOWS_PATH = codeFile('workflows', 'index');

const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('WARN', (entry) => process.stderr.write(`${entry.message}\n`)) });
process.stdout.write(code);
