-- The live inbox: who holds a conversation (the agent or a member), whom it is assigned to, whether
-- the visitor is still there, what each member has read; annotations (tags, labels, rating,
-- notes); and the live event log that feeds the Server-Sent Events stream through NOTIFY.
alter table conversations
  add column mode text not null default 'agent' check (mode in ('agent', 'human')),
  add column held_by_member_id uuid references members(id) on delete set null,
  add column assigned_member_id uuid references members(id) on delete set null,
  add column needs_human boolean not null default false,
  -- The visitor's last poll or message: presence (`online` within 30 s).
  add column visitor_seen_at timestamptz,
  add column tags text[] not null default '{}',
  add column labels text[] not null default '{}',
  add column summary_rating smallint check (summary_rating between 1 and 5);

-- The live inbox reads active conversations of an organization.
create index conversations_org_active on conversations (org_id, started_at desc) where status = 'active';
create index conversations_tags on conversations using gin (tags);
create index conversations_labels on conversations using gin (labels);

create table conversation_notes (
  id uuid primary key,
  conversation_id uuid not null references conversations(id) on delete cascade,
  author_member_id uuid references members(id) on delete set null,
  -- Kept as written, so a note still names its author after the member is gone.
  author text not null,
  text text not null,
  created_at timestamptz not null default clock_timestamp()
);
create index conversation_notes_conversation on conversation_notes (conversation_id, created_at, id);

-- How far each member has read a conversation.
create table conversation_reads (
  conversation_id uuid not null references conversations(id) on delete cascade,
  member_id uuid not null references members(id) on delete cascade,
  read_at timestamptz not null,
  primary key (conversation_id, member_id)
);

-- The live event log: every change the inbox shows, in commit-independent id order. Rows are kept
-- for a short replay window (Last-Event-ID); NOTIFY on `ams_live` carries "<org_id>:<id>".
create table live_events (
  id bigserial primary key,
  org_id uuid not null,
  -- Deleting a conversation (or its agent) takes its live events along: nothing replays a deleted transcript.
  conversation_id uuid not null references conversations(id) on delete cascade,
  type text not null check (type in ('message', 'started', 'ended', 'assigned', 'mode_changed')),
  data jsonb not null,
  created_at timestamptz not null default now()
);
create index live_events_org on live_events (org_id, id);
create index live_events_created on live_events (created_at);
create index live_events_conversation on live_events (conversation_id);

create function live_event_notify() returns trigger language plpgsql as $$
begin
  perform pg_notify('ams_live', new.org_id::text || ':' || new.id::text);
  -- Now and then, forget events older than the replay window (an hour).
  if random() < 0.01 then
    delete from live_events where created_at < now() - interval '1 hour';
  end if;
  return new;
end $$;
create trigger live_events_notify after insert on live_events for each row execute function live_event_notify();

-- Simulations are not live: they never reach the inbox.
create function live_conversation_events() returns trigger language plpgsql as $$
begin
  if new.is_simulated then
    return new;
  end if;
  if tg_op = 'INSERT' then
    insert into live_events (org_id, conversation_id, type, data)
    values (new.org_id, new.id, 'started', jsonb_build_object('conversation_id', new.id, 'widget_id', new.agent_id, 'surface', new.surface));
    return new;
  end if;
  if new.status = 'ended' and old.status <> 'ended' then
    insert into live_events (org_id, conversation_id, type, data)
    values (new.org_id, new.id, 'ended', jsonb_build_object('conversation_id', new.id, 'ended_reason', new.ended_reason));
  end if;
  if new.assigned_member_id is distinct from old.assigned_member_id then
    insert into live_events (org_id, conversation_id, type, data)
    values (new.org_id, new.id, 'assigned', jsonb_build_object('conversation_id', new.id,
      'assigned_to', (select email from members where id = new.assigned_member_id)));
  end if;
  if new.mode <> old.mode then
    insert into live_events (org_id, conversation_id, type, data)
    values (new.org_id, new.id, 'mode_changed', jsonb_build_object('conversation_id', new.id, 'mode', new.mode,
      'held_by', (select email from members where id = new.held_by_member_id)));
  end if;
  return new;
end $$;
create trigger conversations_live after insert or update of status, assigned_member_id, mode on conversations
  for each row execute function live_conversation_events();

create function live_message_events() returns trigger language plpgsql as $$
begin
  insert into live_events (org_id, conversation_id, type, data)
  select c.org_id, c.id, 'message', jsonb_build_object('conversation_id', c.id, 'message', jsonb_build_object(
      'id', new.id, 'role', new.role, 'text', new.text, 'ts', to_char(new.ts at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
  from conversations c where c.id = new.conversation_id and not c.is_simulated;
  return new;
end $$;
create trigger conversation_messages_live after insert on conversation_messages
  for each row execute function live_message_events();
