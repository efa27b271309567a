-- What a web simulation's browser was refused (issue 40, D12): one entry per origin and reason,
-- `[{origin, reason, count}]`, so a run shows what its page tried to reach. Empty for other runs.
alter table simulations add column blocked_requests jsonb not null default '[]';
