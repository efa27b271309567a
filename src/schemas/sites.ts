import { Type, type Static } from '@sinclair/typebox';
import { ListEnvelope, Nullable, PageQueryProps, StringEnum, Timestamp, Uuid } from './common.ts';
import { SiteUrl } from './agents.ts';

/** How often a site is crawled again on its own. */
export const CRAWL_CADENCES = ['off', 'daily', 'weekly', 'monthly'] as const;
export type CrawlCadence = (typeof CRAWL_CADENCES)[number];

export const SITE_STATUSES = ['queued', 'crawling', 'ready', 'failed'] as const;
export type SiteStatus = (typeof SITE_STATUSES)[number];

const Cadence = StringEnum(CRAWL_CADENCES, { description: 'Automatic re-crawling: off, daily, weekly or monthly (a calendar month)' });

/** A crawled website: an agent's own (`widget_id`) or a knowledge base's source (`kb_id`). */
export const SiteSchema = Type.Object({
  id: Uuid,
  widget_id: Nullable({ ...Uuid, description: 'The agent (its `id`) whose site this is; null for a knowledge-base source' }),
  kb_id: Nullable({ ...Uuid, description: 'The knowledge base this source belongs to; null for an agent\'s own site' }),
  url: Type.String(),
  status: StringEnum(SITE_STATUSES, {
    description: '`queued`: a crawl is requested and waits for a worker; `crawling`: running; `ready`: the index is built and served; '
      + '`failed`: the last crawl failed (see `error`); the previous index, if any, is still served',
  }),
  pages_crawled: Type.Integer({ minimum: 0, description: 'Pages in the index served now' }),
  passages: Type.Integer({ minimum: 0, description: 'Passages (the chunks answers are read from) in the index served now' }),
  passages_embedding: Type.Integer({
    minimum: 0,
    description: 'Passages of the index served now whose meaning vectors are still being computed (after the site became `ready`): '
      + 'until then they are found by their words only; 0 once the index is searched by meaning too',
  }),
  last_crawled_at: Nullable(Timestamp),
  error: Nullable(Type.String()),
  crawl_cadence: Cadence,
  next_crawl_at: Nullable({ ...Timestamp, description: 'When the next automatic crawl is due (the last crawl, or the change, plus the cadence); null when off' }),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'Site', additionalProperties: false });
export type Site = Static<typeof SiteSchema>;

export const SitePatchSchema = Type.Object({
  crawl_cadence: Type.Optional(Cadence),
}, { $id: 'SitePatch', additionalProperties: false });

export const SiteListQuery = Type.Object({
  widget_id: Type.Optional({ ...Uuid, description: 'Sites of this agent' }),
  kb_id: Type.Optional({ ...Uuid, description: 'Sources of this knowledge base' }),
  ...PageQueryProps,
}, { additionalProperties: false });
export const SiteListSchema = ListEnvelope(SiteSchema, 'SiteList');

export const PageSchema = Type.Object({
  id: Uuid,
  url: Type.String(),
  title: Nullable(Type.String()),
  status_code: Type.Integer(),
  fetched_at: Timestamp,
  body: Type.Optional(Type.String({ description: 'The extracted text, with include_body=true' })),
}, { $id: 'Page', additionalProperties: false, description: 'A crawled page of the index served now' });
export type Page = Static<typeof PageSchema>;

export const PageListQuery = Type.Object({
  include_body: Type.Optional(Type.Boolean({ description: 'Inline each page\'s extracted text' })),
  ...PageQueryProps,
}, { additionalProperties: false });
export const PageListSchema = ListEnvelope(PageSchema, 'PageList');

/** POST /agents/:id/site: connect the agent's website or point it elsewhere. */
export const AgentSiteSchema = Type.Object({
  url: SiteUrl,
  crawl_cadence: Type.Optional(Cadence),
}, { $id: 'AgentSite', additionalProperties: false });

export const KnowledgeBaseSchema = Type.Object({
  id: Uuid,
  name: Type.String(),
  agent_ids: Type.Array(Uuid, { description: 'Agents that use this knowledge base' }),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'KnowledgeBase', additionalProperties: false, description: 'Standalone sources that several agents can share' });
export type KnowledgeBase = Static<typeof KnowledgeBaseSchema>;

export const KnowledgeBaseCreateSchema = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: '1 to 200 characters' }),
}, { $id: 'KnowledgeBaseCreate', additionalProperties: false });
export const KnowledgeBasePatchSchema = Type.Object({
  name: Type.Optional(KnowledgeBaseCreateSchema.properties.name),
}, { $id: 'KnowledgeBasePatch', additionalProperties: false });
export const KnowledgeBaseListSchema = ListEnvelope(KnowledgeBaseSchema, 'KnowledgeBaseList');

export const KnowledgeBaseSiteSchema = Type.Object({
  url: SiteUrl,
  crawl_cadence: Type.Optional(Cadence),
}, { $id: 'KnowledgeBaseSite', additionalProperties: false });

export const KnowledgeBaseAttachSchema = Type.Object({
  agent_id: { ...Uuid, description: 'An agent of the same organization' },
}, { $id: 'KnowledgeBaseAttach', additionalProperties: false });
