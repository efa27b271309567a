-- Recordings of streamed calls (issue 44): both sides mixed, a WAV in the blob store under
-- `blob_key`. The row goes with its conversation; the blob is deleted by the same paths
-- (src/voice/recordings.ts: deleteConversationRecording, the purge step, retention).
create table call_recordings (
  conversation_id uuid primary key references conversations(id) on delete cascade,
  org_id uuid not null references organizations(id) on delete cascade,
  agent_id uuid not null references agents(id) on delete cascade,
  blob_key text not null,
  content_type text not null,
  bytes integer not null,
  duration_ms integer not null,
  created_at timestamptz not null default now()
);
create index call_recordings_agent on call_recordings (agent_id);
