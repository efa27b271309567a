-- Issue 47 (review): the redaction settings each stored message and event applies are cached per
-- process, keyed by agent. Every write that applies them names the version it used, and the write
-- goes through only while that version is still the agent's (so a change made through another
-- replica is never missed): one counter per agent_governance row, raised by every change of it.
alter table agent_governance add column version bigint not null default 1;
