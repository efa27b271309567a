import { marketingConsented } from '../db/governance.ts';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Db } from '../db/index.ts';
import { agentExists } from '../db/agents.ts';
import { activeNumbersOfAgent } from '../db/phone-numbers.ts';
import {
  blockedNumbers, campaignContacts, deleteCampaign, endCallRow, findCall, findCampaign, insertCampaign, insertQueuedCalls,
  markCampaignStarted, runningCampaignsOfAgent, toCall, toCampaign, updateCampaign, cancelQueuedCalls, type CampaignFields, type CampaignRecord, type NewCall,
} from '../db/campaigns.ts';
import { windowError, zoneOfNumber } from '../domain/calling-window.ts';
import { isTimeZone } from '../domain/report-periods.ts';
import { AppError, fieldError, notFound, validationError } from '../errors.ts';
import { emitEvent } from '../events/emit.ts';
import { newId } from '../ids.ts';
import type { Campaign, CampaignCall, CampaignCreate, CampaignPatch } from '../schemas/campaigns.ts';
import { workflowIds } from '../temporal/ids.ts';
import { startWorkflow, workflowServiceUnavailable } from '../temporal/start.ts';
import { campaignCancelSignal, campaignWakeSignal, runCampaignKind } from '../../workflows/campaign.ts';
import { carrierStatusSignal, hangupUpdate } from '../../workflows/campaign-call.ts';
import { emitCallEnded } from './calls.ts';
import type { FamilyDeps } from '../deps.ts';

/**
 * The campaigns family's use cases: a campaign is made and edited in `draft`, then started (its
 * calls queued, `campaign:<id>` started, in one transaction), paused, resumed and canceled. Each
 * change signals the campaign workflow, which also reads the status back from the database on
 * every turn of its queue, so a lost signal only delays it.
 */

export type CampaignDeps = FamilyDeps;

const DEFAULT_TIMEZONE = 'UTC';

const dedupe = <T>(values: T[]) => [...new Set(values)];

/** Checks a create or PATCH body beyond its schema; the stored columns. */
async function campaignFields(db: Db, orgId: string, body: CampaignPatch, opts: { create: boolean }): Promise<CampaignFields> {
  if (body.to_numbers && body.contact_ids) {
    throw fieldError('contact_ids', 'exclusive', 'give to_numbers or contact_ids, not both');
  }
  if (opts.create && !body.to_numbers && !body.contact_ids) {
    throw fieldError('to_numbers', 'required', 'a campaign needs to_numbers or contact_ids');
  }
  if (body.calling_window) {
    const error = windowError(body.calling_window);
    if (error) throw fieldError('calling_window.end', 'invalid_window', error);
  }
  if (body.timezone && !isTimeZone(body.timezone)) throw fieldError('timezone', 'invalid_timezone', 'timezone must be an IANA zone such as Europe/Paris');
  if (body.widget_id !== undefined && !(await agentExists(db, orgId, body.widget_id))) {
    throw fieldError('widget_id', 'unknown_agent', 'widget_id names no agent of this organization');
  }
  const fields: CampaignFields = {};
  if (body.name !== undefined) fields.name = body.name;
  if (body.widget_id !== undefined) fields.agent_id = body.widget_id;
  if (body.max_duration_seconds !== undefined) fields.max_duration_seconds = body.max_duration_seconds;
  if (body.concurrency !== undefined) fields.concurrency = body.concurrency;
  if (body.calling_window !== undefined) fields.calling_window = body.calling_window;
  if (body.retry !== undefined) fields.retry = body.retry;
  if (body.timezone !== undefined) fields.timezone = body.timezone;
  if (body.requires_consent !== undefined) fields.requires_consent = body.requires_consent;
  for (const key of ['objective', 'opening_line', 'voicemail_behavior', 'voicemail_message'] as const) {
    if (body[key] !== undefined) (fields as Record<string, unknown>)[key] = body[key];
  }
  if (body.to_numbers) Object.assign(fields, { to_numbers: dedupe(body.to_numbers), contact_ids: [] });
  if (body.contact_ids) {
    const ids = dedupe(body.contact_ids);
    const found = new Map((await campaignContacts(db, orgId, ids)).map((c) => [c.id, c]));
    const errors = body.contact_ids.flatMap((id, i) => {
      const contact = found.get(id);
      if (!contact) return [{ field: `contact_ids[${i}]`, code: 'unknown_contact', message: 'names no contact of this organization' }];
      if (!contact.phone_e164) return [{ field: `contact_ids[${i}]`, code: 'contact_without_phone', message: 'this contact has no phone_e164 to call' }];
      return [];
    });
    if (errors.length) throw validationError(errors.slice(0, 50));
    Object.assign(fields, { contact_ids: ids, to_numbers: [] });
  }
  return fields;
}

