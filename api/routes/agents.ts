import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/client';
import { AppError, notFound } from '../../src/errors.ts';
import { findAgent, insertAgent, listAgents, markAgentDeleted, toWidget, updateAgentBasics } from '../../src/db/agents.ts';
import { dispatchAfterCommit, emitEvent } from '../../src/events/emit.ts';
import { statusChangeEvent } from '../../src/events/types.ts';
import { IdParams } from '../../src/schemas/common.ts';
import {
  AgentCreateSchema, AgentDeleteQuery, AgentListQuery, AgentListSchema, AgentPatchSchema, AgentSchema,
} from '../../src/schemas/agents.ts';
import { SEARCH_ATTRIBUTES, taskQueues, workflowIds } from '../../src/temporal/index.ts';
import type { purgeAgent } from '../../workflows/purge-agent.ts';
import type { AppDeps } from '../context.ts';
import { route, type RouteFamily } from '../routing.ts';

const BASE = '/api/v1/rest';

export const agentsFamily: RouteFamily = {
  base: BASE,
  tag: 'Agents',
  description: 'Create, configure, pause or resume and delete agents.',
  routes: [
    route({
      method: 'GET', path: '/agents', operationId: 'list_agents', summary: 'List agents, newest first',
      permissions: ['agents.read'], query: AgentListQuery,
      responses: { 200: { description: 'A page of agents', schema: AgentListSchema } },
      async handler({ query, principal, deps }) {
        const page = await listAgents(deps.sql, principal.orgId, query);
        return { status: 200, body: { ...page, limit: query.limit, offset: query.offset } };
      },
    }),
    route({
      method: 'GET', path: '/agents/:id', operationId: 'get_agent', summary: 'Get an agent',
      permissions: ['agents.read'], params: IdParams,
      responses: { 200: { description: 'The agent', schema: AgentSchema } },
      async handler({ params, principal, deps }) {
        const agent = await findAgent(deps.sql, principal.orgId, params.id);
        if (!agent) throw notFound('agent');
        return { status: 200, body: agent };
      },
    }),
    route({
      method: 'POST', path: '/agents', operationId: 'create_agent', summary: 'Create an agent',
      description: 'Without `site_url` the agent starts `active`; with it, `draft` while its website is crawled.',
      permissions: ['agents.write'], body: AgentCreateSchema,
      responses: { 201: { description: 'The new agent', schema: AgentSchema } },
      async handler({ body, principal, deps }) {
        const agent = await insertAgent(deps.sql, principal.orgId, body);
        return { status: 201, body: agent, headers: { Location: `${BASE}/agents/${agent.id}` } };
      },
    }),
    route({
      method: 'PATCH', path: '/agents/:id', operationId: 'update_agent', summary: 'Update an agent',
      description: 'Any subset of the writable fields; `{}` changes nothing. Applies to the live configuration at once.',
      permissions: ['agents.write'], params: IdParams, body: AgentPatchSchema,
      responses: { 200: { description: 'The updated agent', schema: AgentSchema } },
      async handler({ params, body, principal, deps }) {
        // The status event is written in the update's transaction (it exists if and only if the
        // change commits) and dispatched after commit.
        const result = await deps.sql.begin(async (tx) => {
          const change = await updateAgentBasics(tx, principal.orgId, params.id, body);
          if (!change) return null;
          const type = statusChangeEvent(change.before.status, change.after.status);
          const eventIds = type ? [await emitEvent(tx, { orgId: principal.orgId, type, data: { agent: change.after, widget: toWidget(change.after) } })] : [];
          return { ...change, eventIds };
        });
        if (!result) throw notFound('agent');
        dispatchAfterCommit(deps, result.eventIds);
        return { status: 200, body: result.after };
      },
    }),
    route({
      method: 'DELETE', path: '/agents/:id', operationId: 'delete_agent', summary: 'Delete an agent and everything that depends on it',
      description: 'The agent answers 404 at once; a durable workflow (`agent-purge:<id>`) deletes its conversations, pages and analytics in batches. Irreversible.',
      permissions: ['agents.write'], params: IdParams, query: AgentDeleteQuery,
      extraPermissions: ({ query }) => (query.delete_kbs ? ['knowledge.write'] : []),
      responses: { 204: { description: 'Deleted' } },
      async handler({ params, principal, deps }) {
        // Hide and start the purge in one transaction: if Temporal cannot take the workflow, nothing changes.
        await deps.sql.begin(async (tx) => {
          if (!(await markAgentDeleted(tx, principal.orgId, params.id))) throw notFound('agent');
          await startPurge(deps, principal.orgId, params.id);
        });
        return { status: 204 };
      },
    }),
  ],
};

async function startPurge(deps: AppDeps, orgId: string, agentId: string): Promise<void> {
  try {
    await deps.temporal.workflow.start<typeof purgeAgent>('purgeAgent', {
      workflowId: workflowIds.agentPurge(agentId),
      taskQueue: taskQueues(deps.config).maintenance,
      args: [{ orgId, agentId, batchSize: deps.config.PURGE_BATCH_SIZE }],
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      typedSearchAttributes: [
        { key: SEARCH_ATTRIBUTES.OrganizationId, value: orgId },
        { key: SEARCH_ATTRIBUTES.AgentId, value: agentId },
      ],
    });
  } catch (err) {
    deps.log.error({ err, agent_id: agentId }, 'could not start the purge workflow');
    throw new AppError(503, 'service_unavailable', 'the workflow service is unavailable; the agent was not deleted, try again', {
      headers: { 'Retry-After': '5' },
    });
  }
}
