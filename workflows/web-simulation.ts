import { proxyActivities } from '@temporalio/workflow';
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
  // Each turn heartbeats: a browser that hangs is noticed within a minute, not after five.
  heartbeatTimeout: '1 minute',
  // Not retried: a page that cannot be opened is the run's readable `error`, answered at once.
  retry: { maximumAttempts: 1 },
});

/**
 * A web simulation (`web-simulation:<id>`): one activity opens the page in headless Chromium,
 * injects the embed snippet when the page lacks it, types the scripted caller's turns into the
 * real widget and reads the agent's replies from its DOM. The activity records the run's end
 * itself (completed or failed, with the screenshot of the finished chat).
 */
export async function runWebSimulationWorkflow(input: WebSimulationInput): Promise<{ status: 'completed' | 'failed' }> {
  try {
    return await runWebSimulation(input);
  } catch {
    // The browser hung or its worker was lost: the run fails with a readable error, never stays running.
    await closeSimulation({ simulationId: input.simulationId, status: 'failed', endedReason: 'error', error: 'the browser did not finish the run in time' });
    return { status: 'failed' };
  }
}

/** How the API starts a web simulation: once per run, on the conversations queue. */
export const runWebSimulationKind = workflowKind(runWebSimulationWorkflow, { queue: 'conversations', reuse: 'rejectDuplicate', id: workflowIds.webSimulation });
