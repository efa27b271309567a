-- Real-time voice (issue 44). A streamed call's WebSocket presents a single-use token, bound to the
-- call (CallSid), its conversation and its organization; only its hash is kept. Each agent turn of
-- a streamed call keeps its latency timings: end of the caller's speech, final transcript, the
-- runtime's reply (or first token), the first audio byte sent.
create table voice_stream_tokens (
  id uuid primary key,
  token_hash text not null unique,
  org_id uuid not null references organizations(id) on delete cascade,
  conversation_id uuid not null references conversations(id) on delete cascade,
  call_sid text not null,
  expires_at timestamptz not null,
  used_at timestamptz,
  created_at timestamptz not null default now()
);
create index voice_stream_tokens_conversation on voice_stream_tokens (conversation_id);

create table voice_turn_timings (
  id uuid primary key,
  org_id uuid not null references organizations(id) on delete cascade,
  agent_id uuid not null references agents(id) on delete cascade,
  conversation_id uuid not null references conversations(id) on delete cascade,
  turn integer not null,
  speech_ended_at timestamptz not null,
  transcript_at timestamptz not null,
  reply_at timestamptz not null,
  first_audio_at timestamptz,
  interrupted boolean not null default false,
  created_at timestamptz not null default now(),
  unique (conversation_id, turn)
);
create index voice_turn_timings_agent on voice_turn_timings (agent_id, created_at);
