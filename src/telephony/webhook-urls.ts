import type { NumberWebhooks } from './carrier.ts';
import type { SecretBox } from '../crypto/secret-box.ts';

/** The carrier webhook paths this service answers (Twilio's wire format whatever the carrier). */
export const CARRIER_WEBHOOK_PATHS = {
  voice: '/api/v1/carrier/twilio/voice',
  voiceStatus: '/api/v1/carrier/twilio/voice/status',
  /** Answering-machine detection's result for a campaign call (`AnsweredBy`). */
  voiceAmd: '/api/v1/carrier/twilio/voice/amd',
  /** A transfer's `<Dial action>` (a cold or SIP destination's outcome) and its voicemail's `<Record action>`. */
  voiceTransfer: '/api/v1/carrier/twilio/voice/transfer',
  sms: '/api/v1/carrier/twilio/sms',
  /** The carrier's recording-status callback of a turn-by-turn call it records (`phone_settings.record_calls`), `?conversation=<id>`. */
  voiceRecording: '/api/v1/carrier/twilio/voice/recording',
  /** A streamed call's WebSocket (`<Connect><Stream>`), followed by `/<token>` (src/voice/). */
  voiceStream: '/api/v1/carrier/twilio/voice/stream',
} as const;

/** The `<Stream url>` of a streamed call: the WebSocket twin of the service's origin. */
export const voiceStreamUrl = (baseUrl: string, token: string): string => `${baseUrl.replace(/^http/, 'ws')}${CARRIER_WEBHOOK_PATHS.voiceStream}/${token}`;

/**
 * Where the carrier posts the caller's words after turn `turn - 1` of a call: the voice webhook with
 * the turn's number, so each request of a call is known and played once (the number is signed with the URL).
 */
export const voiceTurnUrl = (baseUrl: string, turn: number): string => `${baseUrl}${CARRIER_WEBHOOK_PATHS.voice}?turn=${turn}`;

/** Where the carrier says a call's recording is ready: the conversation's id is in the URL it signs. */
export const recordingStatusUrl = (baseUrl: string, conversationId: string): string =>
  `${baseUrl}${CARRIER_WEBHOOK_PATHS.voiceRecording}?conversation=${conversationId}`;

/** Where callers reach the service: PUBLIC_BASE_URL, or the local port when unset. */
export function publicBaseUrl(config: { PUBLIC_BASE_URL?: string | undefined; PORT: number }): string {
  return (config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}`).replace(/\/+$/, '');
}

/** A number's webhooks: voice always (a disabled number still answers politely), SMS when enabled. */
export function numberWebhooks(config: { PUBLIC_BASE_URL?: string | undefined; PORT: number }, opts: { sms: boolean }): NumberWebhooks {
  const base = publicBaseUrl(config);
  return {
    voiceUrl: base + CARRIER_WEBHOOK_PATHS.voice,
    voiceStatusUrl: base + CARRIER_WEBHOOK_PATHS.voiceStatus,
    smsUrl: opts.sms ? base + CARRIER_WEBHOOK_PATHS.sms : null,
  };
}

/**
 * The sandbox carrier's own signing token when SANDBOX_SIGNING_TOKEN is unset: derived from the
 * secrets key (SECRETS_KEY, or the key generated once in DATA_DIR/secrets.key), so each
 * installation has its own, every replica agrees on it, and none is published.
 * `npm run cli -- sandbox signing-token` prints it.
 */
export function sandboxSigningToken(secrets: Pick<SecretBox, 'mac'>): string {
  return `sbx_${secrets.mac('sandbox-carrier-signing-token').toString('base64url')}`;
}

/**
 * The key inbound carrier webhooks are verified with: with CARRIER=twilio only TWILIO_AUTH_TOKEN
 * (no sandbox token ever opens a real deployment); with the sandbox, TWILIO_AUTH_TOKEN when set,
 * else SANDBOX_SIGNING_TOKEN when set, else the installation's own (sandboxSigningToken).
 * Unsigned requests are never accepted.
 */
export function webhookSigningToken(config: { CARRIER: 'sandbox' | 'twilio'; TWILIO_AUTH_TOKEN?: string | undefined; SANDBOX_SIGNING_TOKEN?: string | undefined },
  secrets: Pick<SecretBox, 'mac'>): string | null {
  if (config.CARRIER === 'twilio') return config.TWILIO_AUTH_TOKEN ?? null;
  return config.TWILIO_AUTH_TOKEN ?? config.SANDBOX_SIGNING_TOKEN ?? sandboxSigningToken(secrets);
}
