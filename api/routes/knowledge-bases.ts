import { notFound } from '../../src/errors.ts';
import {
  detachKnowledgeBase, findKnowledgeBase, insertKnowledgeBase, listKnowledgeBases,
  renameKnowledgeBase,
} from '../../src/db/knowledge-bases.ts';
import { publicSite } from '../../src/db/sites.ts';
import { addKnowledgeBaseSite } from '../../src/knowledge/sites.ts';
import { attachAgent, removeKnowledgeBase } from '../../src/knowledge/knowledge-bases.ts';
import { IdParams, PageQuery, Uuid } from '../../src/schemas/common.ts';
import {
  KnowledgeBaseAttachSchema, KnowledgeBaseCreateSchema, KnowledgeBaseListSchema, KnowledgeBasePatchSchema, KnowledgeBaseSchema,
  KnowledgeBaseSiteSchema, SiteSchema,
} from '../../src/schemas/sites.ts';
import { Type } from '@sinclair/typebox';
import { pageReply, route, type RouteFamily } from '../routing.ts';

const BASE = '/api/v1/rest';
const AgentLinkParams = Type.Object({ id: Uuid, agentId: Uuid }, { additionalProperties: false });

export const knowledgeBasesFamily: RouteFamily = {
  base: BASE,
  order: 100,
  tag: 'Knowledge bases',
  description: 'Standalone knowledge sources (sites with `kb_id`) that several agents can share. Read with `sites.read`, change with `knowledge.write`.',
  routes: [
    route({
      method: 'GET', path: '/knowledge-bases', operationId: 'list_knowledge_bases', summary: 'List knowledge bases, newest first',
      permissions: ['sites.read'], query: PageQuery,
      responses: { 200: { description: 'A page of knowledge bases', schema: KnowledgeBaseListSchema } },
      async handler({ query, principal, deps }) {
        const page = await listKnowledgeBases(deps.sql, principal.orgId, query);
        return pageReply(page, query);
      },
    }),
    route({
      method: 'GET', path: '/knowledge-bases/:id', operationId: 'get_knowledge_base', summary: 'Get a knowledge base',
      permissions: ['sites.read'], params: IdParams,
      responses: { 200: { description: 'The knowledge base', schema: KnowledgeBaseSchema } },
      async handler({ params, principal, deps }) {
        const kb = await findKnowledgeBase(deps.sql, principal.orgId, params.id);
        if (!kb) throw notFound('knowledge base');
        return { status: 200, body: kb };
      },
    }),
    route({
      method: 'POST', path: '/knowledge-bases', operationId: 'create_knowledge_base', summary: 'Create a knowledge base',
      permissions: ['knowledge.write'], body: KnowledgeBaseCreateSchema,
      responses: { 201: { description: 'The new knowledge base', schema: KnowledgeBaseSchema } },
      async handler({ body, principal, deps }) {
        const kb = await insertKnowledgeBase(deps.sql, principal.orgId, body.name);
        return { status: 201, body: kb, headers: { Location: `${BASE}/knowledge-bases/${kb.id}` } };
      },
    }),
    route({
      method: 'PATCH', path: '/knowledge-bases/:id', operationId: 'update_knowledge_base', summary: 'Rename a knowledge base',
      permissions: ['knowledge.write'], params: IdParams, body: KnowledgeBasePatchSchema,
      responses: { 200: { description: 'The knowledge base', schema: KnowledgeBaseSchema } },
      async handler({ params, body, principal, deps }) {
        const kb = await renameKnowledgeBase(deps.sql, principal.orgId, params.id, body.name);
        if (!kb) throw notFound('knowledge base');
        return { status: 200, body: kb };
      },
    }),
    route({
      method: 'DELETE', path: '/knowledge-bases/:id', operationId: 'delete_knowledge_base', summary: 'Delete a knowledge base, its sources and their pages',
      description: 'Agents that used it stop answering from it at once.',
      permissions: ['knowledge.write'], params: IdParams,
      responses: { 204: { description: 'Deleted' } },
      async handler({ params, principal, deps }) {
        if (!(await removeKnowledgeBase(deps, principal.orgId, params.id))) throw notFound('knowledge base');
        return { status: 204 };
      },
    }),
    route({
      method: 'POST', path: '/knowledge-bases/:id/sites', operationId: 'add_knowledge_base_site', summary: 'Add a website to a knowledge base',
      description: 'Creates a site with this `kb_id` (and no `widget_id`) and crawls it at once.',
      permissions: ['knowledge.write', 'sites.write'], params: IdParams, body: KnowledgeBaseSiteSchema,
      responses: { 201: { description: 'The new site, its crawl queued', schema: SiteSchema } },
      async handler({ params, body, principal, deps }) {
        const site = await addKnowledgeBaseSite(deps, principal.orgId, params.id, body);
        if (!site) throw notFound('knowledge base');
        return { status: 201, body: publicSite(site), headers: { Location: `${BASE}/sites/${site.id}` } };
      },
    }),
    route({
      method: 'POST', path: '/knowledge-bases/:id/agents', operationId: 'attach_knowledge_base', summary: 'Let an agent answer from a knowledge base',
      permissions: ['knowledge.write'], params: IdParams, body: KnowledgeBaseAttachSchema,
      responses: { 200: { description: 'The knowledge base with its agents', schema: KnowledgeBaseSchema } },
      async handler({ params, body, principal, deps }) {
        const kb = await attachAgent(deps, principal.orgId, params.id, body.agent_id);
        if (!kb) throw notFound('knowledge base');
        return { status: 200, body: kb };
      },
    }),
    route({
      method: 'DELETE', path: '/knowledge-bases/:id/agents/:agentId', operationId: 'detach_knowledge_base', summary: 'Stop an agent answering from a knowledge base',
      permissions: ['knowledge.write'], params: AgentLinkParams,
      responses: { 204: { description: 'Detached' } },
      async handler({ params, principal, deps }) {
        if (!(await findKnowledgeBase(deps.sql, principal.orgId, params.id))) throw notFound('knowledge base');
        if (!(await detachKnowledgeBase(deps.sql, params.agentId, params.id))) throw notFound('attachment');
        return { status: 204 };
      },
    }),
  ],
};
