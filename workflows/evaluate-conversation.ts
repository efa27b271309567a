import { proxyActivities } from '@temporalio/workflow';
import type { ConversationActivities } from '../activities/conversations.ts';

const { evaluateEndedConversation } = proxyActivities<ConversationActivities>({
  // An LLM evaluation can take a while; its retries cover a provider's bad minute.
  startToCloseTimeout: '3 minutes',
  // The activity heartbeats every 5 s: a worker killed mid-evaluation is replaced within 30 s.
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '5 seconds', maximumInterval: '5 minutes', maximumAttempts: 10 },
});

/**
 * Evaluates an ended conversation (extracted data, verdicts per goal and criterion, intent,
 * outcome) and emits `conversation.evaluated`.
 */
export async function evaluateConversationWorkflow(input: { conversationId: string }): Promise<boolean> {
  return evaluateEndedConversation(input);
}
