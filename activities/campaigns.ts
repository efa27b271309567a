import { Context } from '@temporalio/activity';
import { heartbeating, type ActivityDeps, type ActivityRegistration } from './index.ts';
import {
  campaignOutcome, claimCall, converseSandboxCall, dialCall, endCall, evaluateCallConversation, finishCampaign, hangUpAtCarrier, markCall, nextCalls,
  openCallConversation, placeCall, playSandboxCallee, settleCall,
} from '../src/campaigns/calls.ts';
import type { EndedReason, TerminalCallStatus } from '../src/schemas/campaigns.ts';
import { createCarrier } from '../src/telephony/index.ts';
import { createToolSender } from '../src/tools/send.ts';

/**
 * The campaign and campaign call workflows' steps: each writes its status change to PostgreSQL, idempotently.
 * A call of `runCampaignCallV3` runs placeCall, settleCall (the one that ends the call evaluates its
 * conversation), hangUpAtCarrier and playSandboxCallee; evaluateCallConversation serves the runs of
 * `runCampaignCallV2`; claimCall, dialCall, markCall, converseSandboxCall, openCallConversation and
 * endCall those of `runCampaignCall` started before them.
 */
export function createCampaignActivities(deps: Pick<ActivityDeps, 'sql' | 'config' | 'temporal' | 'log' | 'runtime' | 'secrets'>) {
  const callDeps = { ...deps, carrier: createCarrier(deps.config, deps.sql) };
  // The agent's tool calls during the sandbox callee's turns are made here, in process (as a simulation's are).
  const sendTool = createToolSender(deps);
  return {
    nextCalls: (input: { campaignId: string; exclude: string[] }) => nextCalls(deps, input),
    finishCampaign: (input: { campaignId: string }) => finishCampaign(deps, input.campaignId),
    campaignOutcome: (input: { campaignId: string }) => campaignOutcome(deps, input.campaignId),
    claimCall: (input: { callId: string }) => claimCall(deps, input.callId),
    dialCall: (input: { callId: string }) => dialCall(callDeps, input.callId),
    placeCall: (input: { callId: string }) => placeCall(callDeps, input.callId),
    markCall: (input: { callId: string; status: 'ringing' | 'in_progress' }) => markCall(deps, input),
    converseSandboxCall: (input: { callId: string }) => converseSandboxCall(callDeps, input.callId),
    openCallConversation: async (input: { callId: string }) => { await openCallConversation(callDeps, input.callId); },
    playSandboxCallee: (input: { callId: string; talkSeconds: number }) => heartbeating(() => playSandboxCallee({ ...callDeps, sendTool }, input)),
    evaluateCallConversation: (input: { callId: string }) => heartbeating(() => evaluateCallConversation(callDeps, input.callId)),
    hangUpAtCarrier: (input: { callId: string }) => hangUpAtCarrier(callDeps, input.callId),
    endCall: (input: { callId: string; status: TerminalCallStatus; reason: EndedReason; ownsConversation?: boolean }) => endCall(deps, input),
    settleCall: (input: Omit<Parameters<typeof settleCall>[1], 'attempt'>) => settleCall(callDeps, { ...input, attempt: Context.current().info.attempt }),
  };
}
export type CampaignActivities = ReturnType<typeof createCampaignActivities>;

export const registration: ActivityRegistration = { queue: 'campaigns', create: createCampaignActivities };
