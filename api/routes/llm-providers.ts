import { notFound } from '../../src/errors.ts';
import { findLlmProvider, listLlmProviders } from '../../src/db/llm-providers.ts';
import { createLlmProvider, patchLlmProvider, removeLlmProvider } from '../../src/llm-providers/index.ts';
import { IdParams, PageQuery } from '../../src/schemas/common.ts';
import {
  LlmProviderCreateSchema, LlmProviderListSchema, LlmProviderPatchSchema, LlmProviderSchema,
} from '../../src/schemas/llm-providers.ts';
import { pageReply, route, type RouteFamily } from '../routing.ts';

const BASE = '/api/v1/rest';

export const llmProvidersFamily: RouteFamily = {
  base: BASE,
  order: 72,
  tag: 'LLM providers',
  description: 'OpenAI-compatible endpoints of the organization that an agent\'s `model` setting names (issue 46). The API key is write-only: '
    + 'stored encrypted, never returned; responses show `api_key_set` and at most its last 4 characters.',
  routes: [
    route({
      method: 'GET', path: '/llm-providers', operationId: 'list_llm_providers', summary: 'List LLM providers, newest first (never their keys)',
      permissions: ['org.read'], query: PageQuery,
      responses: { 200: { description: 'A page of providers', schema: LlmProviderListSchema } },
      async handler({ query, principal, deps }) {
        return pageReply(await listLlmProviders(deps.sql, principal.orgId, query), query);
      },
    }),
    route({
      method: 'GET', path: '/llm-providers/:id', operationId: 'get_llm_provider', summary: 'Get an LLM provider, without its key',
      permissions: ['org.read'], params: IdParams,
      responses: { 200: { description: 'The provider', schema: LlmProviderSchema } },
      async handler({ params, principal, deps }) {
        const provider = await findLlmProvider(deps.sql, principal.orgId, params.id);
        if (!provider) throw notFound('LLM provider');
        return { status: 200, body: provider };
      },
    }),
    route({
      method: 'POST', path: '/llm-providers', operationId: 'create_llm_provider', summary: 'Create an LLM provider',
      description: '`base_url` is checked as every outbound URL (https; 400 `private_network_target` for a private address unless the deployment allows it). '
        + 'The key is encrypted at rest and never returned.',
      permissions: ['org.write'], body: LlmProviderCreateSchema,
      responses: { 201: { description: 'The new provider, without its key', schema: LlmProviderSchema } },
      async handler({ body, principal, deps }) {
        const provider = await createLlmProvider(deps, principal.orgId, body);
        return { status: 201, body: provider, headers: { Location: `${BASE}/llm-providers/${provider.id}` } };
      },
    }),
    route({
      method: 'PATCH', path: '/llm-providers/:id', operationId: 'update_llm_provider', summary: 'Update an LLM provider; `api_key` rotates the key',
      description: 'Any subset of name, base_url, api_key and default_model; `{}` changes nothing. A new key replaces the stored one at once; null removes it.',
      permissions: ['org.write'], params: IdParams, body: LlmProviderPatchSchema,
      responses: { 200: { description: 'The updated provider, without its key', schema: LlmProviderSchema } },
      async handler({ params, body, principal, deps }) {
        return { status: 200, body: await patchLlmProvider(deps, principal.orgId, params.id, body) };
      },
    }),
    route({
      method: 'DELETE', path: '/llm-providers/:id', operationId: 'delete_llm_provider', summary: 'Delete an LLM provider',
      description: '409 `llm_provider_in_use` while agents\' `model.provider_id` (live or in a pending draft) names it (the problem carries `agent_count`).',
      permissions: ['org.write'], params: IdParams,
      responses: { 204: { description: 'Deleted' }, 409: { description: '`llm_provider_in_use`: agents still use the provider' } },
      async handler({ params, principal, deps }) {
        await removeLlmProvider(deps, principal.orgId, params.id);
        return { status: 204 };
      },
    }),
  ],
};
