import { ActivityCancellationType, CancellationScope, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { SimulationActivities } from '../activities/simulations.ts';
import { workflowIds, workflowKind } from '../src/temporal/ids.ts';

export interface WebSimulationInput {
  simulationId: string;
  /** Where the embed script is served from (the API's public origin), for pages that lack the snippet. */
  embedBaseUrl: string;
}

const { closeSimulation } = proxyActivities<SimulationActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

const { runWebSimulation } = proxyActivities<SimulationActivities>({
  // The API waits at most 5 minutes for the whole run.
  startToCloseTimeout: '5 minutes',
  // The run heartbeats every 2 s while its browser is open: a browser that hangs is noticed within 10 s, and a
  // cancellation (delivered with a heartbeat's answer, at most every 8 s) reaches it within seconds.
  heartbeatTimeout: '10 seconds',
  // Cancelled, the workflow waits until the activity has closed Chromium, then records `canceled`.
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  // Not retried: a page that cannot be opened is the run's readable `error`, answered at once.
  retry: { maximumAttempts: 1 },
});

/**
 * A web simulation (`web-simulation:<id>`): one activity opens the page in headless Chromium,
 * injects the embed snippet when the page lacks it, types the scripted caller's turns into the
 * real widget and reads the agent's replies from its DOM. The activity records the run's end
 * itself (completed or failed, with the screenshot of the finished chat). Cancelled (issue 43), it
 * waits for the activity to close Chromium, then records `canceled`.
 */
export async function runWebSimulationWorkflow(input: WebSimulationInput): Promise<{ status: 'completed' | 'failed' | 'canceled' }> {
  try {
    return await runWebSimulation(input);
  } catch (err) {
    if (isCancellation(err)) {
      // POST /simulations/:id/cancel: the browser is closed (the activity acknowledged); recorded though this scope is cancelled.
      await CancellationScope.nonCancellable(() => closeSimulation({ simulationId: input.simulationId, status: 'canceled', endedReason: 'canceled' }));
      return { status: 'canceled' };
    }
    // The browser hung or its worker was lost: the run fails with a readable error, never stays running.
    await closeSimulation({ simulationId: input.simulationId, status: 'failed', endedReason: 'error', error: 'the browser did not finish the run in time' });
    return { status: 'failed' };
  }
}

/** How the API starts a web simulation: once per run, on the conversations queue. */
export const runWebSimulationKind = workflowKind(runWebSimulationWorkflow, { queue: 'conversations', reuse: 'rejectDuplicate', id: workflowIds.webSimulation });
