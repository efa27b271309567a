import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from '../db/index.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import { consumeStreamToken, insertStreamToken, type StreamTokenBinding } from '../db/voice.ts';

/**
 * The token in a streamed call's `<Stream url>`: `vst_<nonce>_<signature>`, the signature a MAC of
 * the nonce, the CallSid and the organization with the installation's key. It is good once, for a
 * few minutes, for that call only: the row binding it is spent when the WebSocket opens, and the
 * stream's `start` must name the same CallSid.
 */

/** How long the carrier has to open the stream after our TwiML. */
const TOKEN_TTL_SECONDS = 120;
const TOKEN = /^vst_([A-Za-z0-9_-]{22})_([A-Za-z0-9_-]{43})$/;

const signatureOf = (secrets: Pick<SecretBox, 'mac'>, nonce: string, callSid: string, orgId: string) =>
  secrets.mac(`voice-stream:${nonce}:${callSid}:${orgId}`).toString('base64url');
const hashOf = (token: string) => createHash('sha256').update(token).digest('base64url');

/** A new token for the call's stream. */
export async function issueStreamToken(db: Db, secrets: Pick<SecretBox, 'mac'>, input: { orgId: string; conversationId: string; callSid: string }): Promise<string> {
  const nonce = randomBytes(16).toString('base64url');
  const token = `vst_${nonce}_${signatureOf(secrets, nonce, input.callSid, input.orgId)}`;
  await insertStreamToken(db, { tokenHash: hashOf(token), ...input, ttlSeconds: TOKEN_TTL_SECONDS });
  return token;
}

/** The call a token opens, spending it; null when it is malformed, forged, expired or already spent. */
export async function redeemStreamToken(db: Db, secrets: Pick<SecretBox, 'mac'>, token: string): Promise<StreamTokenBinding | null> {
  const m = TOKEN.exec(token);
  if (!m) return null;
  const binding = await consumeStreamToken(db, hashOf(token));
  if (!binding) return null;
  const expected = Buffer.from(signatureOf(secrets, m[1]!, binding.callSid, binding.orgId));
  const given = Buffer.from(m[2]!);
  return expected.length === given.length && timingSafeEqual(expected, given) ? binding : null;
}