export async function createCampaign(deps: CampaignDeps, orgId: string, body: CampaignCreate): Promise<Campaign> {
  return deps.sql.begin(async (tx) => {
    const fields = await campaignFields(tx, orgId, body, { create: true });
    const campaign = await insertCampaign(tx, orgId, { ...fields, agent_id: body.widget_id, name: body.name, max_duration_seconds: body.max_duration_seconds });
    return toCampaign(campaign);
  });
}

async function requireCampaign(db: Db, orgId: string, id: string): Promise<CampaignRecord> {
  const campaign = await findCampaign(db, orgId, id, { forUpdate: true });
  if (!campaign) throw notFound('campaign');
  return campaign;
}

const invalidState = (detail: string) => new AppError(409, 'invalid_state', detail);

export async function patchCampaign(deps: CampaignDeps, orgId: string, id: string, body: CampaignPatch): Promise<Campaign> {
  return deps.sql.begin(async (tx) => {
    // The body's own checks first (400 before 404).
    const fields = await campaignFields(tx, orgId, body, { create: false });
    const campaign = await requireCampaign(tx, orgId, id);
    if (campaign.status !== 'draft') throw invalidState(`a ${campaign.status} campaign cannot be changed; only a draft can`);
    return toCampaign(await updateCampaign(tx, id, fields));
  });
}

/** Deletes a campaign that is not active (its calls go with it; their conversations stay). */
export async function removeCampaign(deps: CampaignDeps, orgId: string, id: string): Promise<void> {
  await deps.sql.begin(async (tx) => {
    const campaign = await requireCampaign(tx, orgId, id);
    if (campaign.status === 'running' || campaign.status === 'paused') throw invalidState('this campaign is active: cancel it before deleting it');
    await deleteCampaign(tx, id);
  });
}

/** The number calls are placed from: the agent's newest active number taking calls. */
async function dialingNumber(db: Db, agentId: string): Promise<string | null> {
  const numbers = (await activeNumbersOfAgent(db, agentId)).filter((n) => n.enabled && n.voice_enabled);
  return numbers.at(-1)?.phone_number ?? null;
}

/** The calls a starting campaign queues, in order; do-not-call numbers are ended `canceled`/`blocked` at once. */
async function queueCalls(tx: Db, campaign: CampaignRecord): Promise<{ calls: NewCall[]; blocked: string[] }> {
  const fallback = campaign.timezone ?? DEFAULT_TIMEZONE;
  let targets: { to_number: string; contact_id: string | null; dnc: boolean }[];
  if (campaign.contact_ids.length) {
    const contacts = new Map((await campaignContacts(tx, campaign.orgId, campaign.contact_ids)).map((c) => [c.id, c]));
    targets = campaign.contact_ids.flatMap((id) => {
      const c = contacts.get(id);
      return c?.phone_e164 ? [{ to_number: c.phone_e164, contact_id: id, dnc: c.do_not_call }] : [];
    });
  } else {
    targets = campaign.to_numbers.map((n) => ({ to_number: n, contact_id: null, dnc: false }));
  }
  const blockedByNumber = await blockedNumbers(tx, campaign.orgId, targets.map((t) => t.to_number));
  const calls = targets.map((t, i) => ({ id: newId(), position: i + 1, to_number: t.to_number, contact_id: t.contact_id, timezone: zoneOfNumber(t.to_number, fallback) }));
  // Issue 47: a campaign that requires consent skips whoever has no marketing consent on record.
  const consented = campaign.requires_consent
    ? await marketingConsented(tx, campaign.orgId, targets.flatMap((t) => (t.contact_id ? [t.contact_id] : [])), targets.map((t) => t.to_number))
    : null;
  const withoutConsent = (t: typeof targets[number]) => consented !== null && !(t.contact_id ? consented.contactIds.has(t.contact_id) : consented.numbers.has(t.to_number));
  const blocked = calls.filter((c, i) => targets[i]!.dnc || blockedByNumber.has(c.to_number) || withoutConsent(targets[i]!)).map((c) => c.id);
  return { calls, blocked };
}

