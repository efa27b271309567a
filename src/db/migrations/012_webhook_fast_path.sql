-- Webhooks at full speed (issue 16): the first attempt of each delivery is made straight from the
-- outbox by the dispatcher of a worker process; only a failed first attempt becomes a workflow.

-- `claimed_at`: when a dispatcher took the delivery for its first attempt. A delivery still
-- pending and claimed for more than a minute lost its dispatcher (process killed): the recovery
-- sweep hands it to a workflow. `workflow_started_at`: when a delivery workflow took it over
-- (retries, manual retries, recovery); from then on the dispatcher leaves it alone.
alter table webhook_deliveries add column claimed_at timestamptz;
alter table webhook_deliveries add column workflow_started_at timestamptz;
-- Every delivery made before this migration was handed to a workflow at dispatch.
update webhook_deliveries set workflow_started_at = created_at;
-- What the dispatcher claims: pending, unclaimed, no workflow, oldest first.
create index webhook_deliveries_fast_path on webhook_deliveries (created_at)
  where status = 'pending' and claimed_at is null and workflow_started_at is null;
-- What the recovery sweep looks for: pending, no workflow, claimed (or waiting) too long.
create index webhook_deliveries_unowned on webhook_deliveries (coalesce(claimed_at, created_at))
  where status = 'pending' and workflow_started_at is null;

-- The time of the endpoint's latest failed attempt, for GET /webhooks/:id.
alter table webhook_endpoints add column last_failure_at timestamptz;
update webhook_endpoints w set last_failure_at = (
  select max(a.at) from webhook_delivery_attempts a join webhook_deliveries d on d.id = a.delivery_id
  where d.endpoint_id = w.id and a.error is not null);
-- The 24-hour success rate reads an endpoint's recent attempts.
create index webhook_delivery_attempts_at on webhook_delivery_attempts (at);

-- Wakes the dispatchers (LISTEN webhook_outbox) when an event commits: a notification sent in a
-- transaction is delivered at its commit, and never if it rolls back.
create function notify_webhook_outbox() returns trigger language plpgsql as $$
begin
  perform pg_notify('webhook_outbox', '');
  return null;
end $$;
create trigger events_notify_webhook_outbox after insert on events
  for each statement execute function notify_webhook_outbox();
