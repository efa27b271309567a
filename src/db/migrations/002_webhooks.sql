-- Webhook endpoints, the events the service emits (a transactional outbox) and their deliveries.

-- `secret` signs deliveries, so it is kept as it is (a hash would not do); the API shows it only
-- on create and rotate. After a rotation `previous_secret` also signs until `previous_secret_expires_at`.
-- `failing_since` is the first failed attempt of an unbroken run of failures (null after any
-- success); an endpoint failing for 5 days is disabled with `disabled_reason`.
create table webhook_endpoints (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  url text not null,
  events text[] not null,
  description text,
  enabled boolean not null default true,
  disabled_reason text,
  secret text not null,
  previous_secret text,
  previous_secret_expires_at timestamptz,
  failing_since timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index webhook_endpoints_org_created on webhook_endpoints (org_id, created_at desc, id desc);
-- Dispatch looks up the enabled endpoints of one organization subscribed to a type.
create index webhook_endpoints_org_enabled on webhook_endpoints using gin (events) where enabled;

-- The outbox: written in the transaction of the change it reports, dispatched after commit.
-- `data` is json (not jsonb) so the payload keeps the key order the API answers with.
-- `dispatched_at` stays null until every delivery workflow has started; the recovery sweep
-- dispatches what a crash or an outage left behind.
create table events (
  id text primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  type text not null,
  agent_id uuid,
  data json not null,
  created_at timestamptz not null default now(),
  dispatched_at timestamptz
);
create index events_undispatched on events (created_at) where dispatched_at is null;
create index events_org_created on events (org_id, created_at desc);

-- One delivery per (event, endpoint), whatever the number of dispatches; `manual_retries`
-- numbers the workflow ids of manual retries.
create table webhook_deliveries (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  endpoint_id uuid not null references webhook_endpoints(id) on delete cascade,
  event_id text not null references events(id) on delete cascade,
  status text not null default 'pending' check (status in ('pending', 'succeeded', 'failed')),
  manual_retries integer not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (event_id, endpoint_id)
);
create index webhook_deliveries_endpoint_created on webhook_deliveries (endpoint_id, created_at desc, id desc);

-- Every HTTP attempt. `attempt_key` (workflow id and attempt number) makes recording idempotent
-- when the recording activity is retried.
create table webhook_delivery_attempts (
  id uuid primary key,
  delivery_id uuid not null references webhook_deliveries(id) on delete cascade,
  attempt_key text not null,
  at timestamptz not null,
  status_code integer,
  error text,
  response_excerpt text,
  duration_ms integer,
  unique (delivery_id, attempt_key)
);
create index webhook_delivery_attempts_delivery_at on webhook_delivery_attempts (delivery_id, at);
