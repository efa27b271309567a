import { fieldError, notFound, validationError } from '../../src/errors.ts';
import { normalizePatch } from '../../src/domain/agent-config.ts';
import { findAgentByPublicKey, listAgentsAfter, toWidget } from '../../src/db/agents.ts';
import { recrawlAgentSite } from '../../src/knowledge/sites.ts';
import { changeAgent, createAgent, deleteAgent } from '../../src/agents/changes.ts';
import type { Principal } from '../../src/auth/authenticator.ts';
import type { AgentPatch } from '../../src/schemas/agents.ts';
import { Uuid } from '../../src/schemas/common.ts';
import {
  WidgetCreateSchema, WidgetListQuery, WidgetListSchema, WidgetParams, WidgetPatchSchema, WidgetSchema,
} from '../../src/schemas/widgets.ts';
import type { AppDeps } from '../context.ts';
import { route, type RouteFamily } from '../routing.ts';

const BASE = '/api/v1';
const UUID = new RegExp(Uuid.pattern!);

/** The cursor is the (created_at, id) of the last widget of a page, opaque to clients. */
function encodeCursor(createdAt: string, id: string): string {
  return Buffer.from(JSON.stringify([createdAt, id])).toString('base64url');
}

function decodeCursor(cursor: string): { createdAt: string; id: string } {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string'
      && !Number.isNaN(Date.parse(value[0])) && UUID.test(value[1])) {
      return { createdAt: value[0], id: value[1] };
    }
  } catch { /* falls through to the error */ }
  throw fieldError('cursor', 'invalid_cursor', 'cursor must be a next_cursor value returned by this endpoint');
}

async function agentOfWidget(deps: AppDeps, principal: Principal, widgetId: string) {
  const agent = await findAgentByPublicKey(deps.sql, principal.orgId, widgetId);
  if (!agent) throw notFound('widget');
  return agent;
}

/** Applies a change through the agent (one entity) and answers the widget view. */
async function changeWidget(deps: AppDeps, principal: Principal, widgetId: string, patch: AgentPatch) {
  // 400 before 404: the widget fields need no lookup to be checked.
  const { errors } = normalizePatch(patch);
  if (errors.length) throw validationError(errors);
  const agent = await agentOfWidget(deps, principal, widgetId);
  const changed = await changeAgent(deps, principal.orgId, agent.id, patch);
  if (!changed) throw notFound('widget');
  return { status: 200, body: toWidget(changed) };
}

export const widgetsFamily: RouteFamily = {
  base: BASE,
  order: 20,
  tag: 'Widgets',
  description: 'Widgets are agents seen from the web: the same entity as `/rest/agents`, addressed by its `wgt_` public key.',
  routes: [
    route({
      method: 'GET', path: '/widgets', operationId: 'list_widgets', summary: 'List widgets, newest first, by cursor',
      permissions: ['agents.read'], query: WidgetListQuery,
      responses: { 200: { description: 'A page of widgets', schema: WidgetListSchema } },
      async handler({ query, principal, deps }) {
        const after = query.cursor ? decodeCursor(query.cursor) : null;
        const rows = await listAgentsAfter(deps.sql, principal.orgId, { after, limit: query.limit + 1 });
        const page = rows.slice(0, query.limit);
        const last = page.at(-1);
        const next = rows.length > query.limit && last ? encodeCursor(last.created_at, last.id) : null;
        return { status: 200, body: { data: page.map(toWidget), next_cursor: next } };
      },
    }),
    route({
      method: 'GET', path: '/widgets/:id', operationId: 'get_widget', summary: 'Get a widget',
      permissions: ['agents.read'], params: WidgetParams,
      responses: { 200: { description: 'The widget', schema: WidgetSchema } },
      async handler({ params, principal, deps }) {
        return { status: 200, body: toWidget(await agentOfWidget(deps, principal, params.id)) };
      },
    }),
    route({
      method: 'POST', path: '/widgets', operationId: 'create_widget', summary: 'Create a widget from a website',
      description: 'Answers at once with the widget in `draft`; it learns the site in the background and becomes `active` (event widget.ready).',
      permissions: ['agents.write'], body: WidgetCreateSchema,
      responses: { 201: { description: 'The new widget', schema: WidgetSchema } },
      async handler({ body, principal, deps }) {
        const agent = await createAgent(deps, principal.orgId, { name: body.name, site_url: body.site_url, createdVia: 'widgets' });
        return { status: 201, body: toWidget(agent), headers: { Location: `${BASE}/widgets/${agent.public_key}` } };
      },
    }),
    route({
      method: 'PATCH', path: '/widgets/:id', operationId: 'update_widget', summary: 'Update a widget',
      description: 'Any subset of the widget fields; takes effect on new conversations at once. The same change shows through `/rest/agents/:agent_id`.',
      permissions: ['agents.write'], params: WidgetParams, body: WidgetPatchSchema,
      responses: { 200: { description: 'The updated widget', schema: WidgetSchema } },
      async handler({ params, body, principal, deps }) {
        return changeWidget(deps, principal, params.id, body);
      },
    }),
    route({
      method: 'POST', path: '/widgets/:id/pause', operationId: 'pause_widget', summary: 'Pause a widget',
      description: 'The widget still loads on the site but refuses to start conversations. Emits widget.paused when the status changes.',
      permissions: ['agents.write'], params: WidgetParams,
      responses: { 200: { description: 'The paused widget', schema: WidgetSchema } },
      handler: ({ params, principal, deps }) => changeWidget(deps, principal, params.id, { status: 'paused' }),
    }),
    route({
      method: 'POST', path: '/widgets/:id/resume', operationId: 'resume_widget', summary: 'Resume a widget',
      description: 'The widget takes conversations again and is `active`. Emits widget.activated when the status changes.',
      permissions: ['agents.write'], params: WidgetParams,
      responses: { 200: { description: 'The active widget', schema: WidgetSchema } },
      handler: ({ params, principal, deps }) => changeWidget(deps, principal, params.id, { status: 'active' }),
    }),
    route({
      method: 'DELETE', path: '/widgets/:id', operationId: 'delete_widget', summary: 'Delete a widget and everything that depends on it',
      description: 'Removes the widget (the agent), its crawled pages, conversation history, domain allowlist and tool definitions; usage records are kept. Irreversible. 409 `active_campaign` while the agent has a running or paused campaign (cancel it first); nothing changes.',
      permissions: ['agents.write'], params: WidgetParams,
      responses: { 204: { description: 'Deleted' } },
      async handler({ params, principal, deps }) {
        const agent = await agentOfWidget(deps, principal, params.id);
        if (!(await deleteAgent(deps, principal.orgId, agent.id))) throw notFound('widget');
        return { status: 204 };
      },
    }),
    route({
      method: 'POST', path: '/widgets/:id/recrawl', operationId: 'recrawl_widget', summary: 'Re-run the crawler on the widget\'s website',
      description: 'The widget stays as it is (an active one stays active) and answers from its current index until the new one is built, typically 30 to 60 seconds. 409 `invalid_state` when it has no website.',
      permissions: ['agents.write'], params: WidgetParams,
      responses: { 202: { description: 'The widget, its re-crawl queued', schema: WidgetSchema } },
      async handler({ params, principal, deps }) {
        const agent = await agentOfWidget(deps, principal, params.id);
        await recrawlAgentSite(deps, principal.orgId, agent);
        return { status: 202, body: toWidget(agent) };
      },
    }),
  ],
};
