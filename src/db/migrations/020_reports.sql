-- Reports (issue 20): definitions (what to aggregate, in which format, for whom, how often) and
-- their runs, each keeping its artifact in PostgreSQL so that every replica can serve the download.

create table reports (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  name text not null,
  -- Empty: the whole organization. An agent's delete takes itself out of the list (AGENT_DELETE_HOOKS).
  widget_ids uuid[] not null default '{}',
  data_categories text[] not null,
  format text not null check (format in ('document', 'presentation', 'raw')),
  frequency text not null check (frequency in ('manual', 'daily', 'weekly', 'monthly')),
  recipients text[] not null default '{}',
  schedule_enabled boolean not null default true,
  timezone text not null default 'UTC',
  send_at text not null default '06:00' check (send_at ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index reports_org_created on reports (org_id, created_at desc, id desc);
create index reports_widget_ids on reports using gin (widget_ids);

create table report_runs (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  report_id uuid not null references reports(id) on delete cascade,
  status text not null default 'generating' check (status in ('generating', 'succeeded', 'failed')),
  trigger text not null check (trigger in ('manual', 'schedule')),
  period_start timestamptz not null,
  period_end timestamptz not null check (period_end > period_start),
  -- The figures behind the artifact (the `raw` format's content), then the artifact itself.
  data jsonb,
  artifact bytea,
  content_type text,
  file_name text,
  mailed_at timestamptz,
  error text,
  created_at timestamptz not null default now(),
  completed_at timestamptz
);
create index report_runs_report_created on report_runs (report_id, created_at desc, id desc);
-- A Schedule firing twice for one period (a retry, a manual trigger) makes one run.
create unique index report_runs_scheduled_period on report_runs (report_id, period_start) where trigger = 'schedule';
