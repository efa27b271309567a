-- Issue 43: a campaign says why it calls (objective, opening line) and what to do on an answering
-- machine; a call records what came of it (outcome) and when the callee asked to be called back.

alter table campaigns
  add column objective text,
  add column opening_line text,
  add column voicemail_behavior text check (voicemail_behavior in ('leave_message', 'hang_up')),
  add column voicemail_message text;

alter table campaign_calls
  add column outcome text check (outcome in ('reached', 'voicemail_left', 'voicemail_hung_up', 'not_interested', 'callback_requested', 'do_not_call')),
  add column callback_at timestamptz;
