-- Agent tools (issue 15): the business's own HTTP endpoints an agent calls, signed like webhooks
-- (the secret sealed at rest, the previous one signing 24 hours after a rotation), and the log of
-- calls an operator lists. The log keeps no arguments: those live only in the conversation's
-- own `tool_calls`, and go with it.

create table agent_tools (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  agent_id uuid not null references agents(id) on delete cascade,
  name text not null,
  description text,
  parameters jsonb not null,
  url text not null,
  method text not null check (method in ('POST', 'GET')),
  timeout_seconds integer not null check (timeout_seconds between 1 and 30),
  call_on text not null check (call_on in ('model', 'data_captured')),
  enabled boolean not null default true,
  secret_sealed text not null,
  previous_secret_sealed text,
  previous_secret_expires_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (agent_id, name)
);
create index agent_tools_agent_created on agent_tools (agent_id, created_at desc, id desc);

create table agent_tool_calls (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  agent_id uuid not null references agents(id) on delete cascade,
  tool_id uuid not null references agent_tools(id) on delete cascade,
  conversation_id uuid references conversations(id) on delete set null,
  status text not null check (status in ('ok', 'error', 'timeout', 'mocked')),
  duration_ms integer not null,
  created_at timestamptz not null default now()
);
create index agent_tool_calls_tool_created on agent_tool_calls (tool_id, created_at desc, id desc);

-- How a conversation's tool calls go out: `live` to the tool's URL, `sandbox` to the service's own
-- echo endpoint, `mock` nowhere (simulations choose; every real conversation is `live`).
alter table conversations add column tool_mode text not null default 'live' check (tool_mode in ('live', 'sandbox', 'mock'));
