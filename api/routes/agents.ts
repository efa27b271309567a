import { AppError, notFound } from '../../src/errors.ts';
import { discardDraft, findAgent, findDraft, listAgents } from '../../src/db/agents.ts';
import { publicSite } from '../../src/db/sites.ts';
import { connectAgentSite } from '../../src/knowledge/sites.ts';
import { AgentSiteSchema, SiteSchema } from '../../src/schemas/sites.ts';
import { changeAgent, createAgent, deleteAgent, publishAgentDraft, stageAgentDraft } from '../../src/agents/changes.ts';
import { IdParams } from '../../src/schemas/common.ts';
import {
  AgentCreateSchema, AgentDeleteQuery, AgentDraftSchema, AgentListQuery, AgentListSchema, AgentPatchSchema, AgentSchema,
} from '../../src/schemas/agents.ts';
import { cloneAgent, exportAgent, importAgent, promoteAgent } from '../../src/agents/portability.ts';
import { AgentCloneSchema, AgentManifestSchema, AgentPromoteSchema } from '../../src/schemas/agent-manifest.ts';
import { pageReply, route, type RouteFamily } from '../routing.ts';

const BASE = '/api/v1/rest';

export const agentsFamily: RouteFamily = {
  base: BASE,
  order: 10,
  tag: 'Agents',
  description: 'Create, configure, pause or resume and delete agents.',
  routes: [
    route({
      method: 'GET', path: '/agents', operationId: 'list_agents', summary: 'List agents, newest first',
      permissions: ['agents.read'], query: AgentListQuery,
      responses: { 200: { description: 'A page of agents', schema: AgentListSchema } },
      async handler({ query, principal, deps }) {
        const page = await listAgents(deps.sql, principal.orgId, query);
        return pageReply(page, query);
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
      description: 'Answers at once. Without `site_url` the agent starts `active`; with it, `draft` while its website is crawled (workflow `crawl:<site id>`), then `active` with the event widget.crawl_completed.',
      permissions: ['agents.write'], body: AgentCreateSchema,
      responses: { 201: { description: 'The new agent', schema: AgentSchema } },
      async handler({ body, principal, deps }) {
        const agent = await createAgent(deps, principal.orgId, { ...body, createdVia: 'agents' });
        return { status: 201, body: agent, headers: { Location: `${BASE}/agents/${agent.id}` } };
      },
    }),
    route({
      method: 'PATCH', path: '/agents/:id', operationId: 'update_agent', summary: 'Update an agent',
      description: 'Any subset of the writable fields; `{}` changes nothing. Applies to the live configuration at once and removes the same keys from a pending draft. `localized_copy` merges per language (null removes one), `phone_settings` and `theme` merge per key, `domains` replaces the set. The MCP tool update_agent takes this schema.',
      permissions: ['agents.write'], params: IdParams, body: AgentPatchSchema,
      responses: { 200: { description: 'The updated agent', schema: AgentSchema } },
      async handler({ params, body, principal, deps }) {
        const agent = await changeAgent(deps, principal.orgId, params.id, body);
        if (!agent) throw notFound('agent');
        return { status: 200, body: agent };
      },
    }),
    route({
      method: 'DELETE', path: '/agents/:id', operationId: 'delete_agent', summary: 'Delete an agent and everything that depends on it',
      description: 'The agent answers 404 at once; a durable workflow (`agent-purge:<id>`) deletes its conversations, pages and analytics in batches. Usage records are kept. With `delete_kbs=true` (needs knowledge.write too) the knowledge bases no other agent uses are deleted; shared ones never. Irreversible. 409 `active_campaign` while the agent has a running or paused campaign (cancel it first); nothing changes.',
      permissions: ['agents.write'], params: IdParams, query: AgentDeleteQuery,
      extraPermissions: ({ query }) => (query.delete_kbs ? ['knowledge.write'] : []),
      responses: { 204: { description: 'Deleted' } },
      async handler({ params, query, principal, deps }) {
        if (!(await deleteAgent(deps, principal.orgId, params.id, { deleteKbs: query.delete_kbs === true }))) throw notFound('agent');
        return { status: 204 };
      },
    }),
    route({
      method: 'PUT', path: '/agents/:id/draft', operationId: 'stage_agent_draft', summary: 'Stage changes in the agent\'s draft',
      description: 'Takes any PATCH fields and stages them on top of the pending draft (later values win; merged fields combine per language or key) without touching the live configuration. Publish applies them.',
      permissions: ['agents.write'], params: IdParams, body: AgentPatchSchema,
      responses: { 200: { description: 'The pending draft', schema: AgentDraftSchema } },
      async handler({ params, body, principal, deps }) {
        const draft = await stageAgentDraft(deps, principal.orgId, params.id, body);
        if (!draft) throw notFound('agent');
        return { status: 200, body: draft };
      },
    }),
    route({
      method: 'GET', path: '/agents/:id/draft', operationId: 'get_agent_draft', summary: 'Read the pending draft',
      permissions: ['agents.read'], params: IdParams,
      responses: { 200: { description: 'The pending draft', schema: AgentDraftSchema } },
      async handler({ params, principal, deps }) {
        const found = await findDraft(deps.sql, principal.orgId, params.id);
        if (!found) throw notFound('agent');
        if (!found.draft) throw new AppError(404, 'not_found', 'this agent has no pending draft');
        return { status: 200, body: found.draft };
      },
    }),
    route({
      method: 'POST', path: '/agents/:id/draft', operationId: 'publish_agent_draft', summary: 'Publish the pending draft',
      description: 'Applies the staged changes to the live configuration atomically and removes the draft. 404 when there is none.',
      permissions: ['agents.write'], params: IdParams,
      responses: { 200: { description: 'The agent with the published configuration', schema: AgentSchema } },
      async handler({ params, principal, deps }) {
        const agent = await publishAgentDraft(deps, principal.orgId, params.id);
        if (!agent) throw notFound('agent');
        return { status: 200, body: agent };
      },
    }),
    route({
      method: 'DELETE', path: '/agents/:id/draft', operationId: 'discard_agent_draft', summary: 'Discard the pending draft',
      permissions: ['agents.write'], params: IdParams,
      responses: { 204: { description: 'Discarded' } },
      async handler({ params, principal, deps }) {
        if (await discardDraft(deps.sql, principal.orgId, params.id)) return { status: 204 };
        if (!(await findAgent(deps.sql, principal.orgId, params.id))) throw notFound('agent');
        throw new AppError(404, 'not_found', 'this agent has no pending draft');
      },
    }),
    route({
      method: 'POST', path: '/agents/:id/clone', operationId: 'clone_agent', summary: 'Duplicate an agent',
      description: 'A new agent (new id and public_key) with the same configuration and transfer rules; not the pending draft nor email inboxes. A paused agent\'s clone is paused, any other is active.',
      permissions: ['agents.write'], params: IdParams, body: AgentCloneSchema,
      responses: { 201: { description: 'The new agent', schema: AgentSchema } },
      async handler({ params, body, principal, deps }) {
        const agent = await cloneAgent(deps.sql, deps.secrets, principal.orgId, params.id, body);
        if (!agent) throw notFound('agent');
        return { status: 201, body: agent, headers: { Location: `${BASE}/agents/${agent.id}` } };
      },
    }),
    route({
      method: 'POST', path: '/agents/:id/promote', operationId: 'promote_agent', summary: 'Copy this agent\'s configuration onto a sibling',
      description: 'The target (`target_agent_id`, same organization) takes this agent\'s persona, voice, configuration and transfer rules; its identity, public_key, status and domains stay.',
      permissions: ['agents.write'], params: IdParams, body: AgentPromoteSchema,
      responses: { 200: { description: 'The target agent after promotion', schema: AgentSchema } },
      async handler({ params, body, principal, deps }) {
        const agent = await promoteAgent(deps.sql, principal.orgId, params.id, body.target_agent_id);
        if (!agent) throw notFound('agent');
        return { status: 200, body: agent };
      },
    }),
    route({
      method: 'GET', path: '/agents/:id/export', operationId: 'export_agent', summary: 'Export an agent as a portable manifest',
      description: 'Configuration, transfer rules (a SIP trunk by host and username), the voice profile inline and site URLs; never an id of this organization\'s other resources, never a secret.',
      permissions: ['agents.read'], params: IdParams,
      responses: { 200: { description: 'The manifest', schema: AgentManifestSchema } },
      async handler({ params, principal, deps }) {
        const manifest = await exportAgent(deps.sql, principal.orgId, params.id);
        if (!manifest) throw notFound('agent');
        return { status: 200, body: manifest };
      },
    }),
    route({
      method: 'POST', path: '/agents/import', operationId: 'import_agent', summary: 'Import an agent from a manifest',
      description: 'Creates the manifest\'s agent in the caller\'s organization: the voice profile is created from its inline copy, each SIP trunk is found by host and username. A manifest of another version, or with a reference that cannot be resolved here, is 400 naming it, and nothing is created. With a site the agent starts `draft` and its website is crawled, exactly as on create; every site URL is checked like `site_url` on create.',
      permissions: ['agents.write'], body: AgentManifestSchema,
      extraPermissions: ({ body }) => (body.voice_profile ? ['voice_profiles.write'] : []),
      responses: { 201: { description: 'The new agent', schema: AgentSchema } },
      async handler({ body, principal, deps }) {
        const agent = await importAgent(deps, principal.orgId, body);
        return { status: 201, body: agent, headers: { Location: `${BASE}/agents/${agent.id}` } };
      },
    }),
    route({
      method: 'POST', path: '/agents/:id/site', operationId: 'connect_agent_site', summary: 'Connect or re-point the agent\'s website',
      description: 'Creates the agent\'s site, or points it at another URL (a crawl of the old URL is replaced), and crawls it. The agent answers from its current index until the new one is complete.',
      permissions: ['agents.write'], params: IdParams, body: AgentSiteSchema,
      responses: { 202: { description: 'The site, its crawl queued', schema: SiteSchema } },
      async handler({ params, body, principal, deps }) {
        const site = await connectAgentSite(deps, principal.orgId, params.id, body);
        if (!site) throw notFound('agent');
        return { status: 202, body: publicSite(site) };
      },
    }),
  ],
};
