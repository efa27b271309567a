import { notFound } from '../../src/errors.ts';
import { issueApiKey, removeApiKey } from '../../src/api-keys/index.ts';
import { getApiKey, listApiKeys } from '../../src/auth/keys.ts';
import { IdParams, PageQuery } from '../../src/schemas/common.ts';
import { ApiKeyCreatedSchema, ApiKeyCreateSchema, ApiKeyListSchema, ApiKeySchema } from '../../src/schemas/api-keys.ts';
import { pageReply, route, type RouteFamily } from '../routing.ts';

const BASE = '/api/v1/rest';

export const apiKeysFamily: RouteFamily = {
  base: BASE,
  order: 40,
  tag: 'API keys',
  description: 'Organization keys (`sk_`) and user tokens (`ut_`). A token is shown once, when created.',
  routes: [
    route({
      method: 'GET', path: '/api-keys', operationId: 'list_api_keys', summary: 'List active keys (never their tokens)',
      permissions: ['org.read'], query: PageQuery,
      responses: { 200: { description: 'A page of keys', schema: ApiKeyListSchema } },
      async handler({ query, principal, deps }) {
        const page = await listApiKeys(deps.sql, principal.orgId, query);
        return pageReply(page, query);
      },
    }),
    route({
      method: 'GET', path: '/api-keys/:id', operationId: 'get_api_key', summary: 'Get a key (never its token)',
      permissions: ['org.read'], params: IdParams,
      responses: { 200: { description: 'The key', schema: ApiKeySchema } },
      async handler({ params, principal, deps }) {
        const key = await getApiKey(deps.sql, principal.orgId, params.id);
        if (!key) throw notFound('api key');
        return { status: 200, body: key };
      },
    }),
    route({
      method: 'POST', path: '/api-keys', operationId: 'create_api_key', summary: 'Issue a key',
      description: 'A key cannot grant a permission it does not hold itself. `user_email` makes a user-scoped token for that member, creating the member if new.',
      permissions: ['org.write'], body: ApiKeyCreateSchema,
      responses: { 201: { description: 'The key with its token, shown only here', schema: ApiKeyCreatedSchema } },
      async handler({ body, principal, deps }) {
        const key = await issueApiKey(deps, principal, body);
        return { status: 201, body: key, headers: { Location: `${BASE}/api-keys/${key.id}` } };
      },
      // A replayed response shows the token only while the key is not revoked.
      async stillExists({ deps, principal, body }) {
        return (await getApiKey(deps.sql, principal.orgId, (body as { id: string }).id)) !== null;
      },
    }),
    route({
      method: 'DELETE', path: '/api-keys/:id', operationId: 'revoke_api_key', summary: 'Revoke a key at once',
      description: 'A key may revoke only keys whose every permission it holds itself: 403 `missing_permission` names the first it lacks.',
      permissions: ['org.write'], params: IdParams,
      responses: { 204: { description: 'Revoked' } },
      async handler({ params, principal, deps }) {
        await removeApiKey(deps, principal, params.id);
        return { status: 204 };
      },
    }),
  ],
};
