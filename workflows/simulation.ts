import {
  ApplicationFailure, CancellationScope, allHandlersFinished, condition, defineUpdate, executeChild, isCancellation,
  proxyActivities, setHandler, workflowInfo,
} from '@temporalio/workflow';
import type { SimulationActivities } from '../activities/simulations.ts';
import { evaluateConversationWorkflow } from './evaluate-conversation.ts';
import { workflowIds, workflowKind } from '../src/temporal/ids.ts';

export interface SimulationInput {
  simulationId: string;
  conversationId: string;
  maxTurns: number;
  /** `auto`: the run plays its turns itself; `manual`: each turn waits for a `step` Update. */
  mode: 'manual' | 'auto';
}

/** What one step did: the ids of the messages it added (caller's first) and whether the run has ended. */
export interface StepOutcome { turn: number; messageIds: string[]; done: boolean }

/** One caller turn and one agent turn, answered once both are stored. Steps run one after another. */
export const stepUpdate = defineUpdate<StepOutcome>('step');

const { playSimulationTurn } = proxyActivities<SimulationActivities>({
  // A turn is the runtime's answer (an LLM may take a while), retried on a worker lost mid-turn.
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
});
const { closeSimulation } = proxyActivities<SimulationActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

/**
 * A turn-based simulation (`simulation:<id>`): a scripted caller (or another agent) talks with
 * the agent under test. Each turn is played by one activity that stores the caller's message and
 * the agent's replies together; turns are serialized (two steps sent at once run one after the
 * other). The run ends when the caller's goal is met or after `maxTurns`; then its conversation
 * is evaluated by the usual child workflow. Cancelled, it records `canceled` and stops.
 */
export async function runSimulation(input: SimulationInput): Promise<{ status: 'completed' | 'canceled' | 'failed'; turns: number }> {
  let turn = 0;
  let done = false;
  let failed = false;
  let queue: Promise<unknown> = Promise.resolve();

  const play = async (): Promise<StepOutcome> => {
    if (done) throw ApplicationFailure.nonRetryable('the simulation has ended', 'invalid_state');
    let played;
    try {
      played = await playSimulationTurn({ simulationId: input.simulationId, turn: turn + 1 });
    } catch (err) {
      if (isCancellation(err)) throw err;
      done = true;
      failed = true;
      await closeSimulation({ simulationId: input.simulationId, status: 'failed', endedReason: 'error', error: 'a turn could not be played' });
      throw ApplicationFailure.nonRetryable('the turn could not be played; the run failed', 'failed');
    }
    turn += 1;
    if (played.callerDone || turn >= input.maxTurns) {
      done = true;
      // Recorded before the step answers, so the step's answer shows the run completed.
      await closeSimulation({ simulationId: input.simulationId, status: 'completed', endedReason: played.callerDone ? 'goal_met' : 'max_turns' });
    }
    return { turn, messageIds: played.messageIds, done };
  };
  /** Runs `play` after every step before it, whatever their outcome. */
  const enqueue = (): Promise<StepOutcome> => {
    const next = queue.then(play);
    queue = next.catch(() => undefined);
    return next;
  };

  setHandler(stepUpdate, enqueue, {
    validator: () => { if (done) throw new Error('the simulation has ended'); },
  });

  try {
    if (input.mode === 'auto') {
      // A failed turn has already recorded the run as failed (and set done).
      while (!done) await enqueue().catch((err: unknown) => { if (isCancellation(err)) throw err; });
    }
    await condition(() => done && allHandlersFinished());
  } catch (err) {
    if (!isCancellation(err)) throw err;
    // Cancelled: record it even though this scope is cancelled.
    await CancellationScope.nonCancellable(() =>
      closeSimulation({ simulationId: input.simulationId, status: 'canceled', endedReason: 'canceled' }));
    return { status: 'canceled', turns: turn };
  }
  if (failed) return { status: 'failed', turns: turn };
  await executeChild(evaluateConversationWorkflow, {
    workflowId: workflowIds.conversationEvaluation(input.conversationId),
    args: [{ conversationId: input.conversationId }],
    taskQueue: workflowInfo().taskQueue,
    staticSummary: `Evaluation of simulated conversation ${input.conversationId}`,
    typedSearchAttributes: workflowInfo().typedSearchAttributes,
  });
  return { status: 'completed', turns: turn };
}

/** How the API starts a simulation run: once per run, on the conversations queue. */
export const runSimulationKind = workflowKind(runSimulation, { queue: 'conversations', reuse: 'rejectDuplicate', id: workflowIds.simulation });
