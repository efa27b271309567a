-- An agent's PATCH fans out the event it writes in the same statement (issue 48, round six): the event is inserted
-- already dispatched, with its deliveries, and that statement wakes the dispatchers to claim them itself (payload
-- `fanned-out`). So a committed event wakes them to fan out only when it was written undispatched; an insert of
-- dispatched events alone sends nothing here (the dispatchers would look for events to fan out and find none).
create or replace function notify_webhook_outbox() returns trigger language plpgsql as $$
begin
  if exists (select 1 from inserted_events where dispatched_at is null) then
    perform pg_notify('webhook_outbox', '');
  end if;
  return null;
end $$;
drop trigger events_notify_webhook_outbox on events;
create trigger events_notify_webhook_outbox after insert on events referencing new table as inserted_events
  for each statement execute function notify_webhook_outbox();
