import {
  condition, continueAsNew, defineSignal, proxyLocalActivities, setHandler, startChild, workflowInfo, type ChildWorkflowHandle,
} from '@temporalio/workflow';
import type { CampaignActivities } from '../activities/campaigns.ts';
import type { CampaignOutcome } from '../src/campaigns/calls.ts';
import { workflowIds, workflowKind } from '../src/temporal/ids.ts';
import { hangupSignal, runCampaignCall } from './campaign-call.ts';

/** The campaign's status changed (paused, resumed): read it back. */
export const campaignWakeSignal = defineSignal('wake');
/** The campaign was canceled (its queued calls already ended): hang up the calls in flight. */
export const campaignCancelSignal = defineSignal('cancel');

// Short reads of the queue: local activities, so a turn of the queue costs no task round trip.
const { nextCalls, finishCampaign, campaignOutcome } = proxyLocalActivities<CampaignActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

/** History events after which a run drains its calls and continues as new (10,000-call campaigns stay bounded). */
const HISTORY_LIMIT = 4_000;

export interface CampaignInput { campaignId: string; historyLimit?: number }

/**
 * A campaign (`campaign:<id>`): owns the queue and the concurrency. It starts a child
 * `campaign-call:<call id>` per queued call, at most `concurrency` at a time, when the callee's
 * calling window is open (else it sleeps on a durable timer until one opens), stops starting
 * new ones while paused, and completes when every call has ended. The queue lives in
 * PostgreSQL; this run holds only the calls it is running.
 */
export async function runCampaign(input: CampaignInput): Promise<CampaignOutcome | null> {
  const { campaignId } = input;
  let wakes = 0;
  let finished = 0;
  let canceled = false;
  setHandler(campaignWakeSignal, () => { wakes += 1; });
  setHandler(campaignCancelSignal, () => { canceled = true; wakes += 1; });
  const running = new Map<string, ChildWorkflowHandle<typeof runCampaignCall>>();
  // Started, not yet confirmed by the server: no turn of the queue waits for a confirmation, and the
  // calls starting count against the concurrency as running ones do.
  const starting = new Set<string>();
  const historyLimit = input.historyLimit ?? HISTORY_LIMIT;

  const start = async (callId: string, maxDurationSeconds: number, summary: string) => {
    starting.add(callId);
    try {
      const handle = await startChild(runCampaignCall, {
        workflowId: workflowIds.campaignCall(callId),
        args: [{ callId, maxDurationSeconds }],
        taskQueue: workflowInfo().taskQueue,
        // OrganizationId, AgentId and CampaignId, as this run carries them.
        typedSearchAttributes: workflowInfo().typedSearchAttributes,
        staticSummary: summary,
      });
      running.set(callId, handle);
      // Ended either way: one derived promise (`catch` then `finally` made four, each traced by the SDK's promise hook).
      const ended = () => { running.delete(callId); finished += 1; };
      void handle.result().then(ended, ended);
    } catch {
      // Already started (by a run that continued as new): its row tells the queue how it went.
      finished += 1;
    } finally {
      starting.delete(callId);
    }
  };
  const idle = () => running.size === 0 && starting.size === 0;

  while (!canceled) {
    const info = workflowInfo();
    if (info.historyLength > historyLimit || info.continueAsNewSuggested) {
      await condition(idle);
      if (!canceled) return continueAsNew<typeof runCampaign>(input);
      break;
    }
    // A wake (signal) or a call's end counts from before the queue is read: one that arrives while `nextCalls`
    // runs (a resume committed just after the read saw `paused`) starts another turn at once, rather than
    // leaving a paused-then-resumed campaign asleep until its next timer (days, while paused).
    const [w, f] = [wakes, finished];
    const turn = await nextCalls({ campaignId, exclude: [...running.keys(), ...starting] });
    // `draft`: the start that launched this run was rolled back; nothing to do.
    if (turn.status === 'draft' || turn.status === 'gone') return null;
    if (turn.status === 'canceled') { canceled = true; break; }
    for (const id of turn.ready) void start(id, turn.maxDurationSeconds, turn.summaries[id]!);
    if (idle() && turn.queued === 0) return await finishCampaign({ campaignId });
    await condition(() => wakes !== w || finished !== f, turn.waitSeconds !== null ? turn.waitSeconds * 1000 : undefined);
  }
  // Canceled: the calls in flight are hung up; the queued ones were ended by the cancel itself.
  await condition(() => starting.size === 0);
  await Promise.all([...running.values()].map((handle) => handle.signal(hangupSignal).catch(() => undefined)));
  await condition(idle);
  return await campaignOutcome({ campaignId });
}

/** How the API starts a campaign: one run per campaign, on the campaigns queue. */
export const runCampaignKind = workflowKind(runCampaign, { queue: 'campaigns', reuse: 'rejectDuplicate', id: workflowIds.campaign });
