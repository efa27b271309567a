/**
 * A worker process of its own, for tests that kill one (`node --import tsx test/support/worker-process.ts`):
 * the service's workers (and webhook dispatcher, and Schedules) against DATABASE_URL and
 * TEMPORAL_ADDRESS, with the configuration of the environment and the workflow bundle at
 * WORKFLOW_BUNDLE_PATH. Prints `ready` on stdout once it polls.
 */
import { readFile } from 'node:fs/promises';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { startService } from '../../src/service.ts';

Runtime.install({ logger: new DefaultLogger('ERROR') });
const config = loadConfig();
const code = await readFile(process.env.WORKFLOW_BUNDLE_PATH!, 'utf8');
const service = await startService({
  config, databaseUrl: config.DATABASE_URL!, temporalAddress: config.TEMPORAL_ADDRESS!,
  log: createLogger(config.LOG_LEVEL), api: false, worker: true, workflowBundle: { code },
});
process.stdout.write('ready\n');
process.on('SIGTERM', () => void service.stop().then(() => process.exit(0)));
