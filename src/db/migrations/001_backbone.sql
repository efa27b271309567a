-- Organizations, their members and the tokens that act for them.
create table organizations (
  id uuid primary key,
  name text not null,
  created_at timestamptz not null default now()
);

create table members (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  email text not null,
  created_at timestamptz not null default now()
);
create unique index members_org_email on members (org_id, lower(email));

-- Only a SHA-256 of a token is kept; `token_hint` is its prefix plus last four characters, for display.
create table api_keys (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  member_id uuid references members(id) on delete cascade,
  kind text not null check (kind in ('org', 'user')),
  name text not null,
  permissions text[] not null,
  token_hash bytea not null unique,
  token_hint text not null,
  created_at timestamptz not null default now(),
  revoked_at timestamptz,
  check ((kind = 'user') = (member_id is not null))
);
create index api_keys_org_created on api_keys (org_id, created_at desc, id desc);

-- An agent and its widget are one row: the widget id is `public_key`.
-- `config` holds the configuration groups beyond the basics; `deleted_at` hides an agent
-- at once while its purge workflow removes what depends on it.
create table agents (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  public_key text not null unique,
  name text not null,
  status text not null check (status in ('draft', 'active', 'paused')),
  voice text,
  persona text,
  site_url text,
  config jsonb not null default '{}',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  deleted_at timestamptz
);
create index agents_org_created on agents (org_id, created_at desc, id desc) where deleted_at is null;
create index agents_org_status_created on agents (org_id, status, created_at desc, id desc) where deleted_at is null;
create index agents_deleted on agents (deleted_at) where deleted_at is not null;

-- Conversations and their transcripts (filled in by the conversations family).
create table conversations (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  agent_id uuid not null references agents(id) on delete cascade,
  surface text not null,
  is_simulated boolean not null default false,
  started_at timestamptz not null default now(),
  ended_at timestamptz,
  page_url text,
  intent text,
  outcome text,
  extracted_data jsonb not null default '{}',
  criteria_results jsonb not null default '[]'
);
create index conversations_agent on conversations (agent_id);
create index conversations_org_started on conversations (org_id, started_at desc, id desc);

create table conversation_messages (
  id uuid primary key,
  conversation_id uuid not null references conversations(id) on delete cascade,
  role text not null,
  text text not null,
  ts timestamptz not null default now()
);
create index conversation_messages_conversation on conversation_messages (conversation_id, ts, id);

-- Usage outlives what it measured: no foreign keys, so deleting an agent or a conversation keeps it.
create table usage_records (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  agent_id uuid,
  conversation_id uuid,
  surface text not null,
  duration_seconds integer not null default 0,
  messages integer not null default 0,
  created_at timestamptz not null default now()
);
create index usage_records_org_created on usage_records (org_id, created_at desc);

-- Idempotency-Key records, per organization, kept 24 hours.
create table idempotency_keys (
  org_id uuid not null references organizations(id) on delete cascade,
  key text not null,
  fingerprint bytea not null,
  state text not null check (state in ('in_progress', 'completed')),
  response_status integer,
  response_headers jsonb,
  response_body text,
  created_at timestamptz not null default now(),
  primary key (org_id, key)
);
create index idempotency_keys_created on idempotency_keys (created_at);
