-- Satisfaction (issue 45 item 7): what visitors think, in one table for every kind of feedback. `rating` is the
-- end-of-chat survey (1 to 5, one per conversation); `thumbs` is a vote on one reply (up or down, one per
-- message). Issue 46's feedback on answers is a `thumbs` row too. A visitor who changes their mind replaces
-- their row (updated_at moves); each change is a `conversation.feedback` event.
create table feedback (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  agent_id uuid not null references agents(id) on delete cascade,
  conversation_id uuid not null references conversations(id) on delete cascade,
  message_id uuid references conversation_messages(id) on delete cascade,
  kind text not null check (kind in ('rating', 'thumbs')),
  rating smallint check (rating between 1 and 5),
  thumbs text check (thumbs in ('up', 'down')),
  comment text check (length(comment) <= 2000),
  created_at timestamptz not null default clock_timestamp(),
  updated_at timestamptz not null default clock_timestamp(),
  check ((kind = 'rating' and rating is not null and thumbs is null and message_id is null)
    or (kind = 'thumbs' and thumbs is not null and rating is null and message_id is not null))
);
create unique index feedback_conversation_rating on feedback (conversation_id) where kind = 'rating';
create unique index feedback_message_thumbs on feedback (message_id) where kind = 'thumbs';
create index feedback_conversation on feedback (conversation_id, created_at);
-- The report reads an organization's feedback in a time range.
create index feedback_org_created on feedback (org_id, created_at);
