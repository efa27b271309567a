import { DefaultLogger, Runtime } from '@temporalio/worker';

// Temporal's own logs stay quiet in tests unless something is wrong.
try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // Already installed in this process by an earlier test file.
}
