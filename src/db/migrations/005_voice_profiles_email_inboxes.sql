-- Voice profiles (an organization's reusable voice library) and email inboxes (addresses attached
-- to an agent).

-- The value sets of base_voice, accent, energy, pace and formality live in
-- src/schemas/voice-profiles.ts, which validates every write: no check constraints here, so a
-- new value needs no migration.
create table voice_profiles (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  name text not null,
  base_voice text not null,
  accent text not null,
  energy text not null,
  pace text not null,
  formality text not null,
  custom_direction text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index voice_profiles_org_created on voice_profiles (org_id, created_at desc, id desc);

-- `address` is stored trimmed and lower-case, and one address exists once in the whole service
-- (mail is routed by address alone), whatever the organization. An inbox goes with its agent:
-- deleting the agent's row (the purge) deletes it; while the agent is only marked deleted its
-- inboxes are hidden by the join on `agents.deleted_at`, and the agent DELETE frees the addresses
-- at once by deleting them (deleteEmailInboxesOfAgent).
create table email_inboxes (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  agent_id uuid not null references agents(id) on delete cascade,
  address text not null check (address = lower(address)),
  sender_name text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index email_inboxes_address on email_inboxes (lower(address));
create index email_inboxes_org_created on email_inboxes (org_id, created_at desc, id desc);
create index email_inboxes_agent_created on email_inboxes (agent_id, created_at desc, id desc);
