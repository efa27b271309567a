-- Conversations as the runtime records them: who (visitor, contact), their state, what the
-- runtime did (tool calls, data captured live) and the evaluation that follows the end.
alter table conversations
  add column status text not null default 'active' check (status in ('active', 'ended')),
  add column visitor_id text,
  add column contact_id uuid,
  add column language text,
  -- The visitor's bearer for the public endpoints: only its SHA-256 is kept.
  add column visitor_token_hash bytea,
  add column tool_calls jsonb not null default '[]',
  add column captured_data jsonb not null default '{}',
  add column last_activity_at timestamptz not null default now(),
  add column ended_reason text check (ended_reason in ('visitor', 'inactivity', 'agent')),
  add column evaluation_status text not null default 'pending' check (evaluation_status in ('pending', 'completed', 'failed')),
  add column evaluated_at timestamptz;

create index conversations_org_sim_started on conversations (org_id, is_simulated, started_at desc, id desc);
create index conversations_agent_sim_started on conversations (agent_id, is_simulated, started_at desc, id desc);
create index conversations_org_visitor on conversations (org_id, visitor_id) where visitor_id is not null;
create index usage_records_conversation on usage_records (conversation_id) where conversation_id is not null;
