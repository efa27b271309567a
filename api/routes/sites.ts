import { notFound } from '../../src/errors.ts';
import { findSite, listPages, listSites, publicSite } from '../../src/db/sites.ts';
import { changeSiteCadence, recrawlSite, removeSite } from '../../src/knowledge/sites.ts';
import { IdParams } from '../../src/schemas/common.ts';
import { PageListQuery, PageListSchema, SiteListQuery, SiteListSchema, SitePatchSchema, SiteSchema } from '../../src/schemas/sites.ts';
import { pageReply, route, type RouteFamily } from '../routing.ts';

const BASE = '/api/v1/rest';

export const sitesFamily: RouteFamily = {
  base: BASE,
  order: 90,
  tag: 'Sites',
  description: 'Crawled websites behind an agent\'s knowledge: crawl state, pages and re-crawl cadence. Status: `queued`, `crawling`, `ready`, `failed`.',
  routes: [
    route({
      method: 'GET', path: '/sites', operationId: 'list_sites', summary: 'List sites, newest first',
      description: 'Agents\' own sites and standalone knowledge-base sources; filter with `widget_id` (an agent id) or `kb_id`.',
      permissions: ['sites.read'], query: SiteListQuery,
      responses: { 200: { description: 'A page of sites', schema: SiteListSchema } },
      async handler({ query, principal, deps }) {
        const page = await listSites(deps.sql, principal.orgId, query);
        return pageReply({ data: page.data.map(publicSite), total: page.total }, query);
      },
    }),
    route({
      method: 'GET', path: '/sites/:id', operationId: 'get_site', summary: 'Get a site and its crawl state',
      permissions: ['sites.read'], params: IdParams,
      responses: { 200: { description: 'The site', schema: SiteSchema } },
      async handler({ params, principal, deps }) {
        const site = await findSite(deps.sql, principal.orgId, params.id);
        if (!site) throw notFound('site');
        return { status: 200, body: publicSite(site) };
      },
    }),
    route({
      method: 'POST', path: '/sites/:id', operationId: 'recrawl_site', summary: 'Queue a fresh crawl of a site',
      description: 'Asked while a crawl of the site runs, it is remembered: that crawl makes one more pass when it ends (several requests meanwhile make one pass), '
        + 'so a page changed after the running pass fetched it is read again; `status` stays `crawling` until the last pass ends. '
        + 'The index served now stays until the new one is complete.',
      permissions: ['sites.write'], params: IdParams,
      responses: { 202: { description: 'The site, its crawl queued', schema: SiteSchema } },
      async handler({ params, principal, deps }) {
        const site = await recrawlSite(deps, principal.orgId, params.id);
        if (!site) throw notFound('site');
        return { status: 202, body: publicSite(site) };
      },
    }),
    route({
      method: 'PATCH', path: '/sites/:id', operationId: 'update_site', summary: 'Set a site\'s re-crawl cadence',
      description: 'next_crawl_at is recomputed (the last crawl, or now, plus the cadence) and the site\'s Temporal Schedule created, moved or removed.',
      permissions: ['sites.write'], params: IdParams, body: SitePatchSchema,
      responses: { 200: { description: 'The updated site', schema: SiteSchema } },
      async handler({ params, body, principal, deps }) {
        const site = await changeSiteCadence(deps, principal.orgId, params.id, body.crawl_cadence);
        if (!site) throw notFound('site');
        return { status: 200, body: publicSite(site) };
      },
    }),
    route({
      method: 'GET', path: '/sites/:id/pages', operationId: 'list_site_pages', summary: 'List the crawled pages of a site, by URL',
      permissions: ['sites.read'], params: IdParams, query: PageListQuery,
      responses: { 200: { description: 'A page of crawled pages', schema: PageListSchema } },
      async handler({ params, query, principal, deps }) {
        const site = await findSite(deps.sql, principal.orgId, params.id);
        if (!site) throw notFound('site');
        const page = await listPages(deps.sql, site, query);
        return pageReply(page, query);
      },
    }),
    route({
      method: 'DELETE', path: '/sites/:id', operationId: 'delete_site', summary: 'Delete a site and its indexed pages',
      permissions: ['sites.write'], params: IdParams,
      responses: { 204: { description: 'Deleted' } },
      async handler({ params, principal, deps }) {
        if (!(await removeSite(deps, principal.orgId, params.id))) throw notFound('site');
        return { status: 204 };
      },
    }),
  ],
};
