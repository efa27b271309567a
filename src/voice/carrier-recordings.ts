import type { Dispatcher } from 'undici';
import type { Db } from '../db/index.ts';
import type { Logger } from 'pino';
import type { Carrier } from '../telephony/carrier.ts';
import { findConversationRecord } from '../db/conversations.ts';
import { callSidsOfConversation, upsertCarrierRecording } from '../db/voice.ts';
import { AppError, notFound } from '../errors.ts';
import { createOutboundAgent, outboundPolicy } from '../net/outbound.ts';
import { undici } from '../net/undici.ts';
import { recordingKey, recordingStore } from './recordings.ts';

/**
 * A turn-by-turn call's recording (issue 44): the carrier records it (`<Start><Recording>` with a
 * `recordingStatusCallback`), then posts where the audio is. The service downloads the WAV through the
 * SSRF guard into the blob store, beside streamed calls' recordings, so the conversation's delete,
 * its agent's purge, retention and a person's erase reach it as they reach ours.
 */

/** What the download needs of the deployment. */
export interface CarrierRecordingConfig {
  ALLOW_PRIVATE_NETWORK_TARGETS: boolean; OUTBOUND_ALLOWED_HOSTS?: string | undefined;
  TWILIO_ACCOUNT_SID?: string | undefined; TWILIO_AUTH_TOKEN?: string | undefined; TWILIO_API_BASE_URL?: string | undefined;
}

/** A dual-channel 8 kHz WAV is 32 KB a second: four hours, `max_call_minutes`' ceiling, fit. */
export const MAX_RECORDING_BYTES = 512 * 1024 * 1024;
const TIMEOUT_MS = 120_000;
const RECORDING_SID = /^RE[0-9a-f]{32}$/i;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const dispatchers = new WeakMap<object, Dispatcher>();
function dispatcherFor(config: CarrierRecordingConfig): Dispatcher {
  let d = dispatchers.get(config);
  if (!d) dispatchers.set(config, (d = createOutboundAgent(outboundPolicy(config), { connections: 4 })));
  return d;
}

/**
 * The carrier's account credentials go only to the carrier's own API (Twilio's, or TWILIO_API_BASE_URL's host):
 * a recording URL elsewhere is fetched without them.
 */
function authorizationFor(url: URL, config: CarrierRecordingConfig): string | null {
  if (!config.TWILIO_ACCOUNT_SID || !config.TWILIO_AUTH_TOKEN) return null;
  const hosts = ['api.twilio.com', ...(config.TWILIO_API_BASE_URL ? [new URL(config.TWILIO_API_BASE_URL).host] : [])];
  if (!hosts.includes(url.host)) return null;
  return `Basic ${Buffer.from(`${config.TWILIO_ACCOUNT_SID}:${config.TWILIO_AUTH_TOKEN}`).toString('base64')}`;
}

/** The recording's WAV (`<RecordingUrl>.wav`, as Twilio serves it), whole, within MAX_RECORDING_BYTES. */
async function downloadWav(recordingUrl: string, config: CarrierRecordingConfig): Promise<Buffer> {
  const url = new URL(`${recordingUrl}.wav`);
  const auth = authorizationFor(url, config);
  const res = await undici().request(url, {
    method: 'GET', dispatcher: dispatcherFor(config), signal: AbortSignal.timeout(TIMEOUT_MS),
    headers: { accept: 'audio/wav', ...(auth ? { authorization: auth } : {}) },
  });
  if (res.statusCode !== 200) {
    await res.body.dump();
    throw new Error(`the recording's download answered ${res.statusCode}`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += (chunk as Buffer).length;
    if (size > MAX_RECORDING_BYTES) {
      res.body.destroy();
      throw new Error(`the recording is larger than ${MAX_RECORDING_BYTES} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  const bytes = Buffer.concat(chunks);
  if (bytes.length < 44 || bytes.toString('latin1', 0, 4) !== 'RIFF' || bytes.toString('latin1', 8, 12) !== 'WAVE') {
    throw new Error('the recording is not a WAV file');
  }
  return bytes;
}

/**
 * The carrier's recording-status callback (already signature-checked): `?conversation=<id>` names the call's
 * conversation, and the request's CallSid must be one of that conversation's calls (else 404, nothing stored).
 * A recording that is not `completed`, or whose conversation is gone, stores nothing. A completed one is
 * downloaded (http or https, through the SSRF guard) and kept as the conversation's recording; then the carrier's
 * copy is deleted, so the service's retention and erase are the only ones that apply (a failed delete is logged).
 * Returns whether a recording was stored.
 */
export async function storeCarrierRecording(deps: { sql: Db; config: CarrierRecordingConfig; carrier: Pick<Carrier, 'deleteRecording'>; log: Logger },
  conversationId: string,
  params: Record<string, string>): Promise<boolean> {
  if (!UUID.test(conversationId)) throw notFound('call');
  const conversation = await findConversationRecord(deps.sql, conversationId);
  if (!conversation) return false; // deleted since: nothing to keep
  if (!params.CallSid || !(await callSidsOfConversation(deps.sql, conversationId)).includes(params.CallSid)) throw notFound('call');
  if (params.RecordingStatus !== 'completed' || !params.RecordingUrl || !/^https?:\/\//i.test(params.RecordingUrl)) return false;
  const bytes = await downloadWav(params.RecordingUrl, deps.config).catch((err: Error) => {
    // The carrier hears a 502 (and may retry); nothing was stored. A private address is refused by the guard.
    throw new AppError(502, 'recording_download_failed', `the recording could not be downloaded: ${err.message}`);
  });
  const key = recordingKey(conversation.orgId, conversation.agentId, conversation.id);
  await recordingStore().put(key, bytes, 'audio/wav');
  const seconds = Number(params.RecordingDuration);
  const kept = await upsertCarrierRecording(deps.sql, {
    conversationId: conversation.id, orgId: conversation.orgId, agentId: conversation.agentId, blobKey: key, contentType: 'audio/wav',
    bytes: bytes.length, durationMs: Number.isFinite(seconds) && seconds >= 0 ? Math.round(seconds * 1000) : 0,
    carrierRecordingSid: params.RecordingSid ?? '',
  });
  // Deleted while the audio came down: its blob goes too.
  if (!kept) await recordingStore().delete(key);
  else if (RECORDING_SID.test(params.RecordingSid ?? '')) {
    await deps.carrier.deleteRecording(params.RecordingSid!).catch((err: unknown) => deps.log.warn({ err, conversation_id: conversationId }, 'could not delete the carrier\'s copy of a recording'));
  }
  return kept;
}
