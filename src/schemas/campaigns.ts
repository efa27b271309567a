import { Type, type Static } from '@sinclair/typebox';
import { E164, ListEnvelope, Nullable, PageQueryProps, StringEnum, Timestamp, Uuid } from './common.ts';
import { VOICEMAIL_BEHAVIORS } from './agents.ts';

export const CAMPAIGN_STATUSES = ['draft', 'running', 'paused', 'completed', 'canceled'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

/** A call walks these in order (specification, "Campaign call status")... */
export const LIVE_CALL_STATUSES = ['queued', 'claimed', 'dialing', 'initiated', 'ringing', 'in_progress'] as const;
/** ...then ends in one of these. */
export const TERMINAL_CALL_STATUSES = ['completed', 'busy', 'failed', 'no_answer', 'canceled', 'expired'] as const;
export const CALL_STATUSES = [...LIVE_CALL_STATUSES, ...TERMINAL_CALL_STATUSES] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];
export type TerminalCallStatus = (typeof TERMINAL_CALL_STATUSES)[number];
/** In flight: what `active=1` returns. */
export const IN_FLIGHT_STATUSES = ['dialing', 'initiated', 'ringing', 'in_progress'] as const;
export const ENDED_REASONS = ['carrier', 'hangup', 'max_duration', 'canceled', 'expired', 'blocked', 'error'] as const;
export type EndedReason = (typeof ENDED_REASONS)[number];

/**
 * What came of an answered campaign call (issue 43): `reached` (someone answered, nothing below), `voicemail_left` and
 * `voicemail_hung_up` (a machine answered; per `voicemail_behavior`), `not_interested`, `callback_requested` (a retry is
 * queued for `callback_at`) and `do_not_call` (the callee asked to be taken off the list).
 */
export const CALL_OUTCOMES = ['reached', 'voicemail_left', 'voicemail_hung_up', 'not_interested', 'callback_requested', 'do_not_call'] as const;
export type CallOutcome = (typeof CALL_OUTCOMES)[number];

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];
export const RETRY_ON = ['busy', 'no_answer'] as const;

const ClockTime = Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', 'x-code': 'invalid_time', description: 'Local time `HH:MM` (24 h)' });

export const CallingWindowSchema = Type.Object({
  start: ClockTime,
  end: Type.String({ ...ClockTime, description: 'Local time `HH:MM`, after `start` (no call starts at or after it)' }),
  days: Type.Optional(Type.Array(StringEnum(WEEKDAYS), { minItems: 1, maxItems: 7, uniqueItems: true, description: 'Days calls may start; default every day' })),
}, { $id: 'CallingWindow', additionalProperties: false, description: 'When calls may start, in each callee\'s timezone (from the number\'s country and region, else the campaign\'s `timezone`)' });
export type CallingWindow = Static<typeof CallingWindowSchema>;

