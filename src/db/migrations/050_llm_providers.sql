-- Org-level LLM providers (issue 46, item 3): an OpenAI-compatible endpoint an agent's `model`
-- setting may name. The API key is sealed by the service (AES-256-GCM, bound to the provider id)
-- and never returned; `api_key_last4` is what responses show of it.
create table llm_providers (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  name text not null,
  base_url text not null,
  api_key_sealed text check (api_key_sealed like 'v1:%'),
  api_key_last4 text,
  default_model text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index llm_providers_org_created on llm_providers (org_id, created_at desc, id desc);
