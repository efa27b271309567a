import { condition, continueAsNew, defineSignal, executeChild, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { ConversationActivities } from '../activities/conversations.ts';
import { evaluateConversationWorkflow } from './evaluate-conversation.ts';
import { workflowIds } from '../src/temporal/ids.ts';

/** A message was exchanged: the inactivity timer starts again. */
export const activitySignal = defineSignal('activity');
/** The visitor ended the conversation (already recorded): go on to the evaluation. */
export const endedSignal = defineSignal('ended');

export interface ConversationLifecycleInput { conversationId: string; inactivitySeconds: number }

const { endIdleConversation } = proxyActivities<ConversationActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

// Keeps the history of a very long conversation bounded.
const TURNS_PER_RUN = 500;

/**
 * The life of a conversation after its start: each message restarts an inactivity timer; when it
 * runs out the conversation ends (reason `inactivity`). Either way its evaluation follows, as the
 * child workflow `conversation-evaluation:<id>`.
 */
export async function conversationLifecycle(input: ConversationLifecycleInput): Promise<void> {
  let active = false;
  let ended = false;
  setHandler(activitySignal, () => { active = true; });
  setHandler(endedSignal, () => { ended = true; });
  for (let turns = 0; !ended; turns++) {
    if (turns >= TURNS_PER_RUN) return continueAsNew<typeof conversationLifecycle>(input);
    active = false;
    const heard = await condition(() => active || ended, `${input.inactivitySeconds} seconds`);
    if (!heard) {
      await endIdleConversation({ conversationId: input.conversationId });
      break;
    }
  }
  await executeChild(evaluateConversationWorkflow, {
    workflowId: workflowIds.conversationEvaluation(input.conversationId),
    args: [{ conversationId: input.conversationId }],
    taskQueue: workflowInfo().taskQueue,
    staticSummary: `Evaluation of conversation ${input.conversationId}`,
    // The same OrganizationId and AgentId as this workflow, so an operator's filter finds it too.
    typedSearchAttributes: workflowInfo().typedSearchAttributes,
  });
}
