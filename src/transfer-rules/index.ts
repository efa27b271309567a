import type { Db } from '../db/index.ts';
import { fieldError, notFound, validationError, type AppError } from '../errors.ts';
import { findSipTrunk } from '../db/sip-trunks.ts';
import {
  agentIsLive, deleteTransferRule, findTransferRule, insertTransferRuleRow, listTransferRulesPage, transferRuleFields, updateTransferRuleRow,
  type TransferRuleRefusal,
} from '../db/transfer-rules.ts';
import type { FamilyDeps } from '../deps.ts';
import { checkTransferRuleFields, mergeTransferRule, type TransferRuleFields } from '../domain/transfer-rules.ts';
import type { TransferRule, TransferRuleCreate, TransferRulePatch } from '../schemas/transfer-rules.ts';

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

/**
 * The transfer rules family's use cases: an agent's rules, each read and change first checking the
 * agent is the organization's and not deleted (404 `agent`), then the rule (404 `transfer rule`).
 */
type Deps = Pick<FamilyDeps, 'sql'>;

/** A `sip_trunk_id` in a body must name a trunk of the caller's organization: 400 on the field otherwise. */
async function assertSipTrunk(db: Db, orgId: string, id: string | null | undefined): Promise<void> {
  if (typeof id === 'string' && !(await findSipTrunk(db, orgId, id))) {
    throw fieldError('sip_trunk_id', 'unknown_sip_trunk', 'sip_trunk_id names no SIP trunk of this organization');
  }
}

async function assertAgent(db: Db, orgId: string, agentId: string): Promise<void> {
  if (!(await agentIsLive(db, orgId, agentId))) throw notFound('agent');
}

/** A page of an agent's rules, highest priority first. */
export async function listTransferRules(deps: Deps, orgId: string, agentId: string, page: { limit: number; offset: number }) {
  await assertAgent(deps.sql, orgId, agentId);
  return listTransferRulesPage(deps.sql, orgId, agentId, page);
}

/** One rule of an agent. */
export async function getTransferRule(deps: Deps, orgId: string, agentId: string, ruleId: string): Promise<TransferRule> {
  await assertAgent(deps.sql, orgId, agentId);
  const rule = await findTransferRule(deps.sql, orgId, agentId, ruleId);
  if (!rule) throw notFound('transfer rule');
  return rule;
}

/** Creates a rule from a create body: the type rules (400), its trunk (400 on `sip_trunk_id`), then the agent (404). */
export async function createTransferRule(deps: Deps, orgId: string, agentId: string, body: TransferRuleCreate): Promise<TransferRule> {
  const { errors } = mergeTransferRule(null, body);
  if (errors.length) throw validationError(errors);
  await assertSipTrunk(deps.sql, orgId, body.sip_trunk_id);
  await assertAgent(deps.sql, orgId, agentId);
  return insertTransferRule(deps.sql, orgId, agentId, body);
}

/**
 * Changes a rule: what can be judged without the rule is judged first (400 before 404); then, in one
 * transaction with the rule locked, the patch is merged into it and the merged rule checked as on create.
 */
export async function patchTransferRule(deps: Deps, orgId: string, agentId: string, ruleId: string, body: TransferRulePatch): Promise<TransferRule> {
  const fieldErrors = checkTransferRuleFields(body);
  if (fieldErrors.length) throw validationError(fieldErrors);
  await assertSipTrunk(deps.sql, orgId, body.sip_trunk_id);
  const rule = await deps.sql.begin(async (tx) => {
    await assertAgent(tx, orgId, agentId);
    const current = await findTransferRule(tx, orgId, agentId, ruleId, { forUpdate: true });
    if (!current) throw notFound('transfer rule');
    if (Object.keys(body).length === 0) return current;
    const merged = mergeTransferRule(transferRuleFields(current), body);
    if (merged.errors.length) throw validationError(merged.errors);
    return updateTransferRule(tx, orgId, agentId, ruleId, merged.rule);
  });
  if (!rule) throw notFound('transfer rule');
  return rule;
}

/** Deletes a rule. */
export async function removeTransferRule(deps: Deps, orgId: string, agentId: string, ruleId: string): Promise<void> {
  await assertAgent(deps.sql, orgId, agentId);
  if (!(await deleteTransferRule(deps.sql, orgId, agentId, ruleId))) throw notFound('transfer rule');
}
