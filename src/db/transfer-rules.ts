import { listPage, type Db } from './index.ts';
import { newId } from '../ids.ts';
import type { FieldError } from '../validation.ts';
import { mergeTransferRule, type TransferRuleFields } from '../domain/transfer-rules.ts';
import type { NoAnswerAction, TransferRule, TransferRuleCreate, TransferType } from '../schemas/transfer-rules.ts';

interface TransferRuleRow {
  id: string; agent_id: string; name: string; condition: string; destination_phone: string | null;
  destination_label: string | null; enabled: boolean; priority: number; transfer_type: TransferType;
  ring_timeout_seconds: number; on_no_answer: NoAnswerAction; warm_brief: string | null; sip_trunk_id: string | null;
  destination_sip_uri: string | null; created_at: Date; updated_at: Date;
}

const COLUMNS = [
  'id', 'agent_id', 'name', 'condition', 'destination_phone', 'destination_label', 'enabled', 'priority', 'transfer_type',
  'ring_timeout_seconds', 'on_no_answer', 'warm_brief', 'sip_trunk_id', 'destination_sip_uri', 'created_at', 'updated_at',
];

/** The API shape of a rule row; `widget_id` is the agent's id. */
export function toTransferRule(row: TransferRuleRow): TransferRule {
  return {
    id: row.id, widget_id: row.agent_id, name: row.name, condition: row.condition,
    destination_phone: row.destination_phone, destination_label: row.destination_label,
    enabled: row.enabled, priority: row.priority, transfer_type: row.transfer_type,
    ring_timeout_seconds: row.ring_timeout_seconds, on_no_answer: row.on_no_answer, warm_brief: row.warm_brief,
    sip_trunk_id: row.sip_trunk_id, destination_sip_uri: row.destination_sip_uri,
    created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
  };
}

/** The stored fields of a rule, as mergeTransferRule takes them. */
export function transferRuleFields(rule: TransferRule): TransferRuleFields {
  const { id: _id, widget_id: _widget, created_at: _created, updated_at: _updated, ...fields } = rule;
  return fields;
}

/** True when the agent exists in the organization and is not deleted. */
export async function agentIsLive(db: Db, orgId: string, agentId: string): Promise<boolean> {
  const rows = await db`select 1 from agents where id = ${agentId} and org_id = ${orgId} and deleted_at is null`;
  return rows.length > 0;
}

/** Every rule of the agent, highest priority first, then oldest first (clone, promote, export). */
export async function listTransferRules(db: Db, orgId: string, agentId: string): Promise<TransferRule[]> {
  const rows = await db<TransferRuleRow[]>`select ${db(COLUMNS)} from transfer_rules
    where agent_id = ${agentId} and org_id = ${orgId} order by priority desc, created_at, id`;
  return rows.map(toTransferRule);
}

/** One page of the agent's rules, highest priority first, then oldest first. */
export async function listTransferRulesPage(db: Db, orgId: string, agentId: string, q: { limit: number; offset: number }):
  Promise<{ data: TransferRule[]; total: number }> {
  return listPage(db, { ...q, columns: db(COLUMNS), from: db`from transfer_rules where agent_id = ${agentId} and org_id = ${orgId}`, order: db`priority desc, created_at, id` }, toTransferRule);
}

export async function findTransferRule(db: Db, orgId: string, agentId: string, id: string, opts: { forUpdate?: boolean } = {}):
  Promise<TransferRule | null> {
  const lock = opts.forUpdate ? db`for update` : db``;
  const [row] = await db<TransferRuleRow[]>`select ${db(COLUMNS)} from transfer_rules
    where id = ${id} and agent_id = ${agentId} and org_id = ${orgId} ${lock}`;
  return row ? toTransferRule(row) : null;
}

/**
 * Why a write was refused: the rule breaks its type's rules (the field errors), its `sip_trunk_id`
 * names no trunk of the organization, or its agent is gone.
 */
export type TransferRuleRefusal = { invalid: FieldError[] } | 'unknown_sip_trunk' | 'unknown_agent';

/**
 * Inserts a rule from a create body that passed TransferRuleCreateSchema (defaults are applied
 * here). The type rules are checked again; a `sip_trunk_id` outside the organization or an agent
 * removed meanwhile is refused. Whether the agent is live is the caller's check.
 */
export async function insertTransferRuleRow(db: Db, orgId: string, agentId: string, input: TransferRuleCreate): Promise<TransferRule | TransferRuleRefusal> {
  const { rule, errors } = mergeTransferRule(null, input);
  if (errors.length) return { invalid: errors };
  return writeRule(async () => {
    const [inserted] = await db<TransferRuleRow[]>`
      insert into transfer_rules ${db({ id: newId(), org_id: orgId, agent_id: agentId, ...rule })}
      returning ${db(COLUMNS)}`;
    return toTransferRule(inserted!);
  });
}

/** Replaces the stored fields of a rule with a merged, checked `rule`. Null when absent. */
export async function updateTransferRuleRow(db: Db, orgId: string, agentId: string, id: string, rule: TransferRuleFields):
  Promise<TransferRule | TransferRuleRefusal | null> {
  return writeRule(async () => {
    const [updated] = await db<TransferRuleRow[]>`
      update transfer_rules set ${db({ ...rule })}, updated_at = now()
      where id = ${id} and agent_id = ${agentId} and org_id = ${orgId} returning ${db(COLUMNS)}`;
    return updated ? toTransferRule(updated) : null;
  });
}

/** Maps the foreign keys' refusals (a trunk deleted or another organization's, an agent purged) to refusal values. */
async function writeRule<T>(write: () => Promise<T>): Promise<T | TransferRuleRefusal> {
  try {
    return await write();
  } catch (err) {
    const { code, constraint_name: constraint } = err as { code?: string; constraint_name?: string };
    if (code === '23503' && constraint === 'transfer_rules_sip_trunk_fk') return 'unknown_sip_trunk';
    if (code === '23503' && constraint === 'transfer_rules_agent_fk') return 'unknown_agent';
    throw err;
  }
}

export async function deleteTransferRule(db: Db, orgId: string, agentId: string, id: string): Promise<boolean> {
  const rows = await db`delete from transfer_rules where id = ${id} and agent_id = ${agentId} and org_id = ${orgId} returning id`;
  return rows.length > 0;
}

/** Deletes every rule of an agent (promote replaces them); answers how many went. */
export async function deleteTransferRulesOfAgent(db: Db, agentId: string): Promise<number> {
  const rows = await db`delete from transfer_rules where agent_id = ${agentId} returning id`;
  return rows.length;
}

/** True when the agent has at least one enabled transfer rule. */
export async function hasEnabledTransferRules(db: Db, agentId: string): Promise<boolean> {
  const [row] = await db<{ any: boolean }[]>`select exists(select 1 from transfer_rules where agent_id = ${agentId} and enabled) as any`;
  return row?.any ?? false;
}
