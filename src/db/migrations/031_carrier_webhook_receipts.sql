-- Carrier webhooks played once (issue 40, D19): an inbound text by its MessageSid, a call's request
-- by its CallSid and turn. A retried or replayed webhook finds its receipt and gets the first
-- answer again (sealed: a transfer's TwiML may hold a SIP credential), or an empty one once that
-- answer is pruned (after a day; carriers retry within minutes). The keys stay with the organization.
create table carrier_webhook_receipts (
  channel text not null check (channel in ('voice', 'sms')),
  -- MessageSid for a text; `<CallSid>#<turn>` for a call's request.
  receipt_key text not null,
  org_id uuid not null references organizations(id) on delete cascade,
  -- The answer given, sealed; null while the first request is being played, and once pruned.
  answer text,
  created_at timestamptz not null default now(),
  primary key (channel, receipt_key)
);
create index carrier_webhook_receipts_answered on carrier_webhook_receipts (created_at) where answer is not null;
create index carrier_webhook_receipts_org on carrier_webhook_receipts (org_id);
