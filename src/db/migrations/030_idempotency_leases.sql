-- An Idempotency-Key in progress is held by one request on one live API process (issue 40, D15).
-- `holder` names that request's claim; the process renews `lease_expires_at` while the request runs,
-- so a claim whose process died lapses within a lease and a retry may take it over, instead of being
-- refused for 24 hours. Claims made before this migration get one lease from now.
alter table idempotency_keys
  add column holder uuid,
  add column lease_expires_at timestamptz not null default now() + interval '30 seconds';
create index idempotency_keys_holder on idempotency_keys (holder) where state = 'in_progress';
