import type { FieldError } from '../validation.ts';
import {
  NOT_FOR_TYPE, type NoAnswerAction, type TransferRule, type TransferRuleCreate, type TransferRulePatch, type TransferType,
} from '../schemas/transfer-rules.ts';
import { normalizeSipHost } from './sip-host.ts';

/** What a rule stores: every writable field, merged and checked (no id, agent or timestamps). */
export interface TransferRuleFields {
  name: string;
  condition: string;
  destination_phone: string | null;
  destination_label: string | null;
  enabled: boolean;
  priority: number;
  transfer_type: TransferType;
  ring_timeout_seconds: number;
  on_no_answer: NoAnswerAction;
  warm_brief: string | null;
  sip_trunk_id: string | null;
  destination_sip_uri: string | null;
}

export const TRANSFER_RULE_DEFAULTS = {
  destination_phone: null, destination_label: null, enabled: true, priority: 0, transfer_type: 'cold',
  ring_timeout_seconds: 30, on_no_answer: 'return_to_agent', warm_brief: null, sip_trunk_id: null, destination_sip_uri: null,
} as const satisfies Omit<TransferRuleFields, 'name' | 'condition'>;

type TypeField = 'warm_brief' | 'sip_trunk_id' | 'destination_sip_uri';

/** The fields that belong to one transfer type only: they are cleared when a rule leaves it. */
export const TYPE_ONLY_FIELDS: Record<TransferType, readonly TypeField[]> = {
  cold: [],
  warm: ['warm_brief'],
  sip_refer: ['sip_trunk_id', 'destination_sip_uri'],
};
const OWNER: Record<TypeField, TransferType> = { warm_brief: 'warm', sip_trunk_id: 'sip_refer', destination_sip_uri: 'sip_refer' };

const FIELDS = [
  'name', 'condition', 'destination_phone', 'destination_label', 'enabled', 'priority', 'transfer_type',
  'ring_timeout_seconds', 'on_no_answer', 'warm_brief', 'sip_trunk_id', 'destination_sip_uri',
] as const satisfies readonly (keyof TransferRuleFields)[];

/**
 * Checks of sent values that do not depend on the rule they change (beyond what the JSON
 * Schema says): a `destination_sip_uri` must name a valid host. Pure.
 */
export function checkTransferRuleFields(changes: TransferRulePatch): FieldError[] {
  const uri = changes.destination_sip_uri;
  if (typeof uri === 'string' && !normalizeSipHost(uri).ok) {
    return [{ field: 'destination_sip_uri', code: 'invalid_sip_uri', message: 'destination_sip_uri must be a sip: or sips: URI with a valid host' }];
  }
  return [];
}

/**
 * The rule that results from applying `changes` (a create body when `current` is null, a PATCH
 * body otherwise), with the errors that make it invalid. Only sent fields change; unsent ones
 * keep their value (or take their default on create). Changing `transfer_type` first clears the
 * fields that belong only to the old type; then the rule is checked for its type:
 * `destination_phone` is required for cold and warm, and for sip_refer unless
 * `destination_sip_uri` is given; sip_refer requires `sip_trunk_id`; a non-null `warm_brief`,
 * `sip_trunk_id` or `destination_sip_uri` sent for another type is `not_allowed_for_transfer_type`.
 * Whether `sip_trunk_id` names a trunk of the organization is for the caller to check. Pure:
 * import reuses it.
 */
export function mergeTransferRule(current: TransferRuleFields | null, changes: TransferRulePatch | TransferRuleCreate):
  { rule: TransferRuleFields; errors: FieldError[] } {
  const errors = checkTransferRuleFields(changes);
  const rule: TransferRuleFields = current ? { ...current } : { name: '', condition: '', ...TRANSFER_RULE_DEFAULTS };
  const type = changes.transfer_type ?? rule.transfer_type;
  if (current && type !== current.transfer_type) {
    for (const field of TYPE_ONLY_FIELDS[current.transfer_type]) if (!TYPE_ONLY_FIELDS[type].includes(field)) rule[field] = null;
  }
  for (const field of FIELDS) {
    const value = changes[field];
    if (value !== undefined) (rule as unknown as Record<string, unknown>)[field] = value;
  }
  rule.transfer_type = type;

  if (!current) {
    for (const field of ['name', 'condition'] as const) {
      if (changes[field] === undefined) errors.push({ field, code: 'required', message: `${field} is required` });
    }
  }
  for (const field of Object.keys(OWNER) as TypeField[]) {
    if (rule[field] !== null && !TYPE_ONLY_FIELDS[type].includes(field)) {
      errors.push({ field, code: NOT_FOR_TYPE, message: `${field} applies only to ${OWNER[field]} rules, and this rule is ${type}` });
    }
  }
  if (rule.destination_phone === null && !(type === 'sip_refer' && rule.destination_sip_uri !== null)) {
    errors.push({
      field: 'destination_phone', code: 'required',
      message: type === 'sip_refer' ? 'destination_phone is required for a sip_refer rule without destination_sip_uri' : `destination_phone is required for ${type} rules`,
    });
  }
  if (type === 'sip_refer' && rule.sip_trunk_id === null) {
    errors.push({ field: 'sip_trunk_id', code: 'required', message: 'sip_trunk_id is required for sip_refer rules' });
  }
  return { rule, errors };
}

/** The writable fields of a rule as a create body: what clone, promote and import insert again. */
export function transferRuleInput(rule: TransferRule | TransferRuleFields): TransferRuleCreate {
  const input: Record<string, unknown> = {};
  for (const field of FIELDS) input[field] = rule[field];
  return input as TransferRuleCreate;
}

