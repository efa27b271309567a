-- Data governance (issue 47): retention per organization and per agent, redaction per agent, the
-- progress of retention runs, and consent per contact.

-- How long each kind of data is kept, in days, per key (conversations, recordings, inbound_mail,
-- report_artifacts, webhook_deliveries, audit_log). A key absent (or null) keeps everything.
create table retention_policies (
  org_id uuid primary key references organizations(id) on delete cascade,
  settings jsonb not null default '{}',
  updated_at timestamptz not null default now()
);

-- An agent's overrides of its organization's retention (a key set to null keeps everything for this
-- agent) and what its redaction hides, where. One row per agent that has either.
create table agent_governance (
  agent_id uuid primary key references agents(id) on delete cascade,
  org_id uuid not null references organizations(id) on delete cascade,
  retention jsonb not null default '{}',
  redaction jsonb,
  updated_at timestamptz not null default now()
);
create index agent_governance_org on agent_governance (org_id);

-- Rows a retention run deleted, per step, counted in the transaction that deleted them: a batch
-- retried after a crash counts only what it deleted itself, so the run's summary is exact.
create table retention_run_progress (
  run_key text not null,
  step text not null,
  deleted bigint not null default 0,
  updated_at timestamptz not null default now(),
  primary key (run_key, step)
);
create index retention_run_progress_updated on retention_run_progress (updated_at);

-- Consent per contact: recording (calls) and marketing (campaigns), each with when and where it was given or withdrawn.
create table contact_consents (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  contact_id uuid not null references contacts(id) on delete cascade,
  kind text not null check (kind in ('recording', 'marketing')),
  granted boolean not null,
  source text not null,
  recorded_at timestamptz not null default clock_timestamp()
);
create index contact_consents_contact on contact_consents (contact_id, kind, recorded_at desc);

-- A campaign that requires marketing consent skips the contacts and numbers without it.
alter table campaigns add column requires_consent boolean not null default false;

-- Retention and erasure delete conversations whose days the rollups already count: those deletes
-- set `ams.keep_rollups` for their transaction, so the days stay as counted (rollups hold counts,
-- never content) instead of being marked for a recount that would forget them.
create or replace function report_rollup_mark_rows() returns trigger language plpgsql as $$
begin
  if coalesce(current_setting('ams.keep_rollups', true), '') = 'on' then
    return null;
  end if;
  perform report_rollup_mark(org_id, array_agg(distinct date_trunc('hour', started_at, 'UTC')))
  from changed where not is_simulated group by org_id;
  return null;
end $$;

create or replace function report_rollup_mark_note() returns trigger language plpgsql as $$
begin
  if coalesce(current_setting('ams.keep_rollups', true), '') = 'on' then
    return null;
  end if;
  perform report_rollup_mark(c.org_id, array[date_trunc('hour', c.started_at, 'UTC')])
  from conversations c where c.id = coalesce(new.conversation_id, old.conversation_id) and not c.is_simulated;
  return null;
end $$;
