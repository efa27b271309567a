import { condition, continueAsNew, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { AssignmentActivities } from '../activities/assignments.ts';
import { workflowIds, workflowKind } from '../src/temporal/ids.ts';

/** Something changed that may let the assignment move on: a member came online, took over, released, was assigned by hand. */
export const pokeSignal = defineSignal('poke');

export interface AssignConversationInput {
  conversationId: string;
  /** Seconds an assignee has to take the conversation over before it goes to the next member. */
  acceptSeconds: number;
  /** Seconds between looks at the queue when nothing pokes the workflow. */
  recheckSeconds: number;
  /** Carried over a continue-as-new. */
  exclude?: string[];
  notified?: string | null;
}

const { assignNext, checkAssignee } = proxyActivities<AssignmentActivities>({
  // One short transaction: a worker that died holding it is noticed soon.
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});
const { notifyMembers } = proxyActivities<AssignmentActivities>({
  startToCloseTimeout: '2 minutes',
  // A mail server's bad hour is ridden out; a notice not sent within a few hours is given up.
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '10 minutes', maximumAttempts: 20 },
});

const ROUNDS_PER_RUN = 200;

/**
 * A conversation that asks for a person (issue 45), from the request until a member takes it over
 * or it ends: assigned round-robin to an online member of its routed team under their cap, or waiting
 * in the queue (looked at again when poked, and every `recheckSeconds`); an assignee who does not
 * take it over within `acceptSeconds`, or goes offline meanwhile, loses it to the next member. Each
 * decision is one activity under the conversation's lock, which sees what an earlier attempt
 * committed: a worker killed mid-assignment never assigns twice.
 */
export async function assignConversation(input: AssignConversationInput): Promise<{ outcome: 'closed' | 'taken_over' }> {
  let poked = false;
  setHandler(pokeSignal, () => { poked = true; });
  let exclude = input.exclude ?? [];
  // The assignment step (or `waiting`) members were last told of: each is told once.
  let notified = input.notified ?? null;
  for (let round = 0; round < ROUNDS_PER_RUN; round++) {
    poked = false;
    const step = await assignNext({ conversationId: input.conversationId, exclude });
    if (step.outcome !== 'assigned') {
      if (step.outcome !== 'queued') return { outcome: step.outcome };
      if (notified !== 'waiting') {
        await notifyMembers({ conversationId: input.conversationId, kind: 'waiting', memberId: null, key: 'waiting' });
        notified = 'waiting';
      }
      // Those passed over get their turn again on the next look.
      exclude = [];
      await condition(() => poked, `${input.recheckSeconds} seconds`);
      continue;
    }
    if (notified !== step.assignmentId) {
      await notifyMembers({ conversationId: input.conversationId, kind: 'assigned', memberId: step.memberId, key: step.assignmentId });
      notified = step.assignmentId;
    }
    const woken = await condition(() => poked, `${input.acceptSeconds} seconds`);
    const check = await checkAssignee({ conversationId: input.conversationId, memberId: step.memberId, timedOut: !woken });
    if (check === 'closed') return { outcome: 'closed' };
    if (check === 'taken_over') return { outcome: 'taken_over' };
    if (check === 'released') exclude = [...exclude, step.memberId];
  }
  await continueAsNew<typeof assignConversation>({ ...input, exclude, notified });
  return { outcome: 'closed' };
}

/** One run at a time per conversation; a later request (a release, a new hand-off) starts a new run. */
export const assignConversationKind = workflowKind(assignConversation, { queue: 'conversations', reuse: 'allowDuplicate', id: workflowIds.assignment });
