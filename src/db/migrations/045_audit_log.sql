-- The audit log (issue 45 item 8): one row per write (POST, PUT, PATCH, DELETE) through REST, MCP or the
-- /inbox console: who (the API key, and the member of a user token), what (the operation and the
-- resource), when, from where (the client address) and the outcome. Append-only: a trigger refuses
-- updates, and deletes unless the retention sweep (deleteAuditEntriesBefore) says so for its transaction.
-- No foreign keys: an entry outlives the key, member or resource it names.
create table audit_log (
  id uuid primary key,
  org_id uuid not null,
  at timestamptz not null default clock_timestamp(),
  api_key_id uuid not null,
  member_id uuid,
  channel text not null check (channel in ('rest', 'mcp', 'inbox')),
  method text not null,
  path text not null,
  operation text not null,
  resource_id text,
  status smallint not null,
  outcome text not null check (outcome in ('succeeded', 'failed')),
  error_code text,
  client_address text,
  request_id text
);
create index audit_log_org_at on audit_log (org_id, at desc, id desc);
-- The retention sweep deletes by age across organizations.
create index audit_log_at on audit_log (at);

create function audit_log_append_only() returns trigger language plpgsql as $$
begin
  if tg_op = 'DELETE' and current_setting('ams.audit_retention', true) = 'on' then
    return old;
  end if;
  raise exception 'audit_log is append-only';
end $$;
create trigger audit_log_no_update before update or delete on audit_log
  for each row execute function audit_log_append_only();
create trigger audit_log_no_truncate before truncate on audit_log
  for each statement execute function audit_log_append_only();
