import { Type, type Static } from '@sinclair/typebox';
import { E164, ListEnvelope, Nullable, StringEnum, Timestamp, Uuid } from './common.ts';

export const TRANSFER_TYPES = ['cold', 'warm', 'sip_refer'] as const;
export type TransferType = (typeof TRANSFER_TYPES)[number];

/** What a transfer does when its destination does not answer in time (issue 43). */
export const NO_ANSWER_ACTIONS = ['return_to_agent', 'voicemail'] as const;
export type NoAnswerAction = (typeof NO_ANSWER_ACTIONS)[number];

export const PRIORITY_MIN = 0;
export const PRIORITY_MAX = 1000;
export const RING_TIMEOUT_MIN = 10;
export const RING_TIMEOUT_MAX = 60;

/** The code of a field sent for a transfer type it does not belong to. */
export const NOT_FOR_TYPE = 'not_allowed_for_transfer_type';

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'Display name, 1 to 200 characters' });
const Condition = Type.String({
  minLength: 1, maxLength: 2000, pattern: '\\S',
  description: 'Natural-language description of when to transfer, 1 to 2000 characters',
});
const DestinationPhone = { ...E164, description: 'Number to transfer to, E.164 (code `invalid_e164`). Required for `cold` and `warm`, and for `sip_refer` unless destination_sip_uri is given' };
const DestinationLabel = Type.String({ maxLength: 200, description: 'Who the destination is, e.g. "Billing desk", up to 200 characters' });
const Enabled = Type.Boolean({ description: 'Whether the agent uses the rule (default true)' });
const Priority = Type.Integer({
  minimum: PRIORITY_MIN, maximum: PRIORITY_MAX,
  description: `When several rules match, the highest wins; ${PRIORITY_MIN} to ${PRIORITY_MAX}, default 0`,
});
const Type_ = StringEnum(TRANSFER_TYPES, {
  description: '`cold` (default): the agent dials destination_phone and drops off; `warm`: the agent calls the destination first, '
    + 'reads warm_brief, then bridges the caller in; `sip_refer`: hand-off over one of the organization\'s SIP trunks. '
    + 'Changing it clears the fields of the old type (`warm_brief` of warm; `sip_trunk_id` and `destination_sip_uri` of sip_refer), '
    + 'then the rule is checked for the new type',
});
const RingTimeout = Type.Integer({
  minimum: RING_TIMEOUT_MIN, maximum: RING_TIMEOUT_MAX,
  description: `Seconds the destination rings before the transfer is given up, ${RING_TIMEOUT_MIN} to ${RING_TIMEOUT_MAX} inclusive, default 30`,
});
const OnNoAnswer = StringEnum(NO_ANSWER_ACTIONS, {
  description: 'When the destination does not answer within ring_timeout_seconds (or is busy, or the call fails): '
    + '`return_to_agent` (default): the agent says the destination is not available and goes on with the caller; '
    + '`voicemail`: the caller is asked to leave a message after the tone, recorded and noted in the transcript',
});
const WarmBrief = Type.String({
  maxLength: 2000,
  description: `Read to whoever answers, before the caller is bridged in; up to 2000 characters. Only for \`warm\` rules: a non-null value on another type is 400 \`${NOT_FOR_TYPE}\``,
});
const SipTrunkId = {
  ...Uuid,
  description: `A SIP trunk of the same organization (else 400 \`unknown_sip_trunk\`). Required for \`sip_refer\`; a non-null value on another type is 400 \`${NOT_FOR_TYPE}\``,
};
const DestinationSipUri = Type.String({
  maxLength: 512, pattern: '^[sS][iI][pP][sS]?:[^\\s<>"]+$', 'x-code': 'invalid_sip_uri',
  description: `Optional \`sip:\` or \`sips:\` target of the REFER, with a valid host (code \`invalid_sip_uri\`). Only for \`sip_refer\`: a non-null value on another type is 400 \`${NOT_FOR_TYPE}\``,
  examples: ['sip:billing@pbx.example.com'],
});

/** A transfer rule as every endpoint answers it. */
export const TransferRuleSchema = Type.Object({
  id: Uuid,
  widget_id: { ...Uuid, description: 'The agent the rule belongs to (its uuid `id`)' },
  name: Type.String(),
  condition: Type.String(),
  destination_phone: Nullable(Type.String({ description: 'E.164; null only on a `sip_refer` rule with destination_sip_uri' })),
  destination_label: Nullable(Type.String()),
  enabled: Type.Boolean(),
  priority: Type.Integer(),
  transfer_type: StringEnum(TRANSFER_TYPES),
  ring_timeout_seconds: Type.Integer({ minimum: RING_TIMEOUT_MIN, maximum: RING_TIMEOUT_MAX }),
  on_no_answer: StringEnum(NO_ANSWER_ACTIONS),
  warm_brief: Nullable(Type.String()),
  sip_trunk_id: Nullable(Uuid),
  destination_sip_uri: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'TransferRule', additionalProperties: false, description: 'A rule that bridges a caller to a human' });
export type TransferRule = Static<typeof TransferRuleSchema>;

export const TransferRuleCreateSchema = Type.Object({
  name: Name,
  condition: Condition,
  destination_phone: Type.Optional(Nullable(DestinationPhone)),
  destination_label: Type.Optional(Nullable(DestinationLabel)),
  enabled: Type.Optional(Enabled),
  priority: Type.Optional(Priority),
  transfer_type: Type.Optional(Type_),
  ring_timeout_seconds: Type.Optional(RingTimeout),
  on_no_answer: Type.Optional(OnNoAnswer),
  warm_brief: Type.Optional(Nullable(WarmBrief)),
  sip_trunk_id: Type.Optional(Nullable(SipTrunkId)),
  destination_sip_uri: Type.Optional(Nullable(DestinationSipUri)),
}, { $id: 'TransferRuleCreate', additionalProperties: false, description: 'A new rule: `name` and `condition` are required; unsent fields take their defaults' });
export type TransferRuleCreate = Static<typeof TransferRuleCreateSchema>;

// The create fields, every one optional: one list of fields for both bodies.
export const TransferRulePatchSchema = Type.Partial(Type.Object(TransferRuleCreateSchema.properties), {
  $id: 'TransferRulePatch', additionalProperties: false,
  description: 'Any subset of the rule fields; only sent fields change and unsent type-specific fields are kept (`{}` changes nothing). '
    + 'A changed transfer_type first clears the fields of the old type; the merged rule is then checked as on create',
});
export type TransferRulePatch = Static<typeof TransferRulePatchSchema>;

export const TransferRuleListSchema = ListEnvelope(TransferRuleSchema, 'TransferRuleList');

export const TransferRuleParams = Type.Object({ id: Uuid, ruleId: Uuid }, { additionalProperties: false });
