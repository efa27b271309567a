-- Agent sub-resources (issue 14): training notes (a question and the answer the agent must give)
-- and data tables (typed columns, rows as JSON). Both are searched with PostgreSQL's `english`
-- full text (Porter2 stems, as the site retrieval), through generated columns: a row's vector is
-- always its current text.

create table training_notes (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  agent_id uuid not null references agents(id) on delete cascade,
  question text not null,
  answer text not null,
  tsv tsvector generated always as (to_tsvector('english', question || ' ' || answer)) stored,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index training_notes_agent_created on training_notes (agent_id, created_at desc, id desc);
create index training_notes_tsv on training_notes using gin (tsv);

create table data_tables (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  agent_id uuid not null references agents(id) on delete cascade,
  name text not null,
  description text,
  -- [{name, type}], type string | number | boolean | date
  columns jsonb not null,
  row_count integer not null default 0 check (row_count >= 0),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index data_tables_agent_created on data_tables (agent_id, created_at desc, id desc);

create table data_table_rows (
  id uuid primary key,
  table_id uuid not null references data_tables(id) on delete cascade,
  agent_id uuid not null references agents(id) on delete cascade,
  -- Ordinal within the table: rows list and export in the order they were added.
  ord bigserial,
  data jsonb not null,
  -- The row's text cells, stemmed: what a visitor's question is matched against.
  tsv tsvector generated always as (jsonb_to_tsvector('english'::regconfig, data, '["string"]')) stored,
  created_at timestamptz not null default now()
);
create index data_table_rows_table_ord on data_table_rows (table_id, ord);
create index data_table_rows_agent on data_table_rows (agent_id);
create index data_table_rows_tsv on data_table_rows using gin (tsv);
