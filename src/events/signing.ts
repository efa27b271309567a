import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): a secret is `whsec_` plus the
 * base64 of its key bytes, and a signature is `v1,` plus the base64 HMAC-SHA256 of
 * `{id}.{timestamp}.{body}` keyed with those bytes.
 */
const PREFIX = 'whsec_';

/** A new endpoint secret: `whsec_` and the base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return PREFIX + randomBytes(32).toString('base64');
}

/** One `v1,<base64>` signature of a delivery attempt. */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
  return 'v1,' + createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
}

/** The `webhook-signature` header: one signature per secret still valid, space-separated. */
export function signatureHeader(secrets: string[], id: string, timestamp: number, body: string): string {
  return secrets.map((secret) => signWebhook(secret, id, timestamp, body)).join(' ');
}
