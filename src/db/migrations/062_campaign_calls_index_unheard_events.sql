-- The reports read an organization's campaign calls dialed in a period (report-data.ts, campaignCallFacts:
-- `org_id = $1 and started_at >= $2 and started_at < $3`); without this index that is a scan of every call of
-- every organization (issue 48). Calls never dialed (started_at null) are not in any period.
create index campaign_calls_org_started on campaign_calls (org_id, started_at) where started_at is not null;

-- An event no endpoint would receive is written dispatched (issue 48): no wake, no fan-out by a dispatcher, which would
-- make no delivery. Whether some endpoint would is read after the shared lock below, by a query of its own (a volatile
-- function's query sees what committed before it ran), so every endpoint that committed before the event's commit is
-- seen, as the dispatcher's fan-out after that commit saw it: an endpoint becoming a receiver (created enabled, enabled,
-- its events changed) takes the lock exclusively first, so it either committed before the check, or waits for the
-- event's transaction to commit. A check that cannot take the lock (an endpoint of the organization is being written
-- now) answers true: the event is left to the dispatcher, as every event was.
create function event_has_receivers(org uuid, event_type text) returns boolean language plpgsql volatile as $$
begin
  if not pg_try_advisory_xact_lock_shared(hashtextextended('webhook-receivers:' || org::text, 0)) then
    return true;
  end if;
  return exists (select 1 from webhook_endpoints w where w.org_id = org and w.enabled and w.events && array[event_type, '*']);
end $$;

create function lock_webhook_receivers() returns trigger language plpgsql as $$
begin
  perform pg_advisory_xact_lock(hashtextextended('webhook-receivers:' || new.org_id::text, 0));
  return new;
end $$;
create trigger webhook_endpoints_receiver_created before insert on webhook_endpoints
  for each row when (new.enabled) execute function lock_webhook_receivers();
create trigger webhook_endpoints_receiver_changed before update of enabled, events, org_id on webhook_endpoints
  for each row when (new.enabled and (not old.enabled or new.events is distinct from old.events or new.org_id <> old.org_id))
  execute function lock_webhook_receivers();
