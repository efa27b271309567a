-- What a transfer does when its destination does not answer within ring_timeout_seconds (issue 43):
-- the caller goes back to the agent with a message, or leaves a voicemail.
alter table transfer_rules add column on_no_answer text not null default 'return_to_agent'
  check (on_no_answer in ('return_to_agent', 'voicemail'));