export const RetrySchema = Type.Object({
  max_attempts: Type.Integer({ minimum: 1, maximum: 10, description: 'Attempts in all, the first included' }),
  backoff_seconds: Type.Integer({ minimum: 0, maximum: 86_400, description: 'Wait before the next attempt' }),
  on: Type.Array(StringEnum(RETRY_ON), { minItems: 1, maxItems: 2, uniqueItems: true, description: 'Outcomes that are retried: `busy`, `no_answer`' }),
}, { $id: 'CampaignRetry', additionalProperties: false });
export type Retry = Static<typeof RetrySchema>;

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' });
const MaxDuration = Type.Integer({ minimum: 1, maximum: 14_400, description: 'Cap of each call\'s talk time in seconds (1 to 14,400): then it is hung up with `max_duration`' });
const Concurrency = Type.Integer({ minimum: 1, maximum: 50, description: 'Calls in progress at once, 1 to 50 (default 5)' });
const Timezone = Type.String({ minLength: 1, maxLength: 64, description: 'IANA zone (`Europe/Paris`) of numbers whose own zone is unknown; default UTC' });
const ToNumbers = Type.Array(E164, { minItems: 1, maxItems: 10_000, description: 'Numbers to call (E.164); duplicates are dropped' });
const ContactIds = Type.Array(Uuid, { minItems: 1, maxItems: 10_000, description: 'Contacts to call, at their `phone_e164`; duplicates are dropped' });
const Objective = Type.String({ minLength: 1, maxLength: 500, pattern: '\\S', description: 'What the call is for, said after the agent introduces itself ("to confirm your appointment tomorrow"); the LLM runtime is told it too' });
const OpeningLine = Type.String({
  minLength: 1, maxLength: 500, pattern: '\\S',
  description: 'The agent\'s first words on an answered call, a template: `{{agent_name}}`, the agent\'s `config_variables` and the contact\'s facts (`{{first_name}}`...); default: the agent and the business introduced, then the objective',
});
const CampaignVoicemail = StringEnum(VOICEMAIL_BEHAVIORS, { description: 'When a machine answers: `leave_message` (after the beep) or `hang_up`; null: the agent\'s `voicemail_behavior`' });
const VoicemailMessage = Type.String({ minLength: 1, maxLength: 1000, pattern: '\\S', description: 'The message left after the beep, a template as `opening_line`; default: the introduction and the objective, and a call back' });

export const CampaignSchema = Type.Object({
  id: Uuid,
  name: Type.String(),
  widget_id: Type.String({ ...Uuid, description: 'The agent that places the calls' }),
  status: StringEnum(CAMPAIGN_STATUSES, { description: '`draft`, `running`, `paused`, `completed` or `canceled`; active while `running` or `paused`' }),
  to_numbers: Type.Array(E164),
  contact_ids: Type.Array(Uuid),
  max_duration_seconds: Type.Integer(),
  concurrency: Type.Integer(),
  calling_window: Nullable(CallingWindowSchema),
  retry: Nullable(RetrySchema),
  timezone: Nullable(Type.String()),
  from_number: Nullable(Type.String({ description: 'The agent\'s active number the calls are placed from (set at start)' })),
  objective: Nullable(Objective),
  opening_line: Nullable(OpeningLine),
  voicemail_behavior: Nullable(CampaignVoicemail),
  voicemail_message: Nullable(VoicemailMessage),
  requires_consent: Type.Boolean({ description: 'Only contacts and numbers whose latest marketing consent is a grant are called; the others end `canceled`/`blocked` when the campaign starts' }),
  created_at: Timestamp,
  updated_at: Timestamp,
  started_at: Nullable(Timestamp),
  completed_at: Nullable(Timestamp),
}, { $id: 'Campaign', additionalProperties: false });
export type Campaign = Static<typeof CampaignSchema>;

export const CampaignListSchema = ListEnvelope(CampaignSchema, 'CampaignList');
export const CampaignListQuery = Type.Object({
  ...PageQueryProps,
  widget_id: Type.Optional(Uuid),
  status: Type.Optional(StringEnum(CAMPAIGN_STATUSES)),
}, { additionalProperties: false });

export const CampaignCreateSchema = Type.Object({
  name: Name,
  widget_id: Type.String({ ...Uuid, description: 'The agent that places the calls, from its active number' }),
  to_numbers: Type.Optional(ToNumbers),
  contact_ids: Type.Optional(ContactIds),
  max_duration_seconds: MaxDuration,
  concurrency: Type.Optional(Concurrency),
  requires_consent: Type.Optional(Type.Boolean({ description: 'Call only contacts and numbers with marketing consent (default false)' })),
  calling_window: Type.Optional(Nullable(CallingWindowSchema)),
  retry: Type.Optional(Nullable(RetrySchema)),
  timezone: Type.Optional(Nullable(Timezone)),
  objective: Type.Optional(Nullable(Objective)),
  opening_line: Type.Optional(Nullable(OpeningLine)),
  voicemail_behavior: Type.Optional(Nullable(CampaignVoicemail)),
  voicemail_message: Type.Optional(Nullable(VoicemailMessage)),
}, { $id: 'CampaignCreate', additionalProperties: false, description: 'Exactly one of `to_numbers` and `contact_ids`' });
export type CampaignCreate = Static<typeof CampaignCreateSchema>;

