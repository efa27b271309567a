-- Phone numbers bought from (or imported into) the carrier, and the credits ledger that pays for them.

create table phone_numbers (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  -- The assigned agent; null while the number is parked in the organization's pool. No foreign key
  -- cascade: an agent's delete releases or parks its numbers itself (AGENT_DELETE_HOOKS).
  agent_id uuid references agents(id) on delete set null,
  phone_number text not null check (phone_number ~ '^\+[1-9][0-9]{1,14}$'),
  -- The carrier's own id of the number (Twilio's IncomingPhoneNumber sid, `PN...`).
  carrier_sid text,
  carrier text not null,
  source text not null check (source in ('purchased', 'imported')),
  status text not null default 'active' check (status in ('active', 'released')),
  enabled boolean not null default true,
  voice_enabled boolean not null default true,
  sms_enabled boolean not null default true,
  friendly_name text,
  number_type text not null,
  iso_country text not null,
  monthly_cost_cents integer not null check (monthly_cost_cents >= 0),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  released_at timestamptz,
  check ((status = 'released') = (released_at is not null))
);
-- An organization holds a number once while it is active (a released one may be bought again).
create unique index phone_numbers_org_number_active on phone_numbers (org_id, phone_number) where status = 'active';
create index phone_numbers_org_created on phone_numbers (org_id, created_at desc, id desc);
create index phone_numbers_agent on phone_numbers (agent_id) where agent_id is not null;
-- Inbound webhooks find the number the carrier names in `To`.
create index phone_numbers_number_active on phone_numbers (phone_number) where status = 'active';

-- Append-only: the balance is the sum of the entries, never a counter that can drift.
create table credit_ledger (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  amount_cents bigint not null,
  reason text not null,
  -- What the entry is for (`phone-number:<id>:purchase`, `number-billing:<id>:2026-12`, ...):
  -- one entry per reference, so a charge retried or fired twice is recorded once.
  reference text,
  created_at timestamptz not null default now()
);
create unique index credit_ledger_org_reference on credit_ledger (org_id, reference) where reference is not null;
create index credit_ledger_org_created on credit_ledger (org_id, created_at desc, id desc);

create function credit_ledger_append_only() returns trigger language plpgsql as $$
begin
  raise exception 'credit_ledger is append-only';
end $$;
create trigger credit_ledger_no_update before update on credit_ledger
  for each row execute function credit_ledger_append_only();
