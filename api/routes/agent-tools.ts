import { notFound } from '../../src/errors.ts';
import { agentIsLive } from '../../src/db/transfer-rules.ts';
import { deleteAgentTool, findAgentTool, listAgentToolsPage, listToolCallsPage } from '../../src/db/agent-tools.ts';
import { changeTool, checkToolCreate, checkToolPatch, createTool, rotateToolSecret } from '../../src/tools/definitions.ts';
import { IdParams, PageQuery } from '../../src/schemas/common.ts';
import {
  AGENT_TOOL_LIMITS, AgentToolCallListSchema, AgentToolCreateSchema, AgentToolListSchema, AgentToolParams, AgentToolPatchSchema,
  AgentToolSchema, AgentToolWithSecretSchema, ToolEchoBodySchema, ToolEchoSchema,
} from '../../src/schemas/agent-tools.ts';
import type { AppDeps } from '../context.ts';
import { pageReply, route, type RouteFamily } from '../routing.ts';

const BASE = '/api/v1/rest';

async function assertAgent(deps: AppDeps, orgId: string, agentId: string): Promise<void> {
  if (!(await agentIsLive(deps.sql, orgId, agentId))) throw notFound('agent');
}

export const agentToolsFamily: RouteFamily = {
  base: BASE,
  tag: 'Agent tools',
  order: 155,
  description: 'The business\'s own HTTP endpoints the agent calls: offered to the LLM runtime as functions (`call_on: model`), or called once the agent\'s data_schema is complete (`call_on: data_captured`, every runtime). '
    + 'Each call is signed with Standard Webhooks headers (`webhook-id` is the call\'s id and stays the same on a retry: dedupe on it), bounded by `timeout_seconds` and a 64 KB JSON answer, refused for private addresses, '
    + `and recorded in the conversation's \`tool_calls\`. A failing tool never breaks the conversation. At most ${AGENT_TOOL_LIMITS.toolsPerAgent} tools per agent.`,
  routes: [
    route({
      method: 'GET', path: '/agents/:id/tools', operationId: 'list_agent_tools', summary: 'List an agent\'s tools, newest first',
      permissions: ['agents.read'], params: IdParams, query: PageQuery,
      responses: { 200: { description: 'A page of tools (never their secrets)', schema: AgentToolListSchema } },
      async handler({ params, query, principal, deps }) {
        await assertAgent(deps, principal.orgId, params.id);
        return pageReply(await listAgentToolsPage(deps.sql, principal.orgId, params.id, query), query);
      },
    }),
    route({
      method: 'GET', path: '/agents/:id/tools/:toolId', operationId: 'get_agent_tool', summary: 'Get a tool',
      permissions: ['agents.read'], params: AgentToolParams,
      responses: { 200: { description: 'The tool (never its secret)', schema: AgentToolSchema } },
      async handler({ params, principal, deps }) {
        await assertAgent(deps, principal.orgId, params.id);
        const tool = await findAgentTool(deps.sql, principal.orgId, params.id, params.toolId);
        if (!tool) throw notFound('tool');
        return { status: 200, body: tool };
      },
    }),
    route({
      method: 'POST', path: '/agents/:id/tools', operationId: 'create_agent_tool', summary: 'Create a tool',
      description: '`parameters` is compiled as a JSON Schema (400 `validation_error`, code `invalid_schema`, when it does not compile); `url` is checked like a webhook URL (400 `private_network_target`). '
        + `A name the agent already uses is 400 (\`duplicate_name\`). More than ${AGENT_TOOL_LIMITS.toolsPerAgent} tools: 409 \`invalid_state\`. The answer carries the signing \`secret\`, shown only here and on rotate-secret.`,
      permissions: ['agents.write'], params: IdParams, body: AgentToolCreateSchema,
      responses: { 201: { description: 'The new tool with its secret', schema: AgentToolWithSecretSchema }, 409: { description: '`invalid_state`: the agent holds the most tools already' } },
      async handler({ params, body, principal, deps }) {
        await checkToolCreate(deps, body);
        await assertAgent(deps, principal.orgId, params.id);
        const tool = await createTool(deps, principal.orgId, params.id, body);
        return { status: 201, body: tool, headers: { Location: `${BASE}/agents/${params.id}/tools/${tool.id}` } };
      },
    }),
    route({
      method: 'PATCH', path: '/agents/:id/tools/:toolId', operationId: 'update_agent_tool', summary: 'Change a tool',
      permissions: ['agents.write'], params: AgentToolParams, body: AgentToolPatchSchema,
      responses: { 200: { description: 'The updated tool', schema: AgentToolSchema } },
      async handler({ params, body, principal, deps }) {
        await checkToolPatch(deps, body);
        await assertAgent(deps, principal.orgId, params.id);
        const tool = await changeTool(deps.sql, principal.orgId, params.id, params.toolId, body);
        if (!tool) throw notFound('tool');
        return { status: 200, body: tool };
      },
    }),
    route({
      method: 'DELETE', path: '/agents/:id/tools/:toolId', operationId: 'delete_agent_tool', summary: 'Delete a tool and its call log',
      permissions: ['agents.write'], params: AgentToolParams,
      responses: { 204: { description: 'Deleted' } },
      async handler({ params, principal, deps }) {
        await assertAgent(deps, principal.orgId, params.id);
        if (!(await deleteAgentTool(deps.sql, principal.orgId, params.id, params.toolId))) throw notFound('tool');
        return { status: 204 };
      },
    }),
    route({
      method: 'POST', path: '/agents/:id/tools/:toolId/rotate-secret', operationId: 'rotate_agent_tool_secret', summary: 'Replace a tool\'s signing secret',
      description: 'The new secret signs every call from now on; the previous one also signs (a second `v1,` signature) for 24 hours, so the tool can switch over.',
      permissions: ['agents.write'], params: AgentToolParams,
      responses: { 200: { description: 'The tool with its new secret', schema: AgentToolWithSecretSchema } },
      async handler({ params, principal, deps }) {
        await assertAgent(deps, principal.orgId, params.id);
        const tool = await rotateToolSecret(deps, principal.orgId, params.id, params.toolId);
        if (!tool) throw notFound('tool');
        return { status: 200, body: tool };
      },
    }),
    route({
      method: 'GET', path: '/agents/:id/tools/:toolId/calls', operationId: 'list_agent_tool_calls', summary: 'List a tool\'s recent calls, newest first',
      description: 'Time, conversation, status and duration of each call; the arguments are kept only in the conversation\'s own `tool_calls`.',
      permissions: ['agents.read'], params: AgentToolParams, query: PageQuery,
      responses: { 200: { description: 'A page of calls', schema: AgentToolCallListSchema } },
      async handler({ params, query, principal, deps }) {
        await assertAgent(deps, principal.orgId, params.id);
        const tool = await findAgentTool(deps.sql, principal.orgId, params.id, params.toolId);
        if (!tool) throw notFound('tool');
        return pageReply(await listToolCallsPage(deps.sql, principal.orgId, tool.id, query), query);
      },
    }),
  ],
};

/** The echo endpoint `sandbox` tool calls go to: it answers what it got, and needs no token. */
export const toolSandboxFamily: RouteFamily = {
  base: '/api/v1/public',
  public: true,
  tag: 'Tool sandbox',
  order: 156,
  description: 'Where an agent\'s tool calls go in a conversation whose `tool_mode` is `sandbox` (simulations): the call is answered with what it carried, and nothing else happens.',
  routes: [
    route({
      method: 'POST', path: '/tool-sandbox/echo', operationId: 'echo_tool_call', summary: 'Echo a sandboxed tool call',
      description: 'A `sandbox` call is POSTed here, signed as a live one, as `{tool, arguments}` whatever the tool\'s method; the answer is what it carried.',
      permissions: [], body: ToolEchoBodySchema,
      responses: { 200: { description: 'The call as it arrived', schema: ToolEchoSchema } },
      async handler({ body, ctx }) {
        return { status: 200, body: { sandbox: true as const, tool: body.tool ?? null, arguments: body.arguments ?? null, webhook_id: ctx.get('webhook-id') || null } };
      },
    }),
  ],
};
