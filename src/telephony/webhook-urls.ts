import type { NumberWebhooks } from './carrier.ts';

/** The carrier webhook paths this service answers (Twilio's wire format whatever the carrier). */
export const CARRIER_WEBHOOK_PATHS = {
  voice: '/api/v1/carrier/twilio/voice',
  voiceStatus: '/api/v1/carrier/twilio/voice/status',
  sms: '/api/v1/carrier/twilio/sms',
} as const;

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
 * The key inbound carrier webhooks are verified with: with CARRIER=twilio only TWILIO_AUTH_TOKEN
 * (the sandbox's published token never opens a real deployment); with the sandbox, TWILIO_AUTH_TOKEN
 * when set, else SANDBOX_SIGNING_TOKEN. Unsigned requests are never accepted.
 */
export function webhookSigningToken(config: { CARRIER: 'sandbox' | 'twilio'; TWILIO_AUTH_TOKEN?: string | undefined; SANDBOX_SIGNING_TOKEN: string }): string | null {
  if (config.CARRIER === 'twilio') return config.TWILIO_AUTH_TOKEN ?? null;
  return config.TWILIO_AUTH_TOKEN ?? config.SANDBOX_SIGNING_TOKEN;
}
