-- A stored response is replayed only to the API key that made the request (issue 12, defect 8):
-- another key of the organization resending the same Idempotency-Key gets 422, never the first
-- caller's shown-once token or secret. Rows from before have no key and so replay to nobody.
alter table idempotency_keys add column api_key_id uuid;
