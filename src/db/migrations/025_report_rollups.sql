-- Report rollups (issue 20): what a report reads instead of scanning a period's conversations.
--
-- Rows are per organization, report time zone, local day and agent: `kind` says what `k1`/`k2`
-- are and `n` counts conversations (or verdicts, tags, notes). A day is only read when its
-- (organization, time zone, day) is in report_rollup_days; a report computes the days it lacks.
--   so         k1 surface, k2 outcome ('unknown' when none), talk = sum of ended_at - started_at in seconds
--   intent     k1 intent       rating  k1 summary rating
--   criterion  k1 criterion, k2 verdict (one row per verdict of criteria_results)
--   tag, label k1 the tag or label      notes  the number of notes
--   contact    k1 contact id (a count of distinct contacts is not a sum, so the ids are kept)
create table report_rollups (
  org_id uuid not null references organizations(id) on delete cascade,
  timezone text not null,
  day date not null,
  agent_id uuid not null,
  kind text not null,
  k1 text,
  k2 text,
  n int not null,
  talk numeric
);
create index report_rollups_read on report_rollups (org_id, timezone, kind, day);

create table report_rollup_days (
  org_id uuid not null references organizations(id) on delete cascade,
  timezone text not null,
  day date not null,
  primary key (org_id, timezone, day)
);

-- UTC hours whose conversations changed since the last refresh. No key: a writer never waits for
-- another's uncommitted mark (duplicates are few, and the refresh takes them all at once).
create table report_rollup_dirty (
  org_id uuid not null,
  hour timestamptz not null
);
create index report_rollup_dirty_org on report_rollup_dirty (org_id, hour);

create function report_rollup_mark(p_org uuid, p_hours timestamptz[]) returns void language sql as $$
  insert into report_rollup_dirty (org_id, hour)
  select p_org, h from (select distinct unnest(p_hours) as h) x
  where h is not null and not exists (select 1 from report_rollup_dirty d where d.org_id = p_org and d.hour = x.h);
$$;

-- Inserts and deletes (a purge, an agent's delete) mark each (organization, hour) once per statement.
create function report_rollup_mark_rows() returns trigger language plpgsql as $$
begin
  perform report_rollup_mark(org_id, array_agg(distinct date_trunc('hour', started_at, 'UTC')))
  from changed where not is_simulated group by org_id;
  return null;
end $$;

create function report_rollup_mark_update() returns trigger language plpgsql as $$
begin
  perform report_rollup_mark(old.org_id, array[date_trunc('hour', old.started_at, 'UTC'), date_trunc('hour', new.started_at, 'UTC')]);
  if new.org_id is distinct from old.org_id then
    perform report_rollup_mark(new.org_id, array[date_trunc('hour', new.started_at, 'UTC')]);
  end if;
  return null;
end $$;

create function report_rollup_mark_note() returns trigger language plpgsql as $$
begin
  perform report_rollup_mark(c.org_id, array[date_trunc('hour', c.started_at, 'UTC')])
  from conversations c where c.id = coalesce(new.conversation_id, old.conversation_id) and not c.is_simulated;
  return null;
end $$;

create trigger report_rollup_insert after insert on conversations
  referencing new table as changed for each statement execute function report_rollup_mark_rows();
create trigger report_rollup_delete after delete on conversations
  referencing old table as changed for each statement execute function report_rollup_mark_rows();
-- Row-level with a column list: activity and transcript updates never fire it; an end, an
-- evaluation, an outcome, tags, labels or a rating do.
create trigger report_rollup_update after update of org_id, agent_id, is_simulated, started_at, ended_at, surface, outcome,
    intent, summary_rating, criteria_results, contact_id, tags, labels on conversations
  for each row when (old.org_id is distinct from new.org_id or old.agent_id is distinct from new.agent_id
    or old.is_simulated is distinct from new.is_simulated or old.started_at is distinct from new.started_at
    or old.ended_at is distinct from new.ended_at or old.surface is distinct from new.surface
    or old.outcome is distinct from new.outcome or old.intent is distinct from new.intent
    or old.summary_rating is distinct from new.summary_rating or old.criteria_results is distinct from new.criteria_results
    or old.contact_id is distinct from new.contact_id or old.tags is distinct from new.tags or old.labels is distinct from new.labels)
  execute function report_rollup_mark_update();
create trigger report_rollup_note after insert or delete on conversation_notes
  for each row execute function report_rollup_mark_note();

-- A run's mail is one message per recipient (none sees the others' addresses); those sent are
-- kept, so a retried mail step sends to the rest only.
alter table report_runs add column mailed_to text[] not null default '{}';
