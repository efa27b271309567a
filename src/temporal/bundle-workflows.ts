/**
 * Writes the workflow bundle (webpack output of every module of workflows/) to the file named, or prints it on
 * stdout. Run as a child process by `startWorkers`: webpack's memory then leaves with the child instead of staying
 * in the service process (about 80 MiB of resident memory that a long-running process never gives back).
 *   node --import tsx src/temporal/bundle-workflows.ts [FILE]
 */
import { writeFile } from 'node:fs/promises';
import { DefaultLogger } from '@temporalio/worker';
import { bundleWorkflows } from './workflow-bundle.ts';

const { code } = await bundleWorkflows(new DefaultLogger('WARN', (entry) => process.stderr.write(`${entry.message}\n`)));
const file = process.argv[2];
if (file) await writeFile(file, code);
else process.stdout.write(code);
