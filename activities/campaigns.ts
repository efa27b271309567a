import { Context } from '@temporalio/activity';
import { heartbeating, type ActivityDeps, type ActivityRegistration } from './index.ts';
import {
  campaignOutcome, finishCampaign, hangUpAtCarrier, nextCalls, placeCall, playSandboxCallee, settleCall,
} from '../src/campaigns/calls.ts';
import { createCarrier } from '../src/telephony/index.ts';
import { createToolSender } from '../src/tools/send.ts';

/**
 * The campaign and campaign call workflows' steps: each writes its status change to PostgreSQL, idempotently.
 * A call (`runCampaignCall`) runs placeCall, settleCall (the one that ends the call evaluates its
 * conversation), hangUpAtCarrier and playSandboxCallee.
 */
export function createCampaignActivities(deps: Pick<ActivityDeps, 'sql' | 'config' | 'temporal' | 'log' | 'runtime' | 'secrets'>) {
  const callDeps = { ...deps, carrier: createCarrier(deps.config, deps.sql) };
  // The agent's tool calls during the sandbox callee's turns are made here, in process (as a simulation's are).
  const sendTool = createToolSender(deps);
  return {
    nextCalls: (input: { campaignId: string; exclude: string[] }) => nextCalls(deps, input),
    finishCampaign: (input: { campaignId: string }) => finishCampaign(deps, input.campaignId),
    campaignOutcome: (input: { campaignId: string }) => campaignOutcome(deps, input.campaignId),
    placeCall: (input: { callId: string }) => placeCall(callDeps, input.callId),
    playSandboxCallee: (input: { callId: string; talkSeconds: number }) => heartbeating(() => playSandboxCallee({ ...callDeps, sendTool }, input)),
    hangUpAtCarrier: (input: { callId: string }) => hangUpAtCarrier(callDeps, input.callId),
    settleCall: (input: Omit<Parameters<typeof settleCall>[1], 'attempt'>) => settleCall(callDeps, { ...input, attempt: Context.current().info.attempt }),
  };
}
export type CampaignActivities = ReturnType<typeof createCampaignActivities>;

export const registration: ActivityRegistration = { queue: 'campaigns', create: createCampaignActivities };
