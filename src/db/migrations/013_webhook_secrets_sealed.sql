-- Webhook signing secrets are stored sealed with the secret box (AES-256-GCM under SECRETS_KEY),
-- as SIP trunk passwords are. SQL cannot seal: the service seals the rows still holding a
-- plaintext `whsec_` secret when it starts (sealPlaintextWebhookSecrets in src/db/webhooks.ts),
-- before it serves or delivers anything.
alter table webhook_endpoints rename column secret to secret_sealed;
alter table webhook_endpoints rename column previous_secret to previous_secret_sealed;
