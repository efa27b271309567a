import { createHmac, timingSafeEqual } from 'node:crypto';
import type { SecretBox } from '../crypto/secret-box.ts';

/**
 * The signed `download_url` of a run's artifact: no token needed, valid 15 minutes. HMAC-SHA256
 * over `<run id>.<expires>` under a key of its own derived from the service's secrets key, so
 * nobody else can make or extend one, and a new secrets key voids the old links.
 */

export const ARTIFACT_PATH = '/api/v1/public/report-artifacts';
export const ARTIFACT_TTL_SECONDS = 15 * 60;

const keys = new WeakMap<SecretBox, Buffer>();
function artifactKey(secrets: SecretBox): Buffer {
  let key = keys.get(secrets);
  if (!key) {
    key = secrets.mac('report-artifact-key:v1');
    keys.set(secrets, key);
  }
  return key;
}

const signature = (secrets: SecretBox, runId: string, expires: number) =>
  createHmac('sha256', artifactKey(secrets)).update(`${runId}.${expires}`).digest('base64url');

/** The download link of run `runId` under `base` (scheme and host), valid ARTIFACT_TTL_SECONDS from `now`. */
export function artifactUrl(base: string, secrets: SecretBox, runId: string, now = Date.now()): string {
  const expires = Math.floor(now / 1000) + ARTIFACT_TTL_SECONDS;
  return `${base.replace(/\/+$/, '')}${ARTIFACT_PATH}/${runId}?expires=${expires}&sig=${signature(secrets, runId, expires)}`;
}

/** Whether a link's `expires` and `sig` are ours for this run and not expired. */
export function artifactSignatureValid(secrets: SecretBox, runId: string, expires: unknown, sig: unknown, now = Date.now()): boolean {
  if (typeof expires !== 'string' || typeof sig !== 'string' || !/^\d{1,12}$/.test(expires) || !/^[A-Za-z0-9_-]{43}$/.test(sig)) return false;
  if (Number(expires) < now / 1000) return false;
  const expected = Buffer.from(signature(secrets, runId, Number(expires)), 'base64url');
  const given = Buffer.from(sig, 'base64url');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
