-- The operators' workspace (issue 45): members with a name, a role, an availability, the agents they
-- serve, a cap on open assignments and notification preferences; teams with their members and the
-- agents and channels routed to them; each conversation's assignment history; canned responses.

alter table members
  add column name text,
  add column role text not null default 'operator' check (role in ('admin', 'supervisor', 'operator')),
  add column availability text not null default 'offline' check (availability in ('online', 'away', 'offline')),
  add column max_conversations integer not null default 5 check (max_conversations between 1 and 100),
  add column phone text,
  add column notification_preferences jsonb not null default '{}',
  -- Round-robin: the member assigned longest ago goes first.
  add column last_assigned_at timestamptz,
  add column updated_at timestamptz not null default now();

-- Today's user_email keys become members: named after their e-mail, and admins when a live key of theirs can
-- administer the organization.
update members set name = coalesce(nullif(split_part(email, '@', 1), ''), email);
update members m set role = 'admin' where exists (select 1 from api_keys k
  where k.member_id = m.id and k.revoked_at is null and 'org.write' = any(k.permissions));
alter table members alter column name set not null;

-- Tokens the member resource issues follow the member's role: a role change rewrites their permissions.
alter table api_keys add column role_bound boolean not null default false;

-- The agents a member serves (none: every agent).
create table member_agents (
  member_id uuid not null references members(id) on delete cascade,
  agent_id uuid not null references agents(id) on delete cascade,
  primary key (member_id, agent_id)
);
create index member_agents_agent on member_agents (agent_id);

create table teams (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  name text not null,
  -- Channels (surfaces) routed to the team, whatever the agent.
  surfaces text[] not null default '{}',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index teams_org_name on teams (org_id, lower(name));
create index teams_org_created on teams (org_id, created_at desc, id desc);

create table team_members (
  team_id uuid not null references teams(id) on delete cascade,
  member_id uuid not null references members(id) on delete cascade,
  primary key (team_id, member_id)
);
create index team_members_member on team_members (member_id);

create table team_agents (
  team_id uuid not null references teams(id) on delete cascade,
  agent_id uuid not null references agents(id) on delete cascade,
  primary key (team_id, agent_id)
);
create index team_agents_agent on team_agents (agent_id);

alter table conversations
  add column team_id uuid references teams(id) on delete set null,
  add column assigned_at timestamptz,
  -- Since when the conversation waits for a person (null: it does not).
  add column queued_at timestamptz;
create index conversations_org_queue on conversations (org_id, queued_at) where queued_at is not null and status = 'active';
create index conversations_assigned_open on conversations (assigned_member_id) where status = 'active' and assigned_member_id is not null;

-- Every assignment, reassignment and release, in order: the history an event and the console show.
create table conversation_assignments (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  conversation_id uuid not null references conversations(id) on delete cascade,
  action text not null check (action in ('assigned', 'reassigned', 'released')),
  member_id uuid references members(id) on delete set null,
  team_id uuid references teams(id) on delete set null,
  -- `round_robin`, `manual`, `timeout`, `offline`, `released`.
  reason text not null,
  by_member_id uuid references members(id) on delete set null,
  created_at timestamptz not null default clock_timestamp()
);
create index conversation_assignments_conversation on conversation_assignments (conversation_id, created_at, id);

create table canned_responses (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  short_code text not null,
  title text not null,
  text text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index canned_responses_org_code on canned_responses (org_id, lower(short_code));
create index canned_responses_org_created on canned_responses (org_id, created_at desc, id desc);

-- A notice for members (an assignment, a conversation waiting in the queue) travels on the live stream.
alter table live_events drop constraint live_events_type_check;
alter table live_events add constraint live_events_type_check
  check (type in ('message', 'started', 'ended', 'assigned', 'mode_changed', 'alert', 'notification'));
