import {
  allHandlersFinished, condition, continueAsNew, defineSignal, defineUpdate, executeChild, proxyActivities, setHandler, workflowInfo,
} from '@temporalio/workflow';
import type { ConversationActivities } from '../activities/conversations.ts';
import type { AgentToolActivities, SealedToolOutcome, ToolCallInput } from '../activities/agent-tools.ts';
import { evaluateConversationWorkflow } from './evaluate-conversation.ts';
import { workflowIds, workflowKind } from '../src/temporal/ids.ts';

/** A message was exchanged: the inactivity timer starts again. */
export const activitySignal = defineSignal('activity');
/** The visitor ended the conversation (already recorded): go on to the evaluation. */
export const endedSignal = defineSignal('ended');
/** A member took the conversation over: the agent is silent and the longer human inactivity limit applies. */
export const takeOverSignal = defineSignal('takeOver');
/** The member handed the conversation back to the agent. */
export const handBackSignal = defineSignal('handBack');

/** A tool call of the agent, made as an activity of this workflow; answers its outcome (a failure is an outcome too). */
export type ToolCallRequest = Omit<ToolCallInput, 'maxAttempts'> & { timeoutSeconds: number };
export const callToolUpdate = defineUpdate<SealedToolOutcome, [ToolCallRequest]>('callTool');

/** Attempts of one tool call: only failures where repeating is safe are retried (see callAgentTool). */
const TOOL_CALL_ATTEMPTS = 3;

async function callTool(request: ToolCallRequest): Promise<SealedToolOutcome> {
  const { timeoutSeconds, ...input } = request;
  const { callAgentTool } = proxyActivities<AgentToolActivities>({
    // The tool's own timeout bounds the HTTP call; the margin covers loading and signing.
    startToCloseTimeout: `${timeoutSeconds + 5} seconds`,
    retry: { initialInterval: '250 milliseconds', backoffCoefficient: 2, maximumAttempts: TOOL_CALL_ATTEMPTS },
  });
  try {
    return await callAgentTool({ ...input, maxAttempts: TOOL_CALL_ATTEMPTS });
  } catch {
    return { status: 'error', durationMs: 0, httpStatus: null, sealedResult: null, error: 'the call could not be made', retryable: false };
  }
}

export interface ConversationLifecycleInput {
  conversationId: string;
  inactivitySeconds: number;
  /** The inactivity limit while a member holds the conversation (absent in runs started before take-over existed). */
  humanInactivitySeconds?: number;
  /** Whether a member held it when the run continued as new. */
  human?: boolean;
}

const DEFAULT_HUMAN_INACTIVITY_SECONDS = 4 * 3600;

const { endIdleConversation } = proxyActivities<ConversationActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

// Keeps the history of a very long conversation bounded.
const TURNS_PER_RUN = 500;

/**
 * The life of a conversation after its start: each message restarts an inactivity timer (a longer
 * one while a member holds the conversation, see takeOverSignal); when it runs out the conversation ends (reason `inactivity`). Either way its evaluation follows, as the
 * child workflow `conversation-evaluation:<id>`.
 */
export async function conversationLifecycle(input: ConversationLifecycleInput): Promise<void> {
  let active = false;
  let ended = false;
  let human = input.human ?? false;
  setHandler(activitySignal, () => { active = true; });
  setHandler(endedSignal, () => { ended = true; });
  // A change of hands counts as activity: the timer starts again with the new limit.
  setHandler(takeOverSignal, () => { human = true; active = true; });
  setHandler(handBackSignal, () => { human = false; active = true; });
  setHandler(callToolUpdate, callTool);
  for (let turns = 0; !ended; turns++) {
    if (turns >= TURNS_PER_RUN) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof conversationLifecycle>({ ...input, human });
    }
    active = false;
    const limit = human ? (input.humanInactivitySeconds ?? DEFAULT_HUMAN_INACTIVITY_SECONDS) : input.inactivitySeconds;
    const heard = await condition(() => active || ended, `${limit} seconds`);
    if (!heard) {
      await endIdleConversation({ conversationId: input.conversationId });
      break;
    }
  }
  // A tool call under way when the conversation ends still answers its turn.
  await condition(allHandlersFinished);
  await executeChild(evaluateConversationWorkflow, {
    workflowId: workflowIds.conversationEvaluation(input.conversationId),
    args: [{ conversationId: input.conversationId }],
    taskQueue: workflowInfo().taskQueue,
    staticSummary: `Evaluation of conversation ${input.conversationId}`,
    // The same OrganizationId and AgentId as this workflow, so an operator's filter finds it too.
    typedSearchAttributes: workflowInfo().typedSearchAttributes,
  });
}

/** One lifecycle per conversation, ever. */
export const conversationLifecycleKind = workflowKind(conversationLifecycle, { queue: 'conversations', reuse: 'rejectDuplicate', id: workflowIds.conversation });
