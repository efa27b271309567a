-- How a phone simulation's turns ran: `twiml`, through the voice webhook's turns (the agent under
-- test had an active voice number when the run was made), or `text`, the same turns as text.
-- Null for web runs. Phone runs made before this column played text turns.
alter table simulations add column voice_path text check (voice_path in ('text', 'twiml'));
update simulations set voice_path = 'text' where surface = 'phone';
