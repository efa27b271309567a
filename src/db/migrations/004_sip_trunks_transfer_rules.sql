-- SIP trunks: connections to a customer's own PBX. The password is sealed by the service
-- (AES-256-GCM, `v1:<key id>:<iv>:<tag>:<ciphertext>`, bound to the trunk id) and never returned.
create table sip_trunks (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  label text not null,
  sip_host text not null,
  sip_username text not null,
  password_sealed text not null check (password_sealed like 'v1:%'),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  -- Lets transfer rules reference a trunk together with their own organization (below).
  unique (id, org_id)
);
create index sip_trunks_org_created on sip_trunks (org_id, created_at desc, id desc);
create index sip_trunks_org_host on sip_trunks (org_id, sip_host, sip_username);

-- Per-agent transfer rules. They go with their agent (the purge deletes the agent row last).
-- A trunk is referenced with the rule's organization, so a rule can never point at another
-- organization's trunk; there is no cascade: deleting a trunk in use is refused (409).
create table transfer_rules (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  agent_id uuid not null,
  name text not null,
  condition text not null,
  destination_phone text,
  destination_label text,
  enabled boolean not null default true,
  priority integer not null default 0,
  transfer_type text not null default 'cold' check (transfer_type in ('cold', 'warm', 'sip_refer')),
  ring_timeout_seconds integer not null default 30 check (ring_timeout_seconds between 10 and 60),
  warm_brief text,
  sip_trunk_id uuid,
  destination_sip_uri text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint transfer_rules_agent_fk foreign key (agent_id) references agents(id) on delete cascade,
  constraint transfer_rules_sip_trunk_fk foreign key (sip_trunk_id, org_id) references sip_trunks(id, org_id),
  -- The same rules as the API's, so no writer can store a rule the API would refuse.
  constraint transfer_rules_warm_brief check (transfer_type = 'warm' or warm_brief is null),
  constraint transfer_rules_sip_fields check (transfer_type = 'sip_refer' or (sip_trunk_id is null and destination_sip_uri is null)),
  constraint transfer_rules_sip_trunk check (transfer_type <> 'sip_refer' or sip_trunk_id is not null),
  constraint transfer_rules_destination check (destination_phone is not null or (transfer_type = 'sip_refer' and destination_sip_uri is not null))
);
-- The list order: highest priority first, then oldest first.
create index transfer_rules_agent_priority on transfer_rules (agent_id, priority desc, created_at, id);
-- Finding the rules that use a trunk (the 409 on delete, and the foreign key's own check).
create index transfer_rules_sip_trunk on transfer_rules (sip_trunk_id) where sip_trunk_id is not null;
