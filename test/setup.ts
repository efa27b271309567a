import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';

// Temporal's own logs stay quiet in tests unless something is wrong. WARN is where the worker reports
// every failed activity attempt and failed workflow task, which the fault tests cause on purpose (issue 42:
// a passing npm test printed about 20 such blocks and 142 stack lines). A test that goes wrong fails by
// its assertions; set TEST_TEMPORAL_LOG_LEVEL=WARN (or DEBUG) to see them while chasing one.
const LEVELS: LogLevel[] = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'];
const wanted = process.env.TEST_TEMPORAL_LOG_LEVEL?.toUpperCase() as LogLevel | undefined;
try {
  const level = wanted && LEVELS.includes(wanted) ? wanted : 'ERROR';
  // The SDK's native core prints to the console on its own (e.g. "Activity not found on completion" when a
  // test ends a workflow under a running activity): held to the same level.
  Runtime.install({ logger: new DefaultLogger(level), telemetryOptions: { logging: { filter: { core: level, other: level }, forward: {} } } });
} catch {
  // Already installed in this process by an earlier test file.
}
