import {
  condition, continueAsNew, defineSignal, patched, proxyLocalActivities, setHandler, startChild, workflowInfo, type ChildWorkflowHandle,
} from '@temporalio/workflow';
import type { CampaignActivities } from '../activities/campaigns.ts';
import type { CampaignOutcome } from '../src/campaigns/calls.ts';
import { workflowIds, workflowKind } from '../src/temporal/ids.ts';
import { hangupSignal, runCampaignCallV2, runCampaignCallV3 } from './campaign-call.ts';
import { runCampaignCall } from './campaign-call-v1.ts';

/** The campaign's status changed (paused, resumed): read it back. */
export const campaignWakeSignal = defineSignal('wake');
/** The campaign was canceled (its queued calls already ended): hang up the calls in flight. */
export const campaignCancelSignal = defineSignal('cancel');

// Short reads of the queue: local activities, so a turn of the queue costs no task round trip.
const { nextCalls, finishCampaign, campaignOutcome } = proxyLocalActivities<CampaignActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

/**
 * Runs with this marker start their calls as `runCampaignCallV2` and do not wait for a start to be
 * confirmed before the next turn of the queue (no turn per confirmation: the calls starting count
 * against the concurrency as running ones do). Runs before it replay the earlier steps up to where
 * their history ends, then take this path too.
 */
const CALL_V2 = 'campaign-call-v2';
/** Runs with this marker start their calls as `runCampaignCallV3` (the step that ends a call evaluates its conversation). */
const CALL_V3 = 'campaign-call-v3';

/**
 * Runs with this marker count a wake (signal) or a call's end from before they read the queue, not after: one
 * that arrived while `nextCalls` ran (a resume committed just after the read saw `paused`) starts another turn
 * at once. Before it, such a wake was taken as already seen, and a paused-then-resumed campaign could sleep
 * until its next timer (days, while paused).
 */
const WAKE_BEFORE_READ = 'campaign-wake-before-read';

/** Runs with this marker read their calls' outcome counts when canceled, and return them (a completed run returns them from `finishCampaign`). */
const OUTCOME = 'campaign-outcome';

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
  const running = new Map<string, ChildWorkflowHandle<typeof runCampaignCall | typeof runCampaignCallV2 | typeof runCampaignCallV3>>();
  // Started, not yet confirmed by the server (runs with CALL_V2 only).
  const starting = new Set<string>();
  const historyLimit = input.historyLimit ?? HISTORY_LIMIT;

  const start = async (callId: string, maxDurationSeconds: number, v2: boolean, v3: boolean, summary?: string) => {
    if (v2) starting.add(callId);
    try {
      const handle = await startChild(v3 ? runCampaignCallV3 : v2 ? runCampaignCallV2 : runCampaignCall, {
        workflowId: workflowIds.campaignCall(callId),
        args: [{ callId, maxDurationSeconds }],
        taskQueue: workflowInfo().taskQueue,
        // OrganizationId, AgentId and CampaignId, as this run carries them.
        typedSearchAttributes: workflowInfo().typedSearchAttributes,
        staticSummary: summary ?? `Call ${callId} of campaign ${campaignId}`,
      });
      running.set(callId, handle);
      void handle.result().catch(() => undefined).finally(() => { running.delete(callId); finished += 1; });
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
    const v2 = patched(CALL_V2);
    const v3 = v2 && patched(CALL_V3);
    const seen = [wakes, finished] as const;
    const turn = await nextCalls({ campaignId, exclude: [...running.keys(), ...starting] });
    // `draft`: the start that launched this run was rolled back; nothing to do.
    if (turn.status === 'draft' || turn.status === 'gone') return null;
    if (turn.status === 'canceled') { canceled = true; break; }
    const starts = turn.ready.map((id) => start(id, turn.maxDurationSeconds, v2, v3, turn.summaries?.[id]));
    if (!v2) await Promise.all(starts);
    if (idle() && turn.queued === 0) return (await finishCampaign({ campaignId })) ?? null;
    const [w, f] = patched(WAKE_BEFORE_READ) ? seen : [wakes, finished];
    await condition(() => wakes !== w || finished !== f, turn.waitSeconds !== null ? turn.waitSeconds * 1000 : undefined);
  }
  // Canceled: the calls in flight are hung up; the queued ones were ended by the cancel itself.
  await condition(() => starting.size === 0);
  await Promise.all([...running.values()].map((handle) => handle.signal(hangupSignal).catch(() => undefined)));
  await condition(idle);
  return patched(OUTCOME) ? await campaignOutcome({ campaignId }) : null;
}

/** How the API starts a campaign: one run per campaign, on the campaigns queue. */
export const runCampaignKind = workflowKind(runCampaign, { queue: 'campaigns', reuse: 'rejectDuplicate', id: workflowIds.campaign });