export const CampaignPatchSchema = Type.Object({
  name: Type.Optional(Name),
  widget_id: Type.Optional(Type.String({ ...Uuid })),
  to_numbers: Type.Optional(ToNumbers),
  contact_ids: Type.Optional(ContactIds),
  max_duration_seconds: Type.Optional(MaxDuration),
  concurrency: Type.Optional(Concurrency),
  requires_consent: Type.Optional(Type.Boolean({ description: 'Call only contacts and numbers with marketing consent (default false)' })),
  calling_window: Type.Optional(Nullable(CallingWindowSchema)),
  retry: Type.Optional(Nullable(RetrySchema)),
  timezone: Type.Optional(Nullable(Timezone)),
  objective: Type.Optional(Nullable(Objective)),
  opening_line: Type.Optional(Nullable(OpeningLine)),
  voicemail_behavior: Type.Optional(Nullable(CampaignVoicemail)),
  voicemail_message: Type.Optional(Nullable(VoicemailMessage)),
}, { $id: 'CampaignPatch', additionalProperties: false, description: 'Any subset, in `draft` only; `to_numbers` replaces `contact_ids` and the other way round' });
export type CampaignPatch = Static<typeof CampaignPatchSchema>;

export const CampaignCallSchema = Type.Object({
  id: Uuid,
  campaign_id: Uuid,
  call_sid: Nullable(Type.String({ description: 'The carrier\'s call id' })),
  to_number: E164,
  contact_id: Nullable(Uuid),
  status: StringEnum(CALL_STATUSES, { description: '`queued`, `claimed`, `dialing`, `initiated`, `ringing`, `in_progress`, then one of `completed`, `busy`, `failed`, `no_answer`, `canceled`, `expired`' }),
  ended_reason: Nullable(StringEnum(ENDED_REASONS)),
  conversation_id: Nullable(Type.String({ ...Uuid, description: 'The phone conversation of an answered call' })),
  attempt: Type.Integer({ minimum: 1 }),
  previous_call_id: Nullable(Type.String({ ...Uuid, description: 'The attempt this one retries' })),
  created_at: Timestamp,
  started_at: Nullable(Timestamp),
  answered_at: Nullable(Timestamp),
  ended_at: Nullable(Timestamp),
  duration_seconds: Nullable(Type.Integer({ minimum: 0, description: 'Talk time from `answered_at` to `ended_at`; null when never answered' })),
  outcome: Nullable(StringEnum(CALL_OUTCOMES, {
    description: 'What came of an answered call: `reached`, `voicemail_left`, `voicemail_hung_up`, `not_interested`, `callback_requested` or `do_not_call`; null while nothing is known, and for a call never answered',
  })),
  callback_at: Nullable(Type.String({ ...Timestamp, description: 'When the callee asked to be called back (`callback_requested`): the retry is queued for then, inside the calling window' })),
}, { $id: 'CampaignCall', additionalProperties: false });
export type CampaignCall = Static<typeof CampaignCallSchema>;

export const CampaignCallListSchema = ListEnvelope(CampaignCallSchema, 'CampaignCallList');
export const CampaignCallListQuery = Type.Object({
  ...PageQueryProps,
  active: Type.Optional(StringEnum(['1', '0', 'true', 'false'], { description: '`1`: only calls in flight (`dialing`, `initiated`, `ringing`, `in_progress`)' })),
  status: Type.Optional(StringEnum(CALL_STATUSES)),
}, { additionalProperties: false });

export const CampaignCallParams = Type.Object({ id: Uuid, callId: Uuid }, { additionalProperties: false });

export const HangupResultSchema = Type.Object({
  call: CampaignCallSchema,
  action: StringEnum(['canceled', 'hung_up'] as const, { description: '`canceled` before dialing, `hung_up` in flight' }),
}, { $id: 'CampaignCallHangup', additionalProperties: false });
