-- Outbound campaigns: a list of numbers (or contacts) an agent calls from its active number, and
-- one row per call attempt. Every status change of a call is written here by an activity of its
-- workflow (`campaign-call:<id>`), so the API reads calls from here, never from workflow queries.

create table campaigns (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  agent_id uuid not null references agents(id) on delete cascade,
  name text not null,
  status text not null default 'draft' check (status in ('draft', 'running', 'paused', 'completed', 'canceled')),
  -- The enrolments: numbers, or contacts whose numbers are read when the campaign starts.
  to_numbers text[] not null default '{}',
  contact_ids uuid[] not null default '{}',
  max_duration_seconds integer not null check (max_duration_seconds between 1 and 14400),
  concurrency integer not null default 5 check (concurrency between 1 and 50),
  calling_window jsonb,
  retry jsonb,
  timezone text,
  -- The agent's active number when it started.
  from_number text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  started_at timestamptz,
  completed_at timestamptz
);
create index campaigns_org_created on campaigns (org_id, created_at desc, id desc);
-- The active_campaign guard on numbers: is this agent running or pausing one?
create index campaigns_agent_active on campaigns (agent_id) where status in ('running', 'paused');
create index campaigns_contacts on campaigns using gin (contact_ids) where status = 'draft';

create table campaign_calls (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  campaign_id uuid not null references campaigns(id) on delete cascade,
  -- Queue order; a retry keeps its first attempt's position.
  position integer not null,
  attempt integer not null default 1,
  previous_call_id uuid references campaign_calls(id) on delete set null,
  contact_id uuid references contacts(id) on delete set null,
  to_number text not null,
  -- The zone the calling window is read in (the number's country and region, else the campaign's).
  timezone text not null,
  status text not null default 'queued' check (status in (
    'queued', 'claimed', 'dialing', 'initiated', 'ringing', 'in_progress',
    'completed', 'busy', 'failed', 'no_answer', 'canceled', 'expired')),
  ended_reason text check (ended_reason in ('carrier', 'hangup', 'max_duration', 'canceled', 'expired', 'blocked', 'error')),
  call_sid text,
  conversation_id uuid references conversations(id) on delete set null,
  -- A retry waits until then.
  not_before timestamptz not null default now(),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  started_at timestamptz,
  answered_at timestamptz,
  ended_at timestamptz,
  duration_seconds integer,
  check ((ended_at is null) = (status in ('queued', 'claimed', 'dialing', 'initiated', 'ringing', 'in_progress')))
);
create index campaign_calls_campaign on campaign_calls (campaign_id, position, attempt);
create index campaign_calls_queued on campaign_calls (campaign_id, not_before, position) where status = 'queued';
create index campaign_calls_contact on campaign_calls (contact_id) where status = 'queued';
