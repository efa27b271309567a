-- Knowledge: websites crawled into a retrieval index, and knowledge bases that group sources.

-- A knowledge base: standalone sources (sites with kb_id set) that agents can share.
create table knowledge_bases (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  name text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index knowledge_bases_org_created on knowledge_bases (org_id, created_at desc, id desc);

create table agent_knowledge_bases (
  agent_id uuid not null references agents(id) on delete cascade,
  kb_id uuid not null references knowledge_bases(id) on delete cascade,
  created_at timestamptz not null default now(),
  primary key (agent_id, kb_id)
);
create index agent_knowledge_bases_kb on agent_knowledge_bases (kb_id);

-- A crawled website: an agent's own (agent_id) or a knowledge base's source (kb_id).
-- `generation` is the index queries read; a crawl writes `generation + 1` beside it and swaps
-- at the end, so the agent answers from the old index until the new one is complete.
create table sites (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  agent_id uuid references agents(id) on delete cascade,
  kb_id uuid references knowledge_bases(id) on delete cascade,
  url text not null,
  status text not null check (status in ('queued', 'crawling', 'ready', 'failed')),
  generation integer not null default 0,
  pages_crawled integer not null default 0,
  last_crawled_at timestamptz,
  error text,
  crawl_cadence text not null default 'off' check (crawl_cadence in ('off', 'daily', 'weekly', 'monthly')),
  next_crawl_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((agent_id is null) <> (kb_id is null))
);
create index sites_org_created on sites (org_id, created_at desc, id desc);
create index sites_agent on sites (agent_id) where agent_id is not null;
create index sites_kb on sites (kb_id) where kb_id is not null;

-- Pages of one generation of a site's index. `links` lets an interrupted crawl resume from
-- what it already fetched; etag/last_modified let a re-crawl ask "changed since?".
create table site_pages (
  id uuid primary key,
  site_id uuid not null references sites(id) on delete cascade,
  generation integer not null,
  url text not null,
  depth integer not null default 0,
  title text,
  status_code integer not null,
  body text not null,
  content_hash text not null,
  etag text,
  last_modified text,
  links text[] not null default '{}',
  fetched_at timestamptz not null,
  unique (site_id, generation, url)
);

-- Passages of pages for full-text retrieval (room for an embedding column later).
create table page_chunks (
  id bigserial primary key,
  page_id uuid not null references site_pages(id) on delete cascade,
  site_id uuid not null,
  generation integer not null,
  ord integer not null,
  text text not null,
  tsv tsvector generated always as (to_tsvector('english', text)) stored
);
create index page_chunks_tsv on page_chunks using gin (tsv);
create index page_chunks_site_generation on page_chunks (site_id, generation);
create index page_chunks_page on page_chunks (page_id);

-- Which flow created an agent: its first finished crawl emits widget.ready (widgets) or
-- widget.crawl_completed (agents).
alter table agents add column created_via text not null default 'agents' check (created_via in ('agents', 'widgets'));
