-- When each member last looked at the live inbox (its list, its stream, an advisor action): an
-- inbox a member looked at recently is staffed, so the agent can promise a visitor a person.
alter table members add column live_inbox_seen_at timestamptz;
create index members_org_live_inbox_seen on members (org_id, live_inbox_seen_at desc) where live_inbox_seen_at is not null;
