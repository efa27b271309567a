-- A phone simulation of an agent whose calls stream (issue 44): `stream`, its turns spoken by the
-- sandbox's streamed caller (the caller's lines synthesized and recognized as the agent hears them,
-- the agent's audio in its own voice transcribed back into the transcript).
alter table simulations drop constraint simulations_voice_path_check;
alter table simulations add constraint simulations_voice_path_check check (voice_path in ('text', 'twiml', 'stream'));
