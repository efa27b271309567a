-- Satisfaction (issue 45 item 7): what visitors think, in one table for every kind of feedback. `rating` is the
-- end-of-chat survey (1 to 5, one per conversation); `thumbs` is a vote on one reply (up or down, one per
-- message). Issue 46's feedback on answers is a `thumbs` row too. A visitor who changes their mind replaces
-- their row (updated_at moves); each change is a `conversation.feedback` event.
create table feedback (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  agent_id uuid not null references agents(id) on delete cascade,
  conversation_id uuid not null references conversations(id) on delete cascade,
  message_id uuid references conversation_messages(id) on delete cascade,
  kind text not null check (kind in ('rating', 'thumbs')),
  rating smallint check (rating between 1 and 5),
  thumbs text check (thumbs in ('up', 'down')),
  comment text check (length(comment) <= 2000),
  created_at timestamptz not null default clock_timestamp(),
  updated_at timestamptz not null default clock_timestamp(),
  check ((kind = 'rating' and rating is not null and thumbs is null and message_id is null)
    or (kind = 'thumbs' and thumbs is not null and rating is null and message_id is not null))
);
create unique index feedback_conversation_rating on feedback (conversation_id) where kind = 'rating';
create unique index feedback_message_thumbs on feedback (message_id) where kind = 'thumbs';
create index feedback_conversation on feedback (conversation_id, created_at);
-- The report reads an organization's feedback in a time range.
create index feedback_org_created on feedback (org_id, created_at);

-- Exports and imports (issue 45 item 6). A large export runs as a workflow (`data-export:<id>`) that leaves its
-- file in the BlobStore (`blob_key`); a contacts import (`contact-import:<id>`) reads its CSV from there.
create table data_exports (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  resource text not null check (resource in ('conversations', 'contacts', 'data_table_rows')),
  format text not null check (format in ('csv', 'ndjson')),
  -- What the export covers: the conversations filters and `transcripts`, or the data table's `table_id` and `agent_id`.
  params jsonb not null default '{}',
  status text not null default 'queued' check (status in ('queued', 'running', 'succeeded', 'failed')),
  row_count integer,
  byte_count bigint,
  blob_key text,
  error text,
  created_at timestamptz not null default now(),
  completed_at timestamptz
);
create index data_exports_org_created on data_exports (org_id, created_at desc, id desc);

create table contact_imports (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  status text not null default 'queued' check (status in ('queued', 'running', 'succeeded', 'failed')),
  blob_key text not null,
  row_count integer not null,
  created integer not null default 0,
  updated integer not null default 0,
  skipped integer not null default 0,
  -- Per-row refusals, as the dry run reports them: [{row, field, code, message}] (the first 1,000).
  errors jsonb not null default '[]',
  error text,
  created_at timestamptz not null default now(),
  completed_at timestamptz
);
create index contact_imports_org_created on contact_imports (org_id, created_at desc, id desc);
