import type { Config } from '../config.ts';
import type { Db } from '../db/index.ts';
import type { Carrier } from './carrier.ts';
import { createSandboxCarrier } from './sandbox.ts';
import { createTwilioCarrier } from './twilio.ts';

export type { Carrier } from './carrier.ts';

/** The configured carrier: Twilio with CARRIER=twilio, else the sandbox. */
export function createCarrier(config: Config, db: Db): Carrier {
  if (config.CARRIER === 'twilio') {
    return createTwilioCarrier({ accountSid: config.TWILIO_ACCOUNT_SID!, authToken: config.TWILIO_AUTH_TOKEN!, apiBaseUrl: config.TWILIO_API_BASE_URL });
  }
  return createSandboxCarrier(db);
}
