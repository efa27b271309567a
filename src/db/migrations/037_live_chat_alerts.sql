-- Live chat alerts (issue 43): when an agent has `live_chat_alerts` on, the live inbox stream carries an
-- `alert` event for each conversation in its `live_chat_alert_scope` (all, unassigned, assigned) that
-- wants a person: when the flag `needs_human` is raised (reason `handoff_requested`), and when the
-- visitor writes again while a person is wanted or holds the conversation (reason `visitor_message`).
-- Written by triggers, as the other live events are, so every path that flags a conversation alerts.
alter table live_events drop constraint live_events_type_check;
alter table live_events add constraint live_events_type_check
  check (type in ('message', 'started', 'ended', 'assigned', 'mode_changed', 'alert'));

create function live_alert(conversation uuid, reason text, said text) returns void language plpgsql as $$
begin
  insert into live_events (org_id, conversation_id, type, data)
  select c.org_id, c.id, 'alert', jsonb_build_object('conversation_id', c.id, 'widget_id', c.agent_id, 'surface', c.surface,
      'reason', reason, 'scope', coalesce(a.config->>'live_chat_alert_scope', 'all'),
      'assigned_to', (select email from members where id = c.assigned_member_id), 'text', said)
  from conversations c join agents a on a.id = c.agent_id and a.deleted_at is null
  where c.id = conversation and not c.is_simulated and c.status = 'active' and c.surface in ('web', 'sms', 'email')
    and a.config->>'live_chat_alerts' = 'true'
    and case coalesce(a.config->>'live_chat_alert_scope', 'all')
      when 'unassigned' then c.assigned_member_id is null
      when 'assigned' then c.assigned_member_id is not null
      else true end;
end $$;

create function live_alert_on_flag() returns trigger language plpgsql as $$
begin
  if new.needs_human and not old.needs_human then
    perform live_alert(new.id, 'handoff_requested', (select text from conversation_messages where conversation_id = new.id
      and role in ('visitor', 'caller') order by ts desc, id desc limit 1));
  end if;
  return new;
end $$;
create trigger conversations_live_alert after update of needs_human on conversations
  for each row execute function live_alert_on_flag();

create function live_alert_on_message() returns trigger language plpgsql as $$
begin
  if new.role in ('visitor', 'caller') and exists (select 1 from conversations
      where id = new.conversation_id and (needs_human or mode = 'human')) then
    perform live_alert(new.conversation_id, 'visitor_message', new.text);
  end if;
  return new;
end $$;
create trigger conversation_messages_live_alert after insert on conversation_messages
  for each row execute function live_alert_on_message();
