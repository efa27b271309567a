-- Streamed replies and tokens (issue 46).
-- A reply whose stream the visitor aborted is stored as far as it was sent, marked cut.
alter table conversation_messages add column cut boolean not null default false;
-- Tokens the model used for the turn that produced this agent message (null for messages no model wrote).
alter table conversation_messages add column input_tokens integer;
alter table conversation_messages add column output_tokens integer;
-- Tokens of the whole conversation, every turn summed; copied to its usage record when it ends.
alter table conversations add column input_tokens bigint not null default 0;
alter table conversations add column output_tokens bigint not null default 0;
alter table usage_records add column input_tokens bigint not null default 0;
alter table usage_records add column output_tokens bigint not null default 0;
