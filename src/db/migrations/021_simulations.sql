-- Simulations: reusable scenarios, and runs in which a scripted caller (or another agent, or a
-- visitor typing into the real widget) talks with an agent. A run's transcript is an ordinary
-- conversation flagged is_simulated; the run keeps what it was asked to do and how it ended.
create table simulation_scenarios (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  name text not null,
  prompt text not null,
  acceptance_criteria text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index simulation_scenarios_org_created on simulation_scenarios (org_id, created_at desc, id desc);

create table simulations (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  kind text not null check (kind in ('turns', 'web')),
  status text not null default 'running' check (status in ('running', 'completed', 'canceled', 'failed')),
  -- The agent under test, and the agent playing the caller (null: the built-in caller).
  agent_id uuid not null references agents(id) on delete cascade,
  caller_agent_id uuid references agents(id) on delete cascade,
  scenario_id uuid references simulation_scenarios(id) on delete set null,
  scenario_text text not null,
  acceptance_criteria text[] not null default '{}',
  tool_mode text not null check (tool_mode in ('mock', 'sandbox', 'live')),
  surface text not null check (surface in ('web', 'phone')),
  mode text not null check (mode in ('manual', 'auto')),
  max_turns integer not null,
  turn_count integer not null default 0,
  page_url text,
  conversation_id uuid references conversations(id) on delete set null,
  ended_reason text check (ended_reason in ('goal_met', 'max_turns', 'canceled', 'error')),
  error text,
  screenshot bytea,
  created_at timestamptz not null default now(),
  completed_at timestamptz
);
create index simulations_org_created on simulations (org_id, created_at desc, id desc);
create index simulations_agent on simulations (agent_id);
create index simulations_caller_agent on simulations (caller_agent_id) where caller_agent_id is not null;
create index simulations_conversation on simulations (conversation_id) where conversation_id is not null;

-- One row per played turn, written with the turn's messages in one transaction: a retried
-- turn (a worker lost mid-activity) finds its row and answers it again instead of playing twice.
create table simulation_turns (
  simulation_id uuid not null references simulations(id) on delete cascade,
  turn integer not null,
  message_ids uuid[] not null,
  caller_done boolean not null,
  primary key (simulation_id, turn)
);
