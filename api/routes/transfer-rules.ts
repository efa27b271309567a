import {
  createTransferRule, getTransferRule, listTransferRules, patchTransferRule, removeTransferRule,
} from '../../src/transfer-rules/index.ts';
import { IdParams, PageQuery } from '../../src/schemas/common.ts';
import {
  TransferRuleCreateSchema, TransferRuleListSchema, TransferRuleParams, TransferRulePatchSchema, TransferRuleSchema,
} from '../../src/schemas/transfer-rules.ts';
import { pageReply, route, type RouteFamily } from '../routing.ts';

const BASE = '/api/v1/rest';

export const transferRulesFamily: RouteFamily = {
  base: BASE,
  order: 30,
  tag: 'Transfer rules',
  description: 'Per-agent rules that bridge a caller to a human: cold, warm or SIP hand-off.',
  routes: [
    route({
      method: 'GET', path: '/agents/:id/transfer-rules', operationId: 'list_transfer_rules', summary: 'List an agent\'s transfer rules, highest priority first',
      description: 'Ordered by priority, highest first; equal priorities oldest first.',
      permissions: ['agents.read'], params: IdParams, query: PageQuery,
      responses: { 200: { description: 'A page of rules', schema: TransferRuleListSchema } },
      async handler({ params, query, principal, deps }) {
        return pageReply(await listTransferRules(deps, principal.orgId, params.id, query), query);
      },
    }),
    route({
      method: 'GET', path: '/agents/:id/transfer-rules/:ruleId', operationId: 'get_transfer_rule', summary: 'Get a transfer rule',
      permissions: ['agents.read'], params: TransferRuleParams,
      responses: { 200: { description: 'The rule', schema: TransferRuleSchema } },
      async handler({ params, principal, deps }) {
        return { status: 200, body: await getTransferRule(deps, principal.orgId, params.id, params.ruleId) };
      },
    }),
    route({
      method: 'POST', path: '/agents/:id/transfer-rules', operationId: 'create_transfer_rule', summary: 'Create a transfer rule',
      description: 'Defaults: transfer_type `cold`, enabled true, priority 0, ring_timeout_seconds 30. destination_phone is required for `cold` and `warm`, and for `sip_refer` unless destination_sip_uri is given; `sip_refer` requires sip_trunk_id (a trunk of this organization). warm_brief is only for `warm`, sip_trunk_id and destination_sip_uri only for `sip_refer` (400 `not_allowed_for_transfer_type` otherwise).',
      permissions: ['agents.write'], params: IdParams, body: TransferRuleCreateSchema,
      responses: { 201: { description: 'The new rule', schema: TransferRuleSchema } },
      async handler({ params, body, principal, deps }) {
        const rule = await createTransferRule(deps, principal.orgId, params.id, body);
        return { status: 201, body: rule, headers: { Location: `${BASE}/agents/${params.id}/transfer-rules/${rule.id}` } };
      },
    }),
    route({
      method: 'PATCH', path: '/agents/:id/transfer-rules/:ruleId', operationId: 'update_transfer_rule', summary: 'Update a transfer rule',
      description: 'Partial: only sent fields change, and unsent type-specific fields are kept (changing destination_sip_uri on a `sip_refer` rule does not need sip_trunk_id again). A changed transfer_type first clears the fields of the old type (warm_brief of `warm`; sip_trunk_id and destination_sip_uri of `sip_refer`), then the merged rule is checked as on create. Null clears a nullable field.',
      permissions: ['agents.write'], params: TransferRuleParams, body: TransferRulePatchSchema,
      responses: { 200: { description: 'The updated rule', schema: TransferRuleSchema } },
      async handler({ params, body, principal, deps }) {
        return { status: 200, body: await patchTransferRule(deps, principal.orgId, params.id, params.ruleId, body) };
      },
    }),
    route({
      method: 'DELETE', path: '/agents/:id/transfer-rules/:ruleId', operationId: 'delete_transfer_rule', summary: 'Delete a transfer rule',
      permissions: ['agents.write'], params: TransferRuleParams,
      responses: { 204: { description: 'Deleted' } },
      async handler({ params, principal, deps }) {
        await removeTransferRule(deps, principal.orgId, params.id, params.ruleId);
        return { status: 204 };
      },
    }),
  ],
};
