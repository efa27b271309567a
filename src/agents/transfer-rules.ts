import type { Db } from '../db/index.ts';
import { fieldError, notFound, validationError, type AppError } from '../errors.ts';
import {
  insertTransferRuleRow, updateTransferRuleRow, type TransferRuleRefusal,
} from '../db/transfer-rules.ts';
import type { TransferRuleFields } from '../domain/transfer-rules.ts';
import type { TransferRule, TransferRuleCreate } from '../schemas/transfer-rules.ts';

/** Writing an agent's transfer rules: the repository's refusals become the API's errors. */

/** The API error of a refused rule write. */
function refusalError(refusal: TransferRuleRefusal): AppError {
  if (refusal === 'unknown_sip_trunk') return fieldError('sip_trunk_id', 'unknown_sip_trunk', 'sip_trunk_id names no SIP trunk of this organization');
  if (refusal === 'unknown_agent') return notFound('agent');
  return validationError(refusal.invalid);
}

const isRefusal = (value: unknown): value is TransferRuleRefusal =>
  value === 'unknown_sip_trunk' || value === 'unknown_agent' || (typeof value === 'object' && value !== null && 'invalid' in value);

/**
 * Inserts a rule from a create body that passed TransferRuleCreateSchema (defaults applied). The
 * type rules are checked again (400 `validation_error`); a `sip_trunk_id` outside the organization
 * is 400 on that field, and an agent removed meanwhile 404. Whether the agent is live is the caller's check.
 */
export async function insertTransferRule(db: Db, orgId: string, agentId: string, input: TransferRuleCreate): Promise<TransferRule> {
  const result = await insertTransferRuleRow(db, orgId, agentId, input);
  if (isRefusal(result)) throw refusalError(result);
  return result;
}

/** Replaces the stored fields of a rule with a merged, checked `rule`; null when absent. Refusals as on insert. */
export async function updateTransferRule(db: Db, orgId: string, agentId: string, id: string, rule: TransferRuleFields): Promise<TransferRule | null> {
  const result = await updateTransferRuleRow(db, orgId, agentId, id, rule);
  if (isRefusal(result)) throw refusalError(result);
  return result;
}
