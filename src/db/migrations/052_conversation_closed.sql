-- A member (or key) closes a conversation from the console (issue 45): `ended_reason` `closed`, beside
-- the visitor leaving (`visitor`), the inactivity timer (`inactivity`) and the agent (`agent`).
alter table conversations drop constraint conversations_ended_reason_check;
alter table conversations add constraint conversations_ended_reason_check
  check (ended_reason in ('visitor', 'inactivity', 'agent', 'closed'));
