-- A staged draft of PATCH fields (`{changes}`), published atomically or discarded.
alter table agents add column draft jsonb;
alter table agents add column draft_updated_at timestamptz;
-- Widgets list by cursor (created_at, id) newest first: agents_org_created serves it.