/** Starts a draft campaign (calls queued, `campaign.started`, its workflow), or resumes a paused one. */
export async function startCampaign(deps: CampaignDeps, orgId: string, id: string): Promise<Campaign> {
  const { campaign, resumed } = await deps.sql.begin(async (tx) => {
    const current = await requireCampaign(tx, orgId, id);
    if (current.status === 'paused') return { campaign: await updateCampaign(tx, id, { status: 'running' }), resumed: true };
    if (current.status !== 'draft') throw invalidState(`a ${current.status} campaign cannot be started`);
    // Held against the agent's delete (which refuses while a campaign is active): one of the two waits for the other.
    if (!(await agentExists(tx, orgId, current.widget_id, { share: true }))) throw invalidState('the campaign\'s agent was deleted');
    const from = await dialingNumber(tx, current.widget_id);
    if (!from) throw new AppError(409, 'no_active_number', 'the campaign\'s agent has no active number to call from: buy or assign one first');
    const { calls, blocked } = await queueCalls(tx, current);
    await insertQueuedCalls(tx, orgId, id, calls);
    // Checked when queued: a do-not-call number never reaches the carrier.
    for (const callId of blocked) {
      const ended = await endCallRow(tx, callId, 'canceled', 'blocked');
      if (ended) await emitCallEnded(tx, current.widget_id, ended);
    }
    const started = await markCampaignStarted(tx, id, from);
    await emitEvent(tx, { orgId, agentId: started.widget_id, type: 'campaign.started', data: { campaign: toCampaign(started) } });
    await startWorkflow(deps, runCampaignKind, runCampaignKind.id(id), [{ campaignId: id }],
      { orgId, agentId: started.widget_id, campaignId: id, summary: `Campaign ${started.name} (${calls.length} calls, concurrency ${started.concurrency})` },
      { transaction: tx });
    return { campaign: started, resumed: false };
  });
  if (resumed) await signalCampaign(deps, id, 'wake');
  return toCampaign(campaign);
}

export async function pauseCampaign(deps: CampaignDeps, orgId: string, id: string): Promise<Campaign> {
  const campaign = await deps.sql.begin(async (tx) => {
    const current = await requireCampaign(tx, orgId, id);
    if (current.status === 'paused') return current;
    if (current.status !== 'running') throw invalidState(`a ${current.status} campaign cannot be paused`);
    return updateCampaign(tx, id, { status: 'paused' });
  });
  await signalCampaign(deps, id, 'wake');
  return toCampaign(campaign);
}

/** Cancels a campaign: queued calls end `canceled`/`canceled` here; its workflow hangs up those in flight. */
export async function cancelCampaign(deps: CampaignDeps, orgId: string, id: string): Promise<Campaign> {
  const { campaign, wasActive } = await deps.sql.begin(async (tx) => {
    const current = await requireCampaign(tx, orgId, id);
    if (current.status === 'canceled') return { campaign: current, wasActive: false };
    if (current.status === 'completed') throw invalidState('this campaign has completed');
    const canceled = await updateCampaign(tx, id, { status: 'canceled' });
    for (const call of await cancelQueuedCalls(tx, id)) await emitCallEnded(tx, current.widget_id, call);
    return { campaign: canceled, wasActive: current.status !== 'draft' };
  });
  if (wasActive) await signalCampaign(deps, id, 'cancel');
  return toCampaign(campaign);
}

