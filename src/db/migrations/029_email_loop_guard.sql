-- Mail loops (issue 40, D14): every automatic reply the agent sends in an email conversation is
-- counted here, so the per-thread and per-correspondent caps hold across replicas and restarts.
-- Rows older than an hour are pruned as new ones are counted.
create table email_auto_replies (
  id bigint generated always as identity primary key,
  email_inbox_id uuid not null references email_inboxes(id) on delete cascade,
  -- The correspondent's address, lower case.
  correspondent text not null,
  conversation_id uuid not null references conversations(id) on delete cascade,
  created_at timestamptz not null default now()
);
create index email_auto_replies_correspondent on email_auto_replies (email_inbox_id, correspondent, created_at);
create index email_auto_replies_conversation on email_auto_replies (conversation_id, created_at);

-- Outbound delivery (D23): a reply the receiving server refused for good is recorded as `rejected`
-- with the server's answer, and not retried. Null for inbound messages.
alter table email_messages
  add column delivery_status text check (delivery_status in ('sent', 'rejected')),
  add column delivery_error text;
