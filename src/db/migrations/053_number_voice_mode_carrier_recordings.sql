-- Real-time voice (issue 44), continued. A phone number may choose how its calls are spoken,
-- `turn` (<Gather>) or `stream` (<Connect><Stream>); null leaves the choice to the agent's
-- `phone_settings.voice_mode`. A turn-by-turn call's recording is the carrier's: the service
-- downloads it when the carrier's recording-status callback says it is ready, into the same
-- blob store and `call_recordings` row as a streamed call's (so the delete, the purge, retention
-- and erase reach it); `carrier_recording_sid` is the carrier's id of it (null: our own mix).
alter table phone_numbers add column voice_mode text check (voice_mode in ('turn', 'stream'));
alter table call_recordings add column carrier_recording_sid text;
