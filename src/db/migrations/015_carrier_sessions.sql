-- What the carrier did for us (the sandbox records every operation it plays, so its decisions can be
-- checked), and the calls and SMS threads that inbound webhooks turned into conversations.

create table carrier_operations (
  id uuid primary key,
  carrier text not null,
  operation text not null,
  -- The number the operation concerns (ours), and the other party where there is one.
  phone_number text,
  target text,
  details jsonb not null default '{}',
  created_at timestamptz not null default now()
);
create index carrier_operations_number on carrier_operations (phone_number, created_at);

create table carrier_sessions (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  agent_id uuid not null references agents(id) on delete cascade,
  phone_number_id uuid not null references phone_numbers(id) on delete cascade,
  conversation_id uuid references conversations(id) on delete set null,
  channel text not null check (channel in ('voice', 'sms')),
  -- The carrier's CallSid for a call; `<from>|<to>` for an SMS thread.
  session_key text not null,
  caller text not null,
  status text not null default 'active' check (status in ('active', 'transferred', 'ended')),
  transfer_rule_id uuid,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
-- One live session per call or thread: a webhook retried by the carrier finds the same one.
create unique index carrier_sessions_live on carrier_sessions (channel, session_key) where status <> 'ended';
create index carrier_sessions_conversation on carrier_sessions (conversation_id) where conversation_id is not null;
