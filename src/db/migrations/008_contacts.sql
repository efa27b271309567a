-- Contacts (people matched across channels on phone, email or web fingerprint), the link from
-- conversations to them, exact conversation totals kept by triggers, and the conversation
-- indexes the list reads.

-- Trigram indexes make the contacts search (substring, any case) an index scan. pg_trgm is a
-- trusted extension (PostgreSQL 13+): a database owner may create it without superuser. Where it
-- cannot be created the search still works, as a scan.
do $$
begin
  create extension if not exists pg_trgm;
exception when insufficient_privilege or undefined_file then
  raise notice 'pg_trgm unavailable (%): contacts search scans', sqlerrm;
end $$;

create table contacts (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  phone_e164 text check (phone_e164 ~ '^\+[1-9][0-9]{1,14}$'),
  email_lower text check (email_lower = lower(email_lower)),
  first_name text,
  last_name text,
  -- Web fingerprints (the widget's visitor ids) seen for this person; one contact per id and organization.
  visitor_ids text[] not null default '{}',
  facts jsonb not null default '{}',
  do_not_call boolean not null default false,
  -- Conversations recorded for the contact: history, like first_seen_at (a deleted conversation stays counted).
  conversation_count integer not null default 0,
  first_seen_at timestamptz,
  last_seen_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  -- What the search reads: lower-cased names, phone and email in one string.
  search_text text generated always as (
    lower(coalesce(first_name, '') || ' ' || coalesce(last_name, '') || ' ' || coalesce(phone_e164, '') || ' ' || coalesce(email_lower, ''))
  ) stored,
  -- Without either the contact could never be matched to a conversation.
  check (phone_e164 is not null or email_lower is not null)
);
create unique index contacts_org_phone on contacts (org_id, phone_e164);
create unique index contacts_org_email on contacts (org_id, email_lower);
create index contacts_org_created on contacts (org_id, created_at desc, id desc);
create index contacts_visitor_ids on contacts using gin (visitor_ids);

do $$
begin
  if exists (select 1 from pg_extension where extname = 'pg_trgm') then
    create index contacts_search on contacts using gin (search_text gin_trgm_ops);
  end if;
end $$;

-- The campaigns family enrols contacts; its table must cascade so that deleting a contact removes
-- its enrolments (the specification's "Delete cascades to the contact's campaign enrolments"):
--   contact_id uuid not null references contacts(id) on delete cascade

-- A deleted contact leaves its conversations, unlinked.
alter table conversations
  add constraint conversations_contact_fk foreign key (contact_id) references contacts(id) on delete set null;
create index conversations_contact on conversations (contact_id) where contact_id is not null;

-- Exact conversation totals without counting rows: one counter per organization, agent and
-- simulated flag, summed for a list's total (and joined to agents to leave out deleted ones).
-- Each key has up to 16 rows (`slot`, from the backend's pid): a transaction that inserts a
-- conversation holds its counter row until it commits, and concurrent inserts (which run on
-- different connections) then rarely wait for one another. Any slot may be decremented: only the
-- sum means anything.
create table conversation_counts (
  org_id uuid not null references organizations(id) on delete cascade,
  agent_id uuid not null references agents(id) on delete cascade,
  is_simulated boolean not null,
  slot smallint not null,
  n bigint not null,
  primary key (org_id, agent_id, is_simulated, slot)
);

create function conversation_counts_insert() returns trigger language plpgsql as $$
begin
  insert into conversation_counts as c (org_id, agent_id, is_simulated, slot, n)
  select org_id, agent_id, is_simulated, (pg_backend_pid() % 16)::smallint, count(*)
  from inserted group by org_id, agent_id, is_simulated order by 1, 2, 3
  on conflict (org_id, agent_id, is_simulated, slot) do update set n = c.n + excluded.n;
  return null;
end $$;

-- Decrements the lowest slot of each key. Only updates, never inserts: when the organization or the
-- agent is being deleted (a cascade), its counters are going too and there is nothing to keep.
create function conversation_counts_delete() returns trigger language plpgsql as $$
begin
  update conversation_counts c set n = c.n - d.n
  from (select org_id, agent_id, is_simulated, count(*) as n from deleted group by 1, 2, 3) d
  where c.org_id = d.org_id and c.agent_id = d.agent_id and c.is_simulated = d.is_simulated
    and c.slot = (select min(x.slot) from conversation_counts x
                  where x.org_id = d.org_id and x.agent_id = d.agent_id and x.is_simulated = d.is_simulated);
  return null;
end $$;

-- A conversation moved to another key (not something the service does today, but exact is exact).
create function conversation_counts_move() returns trigger language plpgsql as $$
begin
  update conversation_counts c set n = c.n - 1
  where c.org_id = old.org_id and c.agent_id = old.agent_id and c.is_simulated = old.is_simulated
    and c.slot = (select min(x.slot) from conversation_counts x
                  where x.org_id = old.org_id and x.agent_id = old.agent_id and x.is_simulated = old.is_simulated);
  insert into conversation_counts as c (org_id, agent_id, is_simulated, slot, n)
  values (new.org_id, new.agent_id, new.is_simulated, (pg_backend_pid() % 16)::smallint, 1)
  on conflict (org_id, agent_id, is_simulated, slot) do update set n = c.n + 1;
  return null;
end $$;

create function conversation_counts_truncate() returns trigger language plpgsql as $$
begin
  delete from conversation_counts;
  return null;
end $$;

-- Writers wait from here to the commit, so the backfill below and the triggers see the same rows.
lock table conversations in share row exclusive mode;

-- Statement triggers with transition tables: a bulk insert or a purge batch updates each counter once.
create trigger conversation_counts_insert after insert on conversations
  referencing new table as inserted for each statement execute function conversation_counts_insert();
create trigger conversation_counts_delete after delete on conversations
  referencing old table as deleted for each statement execute function conversation_counts_delete();
-- Row-level with a column list: the frequent updates (activity, transcript, evaluation) never fire it.
create trigger conversation_counts_move after update of org_id, agent_id, is_simulated on conversations
  for each row when (old.org_id is distinct from new.org_id or old.agent_id is distinct from new.agent_id
    or old.is_simulated is distinct from new.is_simulated)
  execute function conversation_counts_move();
create trigger conversation_counts_truncate after truncate on conversations
  for each statement execute function conversation_counts_truncate();

-- The counters start from the rows already there (the triggers' lock keeps writers out meanwhile).
insert into conversation_counts (org_id, agent_id, is_simulated, slot, n)
select org_id, agent_id, is_simulated, 0, count(*) from conversations group by 1, 2, 3;

-- The list pages through an index in its order, and reads the agent from the index too (to leave
-- out deleted agents' conversations) so that skipping `offset` rows touches no table page:
--   newest first in an organization, all or by is_simulated; and newest first of one agent.
drop index conversations_org_started;
create index conversations_org_started on conversations (org_id, started_at desc, id desc) include (agent_id);
drop index conversations_org_sim_started;
create index conversations_org_sim_started on conversations (org_id, is_simulated, started_at desc, id desc) include (agent_id);
-- Replaces the plain agent index: the agent's lists of every flag, and the purge's and cascades' lookups.
drop index conversations_agent;
create index conversations_agent_started on conversations (agent_id, started_at desc, id desc);

-- Index-only scans skip the table only for pages the visibility map marks all-visible, which
-- vacuum does. By default autovacuum comes after 20 % of the table is new or changed, and the
-- newest conversations (the first pages of every list) would stay unmarked for long: every row an
-- `offset` skips would then be a table read (bench:conversations, BENCH_VACUUM=0). Vacuum sooner.
alter table conversations set (autovacuum_vacuum_insert_scale_factor = 0.01, autovacuum_vacuum_scale_factor = 0.02,
  autovacuum_analyze_scale_factor = 0.02);