/**
 * An agent was resumed (paused → active or draft): its running campaigns, which held their calls while it was
 * paused, are woken to dial again (a lost signal only delays them until their next timer).
 */
export async function wakeCampaignsOfAgent(deps: Pick<CampaignDeps, 'sql' | 'temporal' | 'log'>, agentId: string): Promise<void> {
  for (const id of await runningCampaignsOfAgent(deps.sql, agentId)) await signalCampaign(deps, id, 'wake');
}

/** Wakes the campaign workflow (it reads the new status back) or tells it to cancel; a lost signal only delays it. */
async function signalCampaign(deps: Pick<CampaignDeps, 'temporal' | 'log'>, id: string, what: 'wake' | 'cancel'): Promise<void> {
  try {
    await deps.temporal.workflow.getHandle(workflowIds.campaign(id)).signal(what === 'wake' ? campaignWakeSignal : campaignCancelSignal);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return;
    deps.log.warn({ err, campaign_id: id, signal: what }, 'could not signal the campaign workflow');
  }
}

/** A carrier status callback of a campaign call (its `statusUrl` names the call), relayed to the call's workflow. */
export async function relayCarrierStatus(deps: Pick<CampaignDeps, 'temporal' | 'log'>, callId: string, status: string): Promise<void> {
  try {
    await deps.temporal.workflow.getHandle(workflowIds.campaignCall(callId)).signal(carrierStatusSignal, status);
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) deps.log.warn({ err, call_id: callId }, 'could not relay a carrier status to the campaign call');
  }
}

export async function getCall(deps: Pick<CampaignDeps, 'sql'>, orgId: string, campaignId: string, callId: string): Promise<CampaignCall> {
  const call = await findCall(deps.sql, orgId, campaignId, callId);
  if (!call) throw notFound('campaign call');
  return toCall(call);
}

/**
 * Stops a call: one still queued is canceled here (no workflow holds it yet); one its workflow
 * holds is stopped by the workflow, through an update that answers once it has acted. 409 on an
 * ended call.
 */
export async function hangupCall(deps: CampaignDeps, orgId: string, campaignId: string, callId: string): Promise<{ call: CampaignCall; action: 'canceled' | 'hung_up' }> {
  const campaign = await findCampaign(deps.sql, orgId, campaignId);
  const call = campaign ? await findCall(deps.sql, orgId, campaignId, callId) : null;
  if (!campaign || !call) throw notFound('campaign call');
  if (call.ended_at) throw invalidState(`this call has ended (${call.status})`);
  if (call.status === 'queued') {
    const canceled = await deps.sql.begin(async (tx) => {
      const ended = await endCallRow(tx, callId, 'canceled', 'canceled', { onlyFrom: ['queued'] });
      if (ended) await emitCallEnded(tx, campaign.widget_id, ended);
      return ended;
    });
    if (canceled) return { call: toCall(canceled), action: 'canceled' };
  }
  let action: 'canceled' | 'hung_up';
  try {
    ({ action } = await deps.temporal.workflow.getHandle(workflowIds.campaignCall(callId)).executeUpdate(hangupUpdate));
  } catch (err) {
    // The workflow finished meanwhile (the call ended by itself): the call's row says how.
    const now = await findCall(deps.sql, orgId, campaignId, callId);
    if (now?.ended_at || !now) throw invalidState(`this call has ended (${now?.status ?? 'gone'})`);
    deps.log.error({ err, call_id: callId }, 'could not hang up the campaign call');
    throw workflowServiceUnavailable();
  }
  const after = await findCall(deps.sql, orgId, campaignId, callId);
  if (!after) throw notFound('campaign call');
  return { call: toCall(after), action };
}
