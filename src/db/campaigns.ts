import { listPage, type Db, type Fragment } from './index.ts';
import { newId } from '../ids.ts';
import { dispatchedUnlessReceived, isoTime, redactionStillAt } from './events.ts';
import { rememberAgentOfCall } from './redaction-cache.ts';
import { endConversationCtes, endedConversationListed } from './conversations.ts';
import type { Conversation } from '../schemas/conversations.ts';
import {
  IN_FLIGHT_STATUSES, type Campaign, type CampaignCall, type CampaignStatus, type CallStatus, type CallingWindow, type EndedReason, type Retry,
  type CallOutcome, type TerminalCallStatus,
} from '../schemas/campaigns.ts';

/**
 * Campaigns and their calls: the only SQL of the family. A call row changes status only forward
 * (each update names the statuses it may leave), so a retried activity writes each change once.
 */

interface CampaignRow {
  id: string; org_id: string; agent_id: string; name: string; status: CampaignStatus; to_numbers: string[]; contact_ids: string[];
  max_duration_seconds: number; concurrency: number; calling_window: CallingWindow | null; retry: Retry | null; timezone: string | null;
  from_number: string | null; created_at: Date; updated_at: Date; started_at: Date | null; completed_at: Date | null;
  objective: string | null; opening_line: string | null; voicemail_behavior: 'leave_message' | 'hang_up' | null; voicemail_message: string | null;
  requires_consent: boolean;
}
const COLUMNS = ['id', 'org_id', 'agent_id', 'name', 'status', 'to_numbers', 'contact_ids', 'max_duration_seconds', 'concurrency',
  'calling_window', 'retry', 'timezone', 'from_number', 'created_at', 'updated_at', 'started_at', 'completed_at',
  'objective', 'opening_line', 'voicemail_behavior', 'voicemail_message', 'requires_consent'];

/** A campaign as stored: its API shape and its organization. */
export interface CampaignRecord extends Campaign { orgId: string }

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/**
 * A campaign as its workflows read it: without its lists of numbers and contacts, which no call
 * needs (a campaign of 1,000 calls carries 1,000 numbers, parsed on every read).
 */
export type CampaignState = Omit<CampaignRecord, 'to_numbers' | 'contact_ids'>;
type StateRow = Omit<CampaignRow, 'to_numbers' | 'contact_ids'>;
const STATE_COLUMNS = COLUMNS.filter((c) => c !== 'to_numbers' && c !== 'contact_ids');

function toState(r: StateRow): CampaignState {
  return {
    id: r.id, name: r.name, widget_id: r.agent_id, status: r.status,
    max_duration_seconds: r.max_duration_seconds, concurrency: r.concurrency, calling_window: r.calling_window, retry: r.retry,
    timezone: r.timezone, from_number: r.from_number, created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString(),
    started_at: iso(r.started_at), completed_at: iso(r.completed_at),
    objective: r.objective, opening_line: r.opening_line, voicemail_behavior: r.voicemail_behavior, voicemail_message: r.voicemail_message,
    requires_consent: r.requires_consent, orgId: r.org_id,
  };
}

function toRecord(r: CampaignRow): CampaignRecord {
  // The lists keep their place after `status`, as the API and the events have always shown them.
  const { id, name, widget_id, status, ...rest } = toState(r);
  return { id, name, widget_id, status, to_numbers: r.to_numbers, contact_ids: r.contact_ids, ...rest };
}

export function toCampaign(r: CampaignRecord): Campaign {
  const { orgId: _o, ...campaign } = r;
  return campaign;
}

/** The columns a create or PATCH may set, as stored. */
export interface CampaignFields {
  agent_id?: string; name?: string; to_numbers?: string[]; contact_ids?: string[]; max_duration_seconds?: number; concurrency?: number;
  calling_window?: CallingWindow | null; retry?: Retry | null; timezone?: string | null;
  objective?: string | null; opening_line?: string | null; voicemail_behavior?: 'leave_message' | 'hang_up' | null; voicemail_message?: string | null;
  requires_consent?: boolean;
}

function stored(db: Db, fields: CampaignFields): Record<string, unknown> {
  const out: Record<string, unknown> = { ...fields };
  for (const key of ['calling_window', 'retry'] as const) {
    if (key in fields) out[key] = fields[key] === null ? null : db.json(fields[key] as never);
  }
  return out;
}

