-- Files uploaded to a knowledge base (issue 46): PDF, DOCX, Markdown, plain text, HTML and CSV.
-- Their bytes are in the blob store (`blob_key`); their text is parsed by a workflow into pages of
-- the knowledge base's one `files` source, so they are retrieved from the same index as crawled pages.

-- A knowledge base's uploaded files are served as one source of kind `files`, never crawled and never
-- listed with the websites; its generation stays 0, and a file's pages are swapped in one transaction.
alter table sites add column kind text not null default 'web' check (kind in ('web', 'files'));
create unique index sites_kb_files on sites (kb_id) where kind = 'files';

create table knowledge_files (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  kb_id uuid not null references knowledge_bases(id) on delete cascade,
  -- The name as uploaded; uploading the same name again replaces the file.
  name text not null,
  kind text not null check (kind in ('pdf', 'docx', 'markdown', 'text', 'html', 'csv')),
  content_type text not null,
  size_bytes integer not null,
  sha256 text not null,
  -- Each upload of the name is a new revision; the parse of an older one never overwrites a newer one.
  revision integer not null default 1,
  blob_key text not null,
  status text not null check (status in ('processing', 'ready', 'failed')),
  error text,
  pages integer,
  chunks integer not null default 0,
  parsed_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (kb_id, name)
);
create index knowledge_files_kb_created on knowledge_files (kb_id, created_at desc, id desc);

-- The pages a file became (a PDF page, a document's section); they go with the file.
alter table site_pages add column file_id uuid references knowledge_files(id) on delete cascade;
create index site_pages_file on site_pages (file_id) where file_id is not null;
