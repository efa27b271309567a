import { notFound } from '../../src/errors.ts';
import { findOrganization } from '../../src/db/api-keys.ts';
import { OrganizationSchema } from '../../src/schemas/organization.ts';
import { route, type RouteFamily } from '../routing.ts';

export const organizationFamily: RouteFamily = {
  base: '/api/v1/rest',
  order: 35,
  tag: 'Organization',
  description: 'The organization the calling key belongs to: its id (the `OrganizationId` search attribute of its Temporal runs), its name and the settings that apply to it.',
  routes: [
    route({
      method: 'GET', path: '/organization', operationId: 'get_organization', summary: 'The calling key\'s organization',
      description: 'Its id, name and creation time; the deployment settings that apply to it (rate limits, starting credits, '
        + 'the public base URL); and the Temporal search that lists its runs.',
      permissions: ['org.read'],
      responses: { 200: { description: 'The organization', schema: OrganizationSchema } },
      async handler({ principal, deps }) {
        const org = await findOrganization(deps.sql, principal.orgId);
        if (!org) throw notFound('organization');
        const { config } = deps;
        return { status: 200, body: {
          id: org.id, name: org.name, created_at: org.created_at.toISOString(),
          settings: {
            rate_limit_per_minute: config.RATE_LIMIT_PER_MINUTE,
            public_rate_limit_per_minute: config.PUBLIC_RATE_LIMIT_PER_MINUTE,
            starting_credits_cents: config.AMS_STARTING_CREDITS,
            public_base_url: config.PUBLIC_BASE_URL ?? null,
          },
          temporal: { search_attribute: 'OrganizationId' as const, visibility_query: `OrganizationId = "${org.id}"` },
        } };
      },
    }),
  ],
};