export async function insertCampaign(db: Db, orgId: string, fields: CampaignFields & { agent_id: string; name: string; max_duration_seconds: number }): Promise<CampaignRecord> {
  const row = { id: newId(), org_id: orgId, ...stored(db, fields) };
  const [r] = await db<CampaignRow[]>`insert into campaigns ${db(row)} returning ${db(COLUMNS)}`;
  return toRecord(r!);
}

export async function findCampaign(db: Db, orgId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<CampaignRecord | null> {
  const lock = opts.forUpdate ? db`for update` : db``;
  const [r] = await db<CampaignRow[]>`select ${db(COLUMNS)} from campaigns where id = ${id} and org_id = ${orgId} ${lock}`;
  return r ? toRecord(r) : null;
}

/** A campaign by id alone (the workflows). */
export async function findCampaignById(db: Db, id: string): Promise<CampaignState | null> {
  const [r] = await db<StateRow[]>`select ${db(STATE_COLUMNS)} from campaigns where id = ${id}`;
  return r ? toState(r) : null;
}

/**
 * findCampaignById, and in the same statement whether its agent is paused (campaignAgentPaused) and its queue by zone
 * (queuedByZone): what a turn of its queue reads.
 */
export async function findCampaignForTurn(db: Db, id: string): Promise<{ campaign: CampaignState; agentPaused: boolean; zones: QueuedZone[] } | null> {
  const [r] = await db<(StateRow & { agent_paused: boolean; zones: QueuedZone[] })[]>`select ${db(STATE_COLUMNS)},
      exists (select 1 from agents a where a.id = campaigns.agent_id and a.status = 'paused') as agent_paused,
      (select coalesce(json_agg(z), '[]'::json) from (${queuedByZoneQuery(db, id)}) z) as zones
    from campaigns where id = ${id}`;
  return r ? { campaign: toState(r), agentPaused: r.agent_paused, zones: r.zones } : null;
}

export async function listCampaigns(db: Db, orgId: string, q: { widget_id?: string | undefined; status?: CampaignStatus | undefined; limit: number; offset: number }):
  Promise<{ data: Campaign[]; total: number }> {
  const agent = q.widget_id ? db`and agent_id = ${q.widget_id}` : db``;
  const status = q.status ? db`and status = ${q.status}` : db``;
  return listPage(db, {
    ...q, columns: db(COLUMNS), from: db`from campaigns where org_id = ${orgId} ${agent} ${status}`, order: db`created_at desc, id desc`,
  }, (r: CampaignRow) => toCampaign(toRecord(r)));
}

export async function updateCampaign(db: Db, id: string, fields: CampaignFields & { status?: CampaignStatus; from_number?: string | null }): Promise<CampaignRecord> {
  const set = stored(db, fields);
  const [r] = Object.keys(set).length
    ? await db<CampaignRow[]>`update campaigns set ${db(set)}, updated_at = now() where id = ${id} returning ${db(COLUMNS)}`
    : await db<CampaignRow[]>`select ${db(COLUMNS)} from campaigns where id = ${id}`;
  return toRecord(r!);
}

/** Marks a started campaign: `running`, its number and start time. */
export async function markCampaignStarted(db: Db, id: string, fromNumber: string): Promise<CampaignRecord> {
  const [r] = await db<CampaignRow[]>`update campaigns set status = 'running', from_number = ${fromNumber}, started_at = now(), updated_at = now()
    where id = ${id} returning ${db(COLUMNS)}`;
  return toRecord(r!);
}

/** A running or paused campaign whose calls have all ended becomes `completed`; null when it was not (canceled, or done already). */
export async function markCampaignCompleted(db: Db, id: string): Promise<CampaignRecord | null> {
  const [r] = await db<CampaignRow[]>`update campaigns set status = 'completed', completed_at = now(), updated_at = now()
    where id = ${id} and status in ('running', 'paused') returning ${db(COLUMNS)}`;
  return r ? toRecord(r) : null;
}

export async function deleteCampaign(db: Db, id: string): Promise<void> {
  await db`delete from campaigns where id = ${id}`;
}

/**
 * True when the campaign's agent is paused: a running campaign then holds its calls (none is dialed) until the
 * agent is active again (a paused agent answers nothing, issue 43).
 */
export async function campaignAgentPaused(db: Db, campaignId: string): Promise<boolean> {
  const [r] = await db`select 1 from campaigns c join agents a on a.id = c.agent_id where c.id = ${campaignId} and a.status = 'paused'`;
  return r !== undefined;
}

/** The agent's `running` campaigns (woken when the agent is resumed). */
export async function runningCampaignsOfAgent(db: Db, agentId: string): Promise<string[]> {
  return (await db<{ id: string }[]>`select id from campaigns where agent_id = ${agentId} and status = 'running' order by id`).map((r) => r.id);
}

/** True when the agent has a `running` or `paused` campaign (the active_campaign guard of its numbers). */
export async function agentHasActiveCampaign(db: Db, agentId: string): Promise<boolean> {
  const [r] = await db`select 1 from campaigns where agent_id = ${agentId} and status in ('running', 'paused') limit 1`;
  return r !== undefined;
}

/** The contacts named, in the organization: their phone and do-not-call flag. */
export async function campaignContacts(db: Db, orgId: string, ids: string[]): Promise<{ id: string; phone_e164: string | null; do_not_call: boolean }[]> {
  if (ids.length === 0) return [];
  return db<{ id: string; phone_e164: string | null; do_not_call: boolean }[]>`
    select id, phone_e164, do_not_call from contacts where org_id = ${orgId} and id = any(${ids}::uuid[])`;
}

/**
 * A contact's delete: it leaves the enrolments of draft campaigns, and its calls that are still
 * queued (not dialed) go. Dialed calls stay, no longer linked to it.
 */
export async function removeContactEnrolments(db: Db, orgId: string, contactId: string): Promise<void> {
  await db`update campaigns set contact_ids = array_remove(contact_ids, ${contactId}::uuid), updated_at = now()
    where org_id = ${orgId} and status = 'draft' and contact_ids @> array[${contactId}]::uuid[]`;
  await db`delete from campaign_calls where org_id = ${orgId} and contact_id = ${contactId} and status = 'queued'`;
}

// ---- calls

interface CallRow {
  id: string; org_id: string; campaign_id: string; position: number; attempt: number; previous_call_id: string | null; contact_id: string | null;
  to_number: string; timezone: string; status: CallStatus; ended_reason: EndedReason | null; call_sid: string | null; conversation_id: string | null;
  created_at: Date; started_at: Date | null; answered_at: Date | null; ended_at: Date | null; duration_seconds: number | null;
  outcome: CallOutcome | null; callback_at: Date | null;
}
const CALL_COLUMNS = ['id', 'org_id', 'campaign_id', 'position', 'attempt', 'previous_call_id', 'contact_id', 'to_number', 'timezone', 'status',
  'ended_reason', 'call_sid', 'conversation_id', 'created_at', 'started_at', 'answered_at', 'ended_at', 'duration_seconds', 'outcome', 'callback_at'];

/** A call as stored: its API shape and what the workflows need. */
export interface CallRecord extends CampaignCall { orgId: string; position: number; timezone: string }

function toCallRecord(r: CallRow): CallRecord {
  return {
    id: r.id, campaign_id: r.campaign_id, call_sid: r.call_sid, to_number: r.to_number, contact_id: r.contact_id, status: r.status,
    ended_reason: r.ended_reason, conversation_id: r.conversation_id, attempt: r.attempt, previous_call_id: r.previous_call_id,
    created_at: r.created_at.toISOString(), started_at: iso(r.started_at), answered_at: iso(r.answered_at), ended_at: iso(r.ended_at),
    duration_seconds: r.duration_seconds, outcome: r.outcome, callback_at: iso(r.callback_at), orgId: r.org_id, position: r.position, timezone: r.timezone,
  };
}

export function toCall(r: CallRecord): CampaignCall {
  const { orgId: _o, position: _p, timezone: _t, ...call } = r;
  return call;
}

export interface NewCall { id: string; position: number; to_number: string; contact_id: string | null; timezone: string }

/** Queues the calls of a starting campaign, in one statement. */
export async function insertQueuedCalls(db: Db, orgId: string, campaignId: string, calls: NewCall[]): Promise<void> {
  if (calls.length === 0) return;
  await db`insert into campaign_calls (id, org_id, campaign_id, position, to_number, contact_id, timezone)
    select id, ${orgId}::uuid, ${campaignId}::uuid, position, to_number, contact_id, timezone
    from unnest(${calls.map((c) => c.id)}::uuid[], ${calls.map((c) => c.position)}::int[], ${calls.map((c) => c.to_number)}::text[],
      ${calls.map((c) => c.contact_id)}::uuid[], ${calls.map((c) => c.timezone)}::text[]) as t(id, position, to_number, contact_id, timezone)`;
}

/** A retry of `previous`: a new queued row, the next attempt, waiting `backoffSeconds`. */
export async function insertRetryCall(db: Db, previous: CallRecord, backoffSeconds: number): Promise<string> {
  const id = newId();
  await db`insert into campaign_calls (id, org_id, campaign_id, position, attempt, previous_call_id, contact_id, to_number, timezone, not_before)
    values (${id}, ${previous.orgId}, ${previous.campaign_id}, ${previous.position}, ${previous.attempt + 1}, ${previous.id}, ${previous.contact_id},
      ${previous.to_number}, ${previous.timezone}, now() + make_interval(secs => ${backoffSeconds}))`;
  return id;
}

export async function findCall(db: Db, orgId: string, campaignId: string, callId: string): Promise<CallRecord | null> {
  const [r] = await db<CallRow[]>`select ${db(CALL_COLUMNS)} from campaign_calls where id = ${callId} and campaign_id = ${campaignId} and org_id = ${orgId}`;
  return r ? toCallRecord(r) : null;
}

export async function findCallById(db: Db, id: string): Promise<CallRecord | null> {
  const [r] = await db<CallRow[]>`select ${db(CALL_COLUMNS)} from campaign_calls where id = ${id}`;
  return r ? toCallRecord(r) : null;
}

/** A campaign's calls in queue order (position, then attempt); `active` keeps those in flight. */
export async function listCalls(db: Db, campaignId: string, q: { active?: boolean; status?: CallStatus | undefined; limit: number; offset: number }):
  Promise<{ data: CampaignCall[]; total: number }> {
  const active = q.active ? db`and status = any(${[...IN_FLIGHT_STATUSES]}::text[])` : db``;
  const status = q.status ? db`and status = ${q.status}` : db``;
  return listPage(db, {
    ...q, columns: db(CALL_COLUMNS), from: db`from campaign_calls where campaign_id = ${campaignId} ${active} ${status}`,
    order: db`position, attempt, id`,
  }, (r: CallRow) => toCall(toCallRecord(r)));
}

/**
 * Moves a call forward: from one of `from` to `to`, with the given fields. Null when the call is
 * not in one of `from` (it moved on, ended, or is gone).
 */
export async function advanceCall(db: Db, id: string, from: readonly CallStatus[], to: CallStatus,
  fields: AdvanceFields = {}): Promise<CallRecord | null> {
  return (await advanceCallReading(db, id, from, to, fields, {}))?.call ?? null;
}

interface AdvanceFields {
  call_sid?: string; conversation_id?: string; started?: boolean;
  /** Sets `answered_at` (once): now, or the given instant (the workflow's, when it heard the answer). */
  answered?: boolean | Date;
  /**
   * Only while its campaign is `running` and its agent is not paused (a pause or cancel committing meanwhile is
   * waited for, and wins).
   */
  whileRunning?: boolean;
}

/** What a call's steps need of its campaign: the agent that talks and the number it dials from. */
export interface CallCampaign {
  widget_id: string; from_number: string | null;
  /** Why it calls and what it says to a machine (issue 43). */
  objective: string | null; opening_line: string | null; voicemail_behavior: 'leave_message' | 'hang_up' | null; voicemail_message: string | null;
}

/**
 * advanceCall, reading in the same statement what the step needs next: its campaign's agent and
 * number (`campaign`: null when the campaign is gone), and whether the callee is on the do-not-call
 * list now (`blocked`: the organization's contact by id, or by number).
 */
export async function advanceCallReading(db: Db, id: string, from: readonly CallStatus[], to: CallStatus,
  fields: AdvanceFields, read: { campaign?: boolean; blocked?: boolean }):
  Promise<{ call: CallRecord; campaign: CallCampaign | null; blocked: boolean } | null> {
  const set: Record<string, unknown> = { status: to };
  if (fields.call_sid !== undefined) set.call_sid = fields.call_sid;
  if (fields.conversation_id !== undefined) set.conversation_id = fields.conversation_id;
  const started = fields.started ? db`, started_at = coalesce(started_at, now())` : db``;
  // Answered at the instant its workflow heard it when given (the cap's timer runs from that instant), never later than now.
  const answered = fields.answered instanceof Date ? db`, answered_at = coalesce(answered_at, least(now(), ${fields.answered}))`
    : fields.answered ? db`, answered_at = coalesce(answered_at, now())` : db``;
  const running = fields.whileRunning
    ? db`and exists (select 1 from campaigns join agents on agents.id = campaigns.agent_id
        where campaigns.id = campaign_calls.campaign_id and campaigns.status = 'running' and agents.status <> 'paused' for share)` : db``;
  const campaign = read.campaign
    ? db`, (select json_build_object('widget_id', c.agent_id, 'from_number', c.from_number, 'objective', c.objective,
      'opening_line', c.opening_line, 'voicemail_behavior', c.voicemail_behavior, 'voicemail_message', c.voicemail_message) from campaigns c where c.id = campaign_calls.campaign_id) as read_campaign`
    : db``;
  const blocked = read.blocked
    ? db`, ${onDoNotCall(db, { orgId: db`campaign_calls.org_id`, contactId: db`campaign_calls.contact_id`, number: db`campaign_calls.to_number` })} as read_blocked`
    : db``;
  const [r] = await db<(CallRow & { read_campaign?: CallCampaign | null; read_blocked?: boolean })[]>`update campaign_calls set ${db(set)}, updated_at = now() ${started} ${answered}
    where id = ${id} and status = any(${[...from]}::text[]) ${running} returning ${db(CALL_COLUMNS)} ${campaign} ${blocked}`;
  if (r?.read_campaign) rememberAgentOfCall(r.id, r.read_campaign.widget_id);
  return r ? { call: toCallRecord(r), campaign: r.read_campaign ?? null, blocked: r.read_blocked === true } : null;
}

/**
 * Links a conversation to a call that has not ended and has none yet (under the row's lock, so a call
 * ending meanwhile is seen by one of the two); false when the call has ended, has one, or is gone.
 */
export async function linkOpenCallConversation(db: Db, id: string, conversationId: string): Promise<boolean> {
  const rows = await db`update campaign_calls set conversation_id = ${conversationId}, updated_at = now()
    where id = ${id} and ended_at is null and conversation_id is null returning id`;
  return rows.length > 0;
}

/**
 * Ends a call that has not ended: status, reason, end time, talk time. Null when it had ended
 * already (a retried activity, or a hangup that lost the race), so it ends exactly once.
 */
export async function endCallRow(db: Db, id: string, status: TerminalCallStatus, reason: EndedReason,
  opts: { onlyFrom?: readonly CallStatus[] } = {}): Promise<CallRecord | null> {
  const from = opts.onlyFrom ? db`and status = any(${[...opts.onlyFrom]}::text[])` : db`and ended_at is null`;
  const [r] = await db<CallRow[]>`${endCallUpdate(db, id, status, reason)} ${from} returning ${db(CALL_COLUMNS)}`;
  return r ? toCallRecord(r) : null;
}

/** `update ... where id = ...` of a call's end, for its callers to finish the condition. */
const endCallUpdate = (db: Db, id: string, status: TerminalCallStatus, reason: EndedReason) => db`update campaign_calls
    set status = ${status}, ended_reason = ${reason}, ended_at = now(), updated_at = now(),
      duration_seconds = case when answered_at is null then null else greatest(0, floor(extract(epoch from now() - answered_at)))::int end,
      outcome = case when outcome is null and answered_at is not null then 'reached' else outcome end
    where id = ${id}`;

/** What ending a call needs of its campaign (read in the statement that ends it). */
export type EndingCampaign = Pick<CampaignRecord, 'widget_id' | 'status' | 'retry'>;

/**
 * Records what came of a call that has not ended (its outcome, and when a callback was asked for), unless an
 * outcome that ends the conversation was recorded first: the call as it reads now, or null when it has ended or is gone.
 */
export async function recordCallOutcome(db: Db, id: string, outcome: CallOutcome, callbackAt: Date | null = null): Promise<CallRecord | null> {
  const [r] = await db<CallRow[]>`update campaign_calls set outcome = ${outcome}, callback_at = ${callbackAt}, updated_at = now()
    where id = ${id} and ended_at is null and (outcome is null or outcome = 'reached') returning ${db(CALL_COLUMNS)}`;
  return r ? toCallRecord(r) : null;
}

/** What a campaign call's conversation needs of its call and campaign, each turn: null when the conversation is not a campaign call's. */
export interface CallOfConversation {
  call: CallRecord;
  campaign: Pick<CampaignRecord, 'id' | 'name' | 'status' | 'objective' | 'opening_line' | 'voicemail_behavior' | 'voicemail_message' | 'widget_id'>;
}

export async function findCallOfConversation(db: Db, conversationId: string): Promise<CallOfConversation | null> {
  const [r] = await db<(CallRow & { c_name: string; c_status: CampaignStatus; c_objective: string | null; c_opening_line: string | null;
    c_voicemail_behavior: 'leave_message' | 'hang_up' | null; c_voicemail_message: string | null; c_agent_id: string })[]>`
    select ${db(CALL_COLUMNS.map((c) => `campaign_calls.${c}`))}, c.name as c_name, c.status as c_status, c.objective as c_objective,
      c.opening_line as c_opening_line, c.voicemail_behavior as c_voicemail_behavior, c.voicemail_message as c_voicemail_message, c.agent_id as c_agent_id
    from campaign_calls join campaigns c on c.id = campaign_calls.campaign_id where campaign_calls.conversation_id = ${conversationId}
    order by campaign_calls.created_at desc limit 1`;
  if (!r) return null;
  return {
    call: toCallRecord(r),
    campaign: {
      id: r.campaign_id, name: r.c_name, status: r.c_status, objective: r.c_objective, opening_line: r.c_opening_line,
      voicemail_behavior: r.c_voicemail_behavior, voicemail_message: r.c_voicemail_message, widget_id: r.c_agent_id,
    },
  };
}

/**
 * The callee asked not to be called again: its contact (by id, else every contact of the organization with its
 * number) is do-not-call from now on; a number with no contact gets one, flagged. Run it in the turn's transaction.
 */
export async function markCalleeDoNotCall(db: Db, orgId: string, call: { contact_id: string | null; to_number: string }): Promise<void> {
  const updated = await db`update contacts set do_not_call = true, updated_at = now()
    where org_id = ${orgId} and (id = ${call.contact_id} or phone_e164 = ${call.to_number}) returning id`;
  if (updated.length === 0) {
    await db`insert into contacts (id, org_id, phone_e164, do_not_call) values (${newId()}, ${orgId}, ${call.to_number}, true)
      on conflict do nothing`;
  }
}

/**
 * endCallRow of a call that has not ended, with its campaign as it reads now (null when deleted),
 * in one statement. Null when the call had ended already.
 *
 * With `event` (issue 48), the same statement writes `campaign_call.ended` (`{call}`, the call as the API returns it,
 * built by PostgreSQL) while the campaign's agent is `event.agentId` and its redaction settings are still at
 * `event.redactionVersion`: `event` in the answer is the data as stored, or null when it was not written (then the
 * caller emits it, in the same transaction). Its `created_at` is this statement's clock, so it stays before the
 * `conversation.ended` a later statement of the transaction writes.
 */
export async function endCallRowWithCampaign(db: Db, id: string, status: TerminalCallStatus, reason: EndedReason,
  event?: { id: string; agentId: string; redactionVersion: number }):
  Promise<{ call: CallRecord; campaign: EndingCampaign | null; event: Record<string, unknown> | null } | null> {
  const written = event ? db`, event as (
      ${insertCallEnded(db, event.id, db`c.agent_id`)}
      from ended e join campaigns c on c.id = e.campaign_id
      where c.agent_id = ${event.agentId} and ${redactionStillAt(db, event.agentId, event.redactionVersion)}
      returning data)` : db``;
  const [r] = await db<(CallRow & { campaign_agent_id: string | null; campaign_status: CampaignStatus | null; campaign_retry: Retry | null;
    event_data?: Record<string, unknown> | null })[]>`
    with ended as (${endCallUpdate(db, id, status, reason)} and ended_at is null returning ${db(CALL_COLUMNS)}) ${written}
    select ended.*, c.agent_id as campaign_agent_id, c.status as campaign_status, c.retry as campaign_retry
      ${event ? db`, (select data from event) as event_data` : db``}
    from ended left join campaigns c on c.id = ended.campaign_id`;
  if (!r) return null;
  const campaign = r.campaign_agent_id === null ? null : { widget_id: r.campaign_agent_id, status: r.campaign_status!, retry: r.campaign_retry };
  const { campaign_agent_id: _a, campaign_status: _s, campaign_retry: _r, event_data: data, ...row } = r;
  return { call: toCallRecord(row), campaign, event: data ?? null };
}

/**
 * A call's end and its conversation's in one statement (issue 48: begin, endCallRowWithCampaign, markEnded and commit
 * were 4): the call ended with `campaign_call.ended`, then its conversation, when active, ended with its usage record
 * and `conversation.ended` (endConversationCtes), each event's data built by PostgreSQL. One statement is one
 * transaction, so the two ends commit together, as the transaction did; `conversation.ended` is stamped after
 * `campaign_call.ended` (it reads that event's time), so events keep their order.
 *
 * Written only when nothing else is needed, else nothing is written and null answers (endCall then takes the
 * transaction's path, or finds the call ended): the call has not ended; no callback was asked for (the transaction may
 * queue one: a busy or unanswered call's retry is the caller's to rule out); the campaign's agent is `event.agentId`,
 * its redaction still at `event.redactionVersion` (both events' payloads are as written); and the call's conversation,
 * if any, is that agent's and committed before this statement began (one linked later is not seen by its snapshot).
 */
export async function endCallAndConversation(db: Db, id: string, status: TerminalCallStatus, reason: EndedReason,
  event: { id: string; conversationEventId: string; agentId: string; redactionVersion: number }):
  Promise<{ call: CallRecord; event: Record<string, unknown>; conversationEvent: Record<string, unknown> | null; conversation: Conversation | null } | null> {
  const [r] = await db<(CallRow & { event_data: Record<string, unknown>; conversation_event_data: Record<string, unknown> | null;
    conversation_listed: (Omit<Conversation, 'started_at' | 'ended_at'> & { started_at: string; ended_at: string | null }) | null })[]>`
    with ended as (${endCallUpdate(db, id, status, reason)} and ended_at is null and outcome is distinct from 'callback_requested'
        and exists (select 1 from campaigns c where c.id = campaign_id and c.agent_id = ${event.agentId})
        and ${redactionStillAt(db, event.agentId, event.redactionVersion)}
        and (conversation_id is null or exists (select 1 from conversations v where v.id = conversation_id and v.agent_id = ${event.agentId}))
      returning ${db(CALL_COLUMNS)}),
    event as (
      ${insertCallEnded(db, event.id, db`${event.agentId}::uuid`)}
      from ended e
      returning created_at, data),
    ${endConversationCtes(db, db`(select conversation_id from ended)`, 'visitor',
    { id: event.conversationEventId, agentId: event.agentId, redactionVersion: event.redactionVersion }, db`(select created_at from event)`)}
    select ended.*, (select data from event) as event_data, (select data from conversation_event) as conversation_event_data,
      ${endedConversationListed(db)} as conversation_listed
    from ended`;
  if (!r) return null;
  const { event_data: data, conversation_event_data: conversationData, conversation_listed: listed, ...row } = r;
  return {
    call: toCallRecord(row), event: data, conversationEvent: conversationData,
    conversation: listed ? { ...listed, started_at: new Date(listed.started_at).toISOString(), ended_at: listed.ended_at ? new Date(listed.ended_at).toISOString() : null } : null,
  };
}

/**
 * The insert of `campaign_call.ended` for the ended call `e`, its data built by PostgreSQL, stamped by the clock; the
 * caller adds its `from` (and where), and what it returns. Shared by endCallRowWithCampaign and endCallAndConversation.
 */
const insertCallEnded = (db: Db, eventId: string, agentId: Fragment) => db`insert into events (id, org_id, type, agent_id, data, created_at, dispatched_at)
      select ${eventId}::text, e.org_id, 'campaign_call.ended', ${agentId}, json_build_object('call', ${callJson(db)}), clock_timestamp(),
        ${dispatchedUnlessReceived(db, db`e.org_id`, 'campaign_call.ended')}`;

/** The call `e` (CALL_COLUMNS) as JSON built by PostgreSQL, as toCall gives it (keys in its order). */
const callJson = (db: Db) => db`json_build_object('id', e.id, 'campaign_id', e.campaign_id, 'call_sid', e.call_sid, 'to_number', e.to_number,
    'contact_id', e.contact_id, 'status', e.status, 'ended_reason', e.ended_reason, 'conversation_id', e.conversation_id, 'attempt', e.attempt,
    'previous_call_id', e.previous_call_id, 'created_at', ${isoTime(db, db`e.created_at`)}, 'started_at', ${isoTime(db, db`e.started_at`)},
    'answered_at', ${isoTime(db, db`e.answered_at`)}, 'ended_at', ${isoTime(db, db`e.ended_at`)}, 'duration_seconds', e.duration_seconds,
    'outcome', e.outcome, 'callback_at', ${isoTime(db, db`e.callback_at`)})`;

/** Ends every queued call of a campaign `canceled`/`canceled` (a campaign cancel); the calls ended. */
export async function cancelQueuedCalls(db: Db, campaignId: string): Promise<CallRecord[]> {
  const rows = await db<CallRow[]>`update campaign_calls set status = 'canceled', ended_reason = 'canceled', ended_at = now(), updated_at = now()
    where campaign_id = ${campaignId} and status = 'queued' returning ${db(CALL_COLUMNS)}`;
  return rows.map(toCallRecord);
}

/** Ends `expired`/`expired` the queued calls of a campaign due more than `seconds` ago (never dialed); the calls ended. */
export async function expireQueuedCalls(db: Db, campaignId: string, seconds: number): Promise<CallRecord[]> {
  const rows = await db<CallRow[]>`update campaign_calls set status = 'expired', ended_reason = 'expired', ended_at = now(), updated_at = now()
    where campaign_id = ${campaignId} and status = 'queued' and not_before <= now() - make_interval(secs => ${seconds})
    returning ${db(CALL_COLUMNS)}`;
  return rows.map(toCallRecord);
}

/** Whether a call must not be placed: its contact, or a contact with its number, is do-not-call. */
export async function callIsBlocked(db: Db, orgId: string, call: { contact_id: string | null; to_number: string }): Promise<boolean> {
  const [r] = await db<{ blocked: boolean }[]>`select ${onDoNotCall(db, { orgId: db`${orgId}`, contactId: db`${call.contact_id}`, number: db`${call.to_number}` })} as blocked`;
  return r?.blocked === true;
}

/** Whether a callee is on the do-not-call list: the organization's contact by id, or by number (each an SQL expression). */
function onDoNotCall(db: Db, callee: { orgId: Fragment; contactId: Fragment; number: Fragment }): Fragment {
  return db`exists (select 1 from contacts k where k.org_id = ${callee.orgId} and k.do_not_call
    and (k.id = ${callee.contactId} or k.phone_e164 = ${callee.number}))`;
}

/** The numbers of an organization's do-not-call contacts among `numbers`. */
export async function blockedNumbers(db: Db, orgId: string, numbers: string[]): Promise<Set<string>> {
  if (numbers.length === 0) return new Set();
  const rows = await db<{ phone_e164: string }[]>`select phone_e164 from contacts where org_id = ${orgId} and do_not_call
    and phone_e164 = any(${numbers}::text[])`;
  return new Set(rows.map((r) => r.phone_e164));
}

/**
 * The queue of a campaign by zone: queued calls, seconds until the earliest of them may be retried
 * (0 when one may now), and seconds since the longest-due of them was due (0 when none is due yet).
 */
export async function queuedByZone(db: Db, campaignId: string): Promise<QueuedZone[]> {
  return db<QueuedZone[]>`${queuedByZoneQuery(db, campaignId)}`;
}

export interface QueuedZone { timezone: string; queued: number; wait_seconds: number; due_seconds: number }

const queuedByZoneQuery = (db: Db, campaignId: string) => db`
    select timezone, count(*)::int as queued, greatest(0, ceil(extract(epoch from min(not_before) - now())))::int as wait_seconds,
      greatest(0, floor(extract(epoch from now() - min(not_before))))::int as due_seconds
    from campaign_calls where campaign_id = ${campaignId} and status = 'queued' group by timezone`;

/** Up to `limit` queued calls in `zones` that may be dialed now, in queue order, leaving out `exclude` (already handed out). */
/** A queued call ready to start, with what its run's summary names: its place in the queue out of all, its number and attempt. */
export interface ReadyCall { id: string; position: number; total: number; to_number: string; attempt: number }

export async function readyCalls(db: Db, campaignId: string, zones: string[], exclude: string[], limit: number): Promise<ReadyCall[]> {
  if (zones.length === 0 || limit <= 0) return [];
  return db<ReadyCall[]>`select id, position, attempt, to_number,
      (select max(position) from campaign_calls where campaign_id = ${campaignId})::int as total
    from campaign_calls
    where campaign_id = ${campaignId} and status = 'queued' and not_before <= now() and timezone = any(${zones}::text[])
      and id <> all(${exclude}::uuid[])
    order by position, attempt limit ${limit}`;
}

/** How many of the campaign's calls ended each way (by status), for the campaign run's result. */
export async function callOutcomeCounts(db: Db, campaignId: string): Promise<Record<string, number>> {
  const rows = await db<{ status: string; n: number }[]>`select status, count(*)::int as n from campaign_calls
    where campaign_id = ${campaignId} group by status order by status`;
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}
