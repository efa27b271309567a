-- The email channel: a conversation with surface `email` belongs to the inbox it came in by, and
-- every message of its thread (in and out) is known by its Message-ID, so a reply's In-Reply-To
-- or References finds the conversation again.
alter table conversations
  add column email_inbox_id uuid references email_inboxes(id) on delete set null,
  -- The correspondent's address (lower case) and the thread's subject, for replies.
  add column email_address text,
  add column email_subject text;

create table email_messages (
  -- As in the header, without the angle brackets.
  message_id text not null,
  conversation_id uuid not null references conversations(id) on delete cascade,
  email_inbox_id uuid not null references email_inboxes(id) on delete cascade,
  direction text not null check (direction in ('in', 'out')),
  created_at timestamptz not null default now(),
  primary key (email_inbox_id, message_id)
);
create index email_messages_conversation on email_messages (conversation_id, created_at);
