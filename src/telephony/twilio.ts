import type Twilio from 'twilio';
import {
  CarrierError, MONTHLY_COST_CENTS, type Carrier, type NumberCandidate, type NumberWebhooks,
} from './carrier.ts';

/**
 * The Twilio carrier (`CARRIER=twilio`), through the `twilio` SDK. `TWILIO_API_BASE_URL` sends its
 * requests to another origin than Twilio's (a local server speaking Twilio's REST wire protocol
 * in the tests); every Twilio host (api, ...) is then mapped onto that one origin.
 */

export interface TwilioCarrierConfig { accountSid: string; authToken: string; apiBaseUrl?: string | undefined }

type TwilioSdk = typeof Twilio;
type RequestOptions = Parameters<Twilio.RequestClient['request']>[0];

/**
 * The SDK, loaded on first use: the sandbox carrier is the default, and the SDK (its REST client and
 * what it requires) was about 16 MiB of every idle process (issue 48). Set once loaded, for carrierCall.
 */
let sdk: TwilioSdk | undefined;
let loading: Promise<TwilioSdk> | undefined;
const loadSdk = (): Promise<TwilioSdk> => loading ??= import('twilio').then((m) => (sdk = m.default));

/** The SDK's HTTP client, with every request sent to `baseUrl` instead of `https://<product>.twilio.com`. */
function redirectedRequestClient(twilio: TwilioSdk, baseUrl: URL): Twilio.RequestClient {
  return new class extends twilio.RequestClient {
    constructor() { super({ timeout: 15_000 }); }
    override request<TData>(opts: RequestOptions & { data?: TData }) {
      const uri = new URL(opts.uri);
      const target = new URL(uri.pathname + uri.search, baseUrl);
      return super.request<TData>({ ...opts, uri: target.href });
    }
  }();
}

/** Any failure of a Twilio request as a CarrierError with Twilio's status, code and message. */
async function carrierCall<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof CarrierError) throw err;
    if (sdk && err instanceof sdk.RestException) {
      throw new CarrierError(`Twilio refused to ${what}: ${err.message}${err.code ? ` (code ${err.code})` : ''}`, { status: err.status, code: err.code ?? null });
    }
    throw new CarrierError(`Twilio could not be reached to ${what}: ${(err as Error).message}`);
  }
}

const webhookParams = (w: NumberWebhooks) => ({
  voiceUrl: w.voiceUrl ?? '', voiceMethod: 'POST', statusCallback: w.voiceStatusUrl ?? '', statusCallbackMethod: 'POST',
  smsUrl: w.smsUrl ?? '', smsMethod: 'POST',
});

/** Our clock and Twilio's may disagree by this much when matching a call's creation time. */
const SINCE_SLACK_MS = 60_000;

export function createTwilioCarrier(config: TwilioCarrierConfig): Carrier {
  let client!: ReturnType<TwilioSdk>;
  let connecting: Promise<void> | undefined;
  const connect = () => connecting ??= loadSdk().then((twilio) => {
    client = twilio(config.accountSid, config.authToken, config.apiBaseUrl ? { httpClient: redirectedRequestClient(twilio, new URL(config.apiBaseUrl)) } : {});
  });
  /** carrierCall, once the client exists (every use of `client` below runs inside one). */
  const call = <T>(what: string, run: () => Promise<T>): Promise<T> => carrierCall(what, async () => { await connect(); return run(); });
  return {
    name: 'twilio',
    // Twilio's own test numbers work with test credentials only, which cannot buy or adopt: none is shared here.
    isSharedTestNumber: () => false,
    search: (query) => call('search numbers', async () => {
      const country = client.availablePhoneNumbers(query.country.toUpperCase());
      const params = {
        limit: 20,
        ...(query.area_code ? { areaCode: Number(query.area_code) } : {}),
        ...(query.contains ? { contains: query.contains } : {}),
        ...(query.in_postal_code ? { inPostalCode: query.in_postal_code } : {}),
      };
      const found: { phoneNumber: string; isoCountry: string; locality: string; capabilities: Record<string, boolean | undefined> }[] =
        query.type === 'toll_free' ? await country.tollFree.list(params)
          : query.type === 'mobile' ? await country.mobile.list(params) : await country.local.list(params);
      return found.map((n): NumberCandidate => ({
        phone_number: n.phoneNumber, iso_country: n.isoCountry, number_type: query.type, locality: n.locality || null,
        monthly_cost_cents: MONTHLY_COST_CENTS[query.type],
        // Twilio spells these capability keys in capitals (`SMS`, `MMS`) for available numbers.
        capabilities: { voice: Boolean(n.capabilities?.voice), sms: Boolean(n.capabilities?.SMS ?? n.capabilities?.sms), mms: Boolean(n.capabilities?.MMS ?? n.capabilities?.mms) },
      }));
    }),
    buy: (phoneNumber, webhooks) => call('buy the number', async () => {
      const number = await client.incomingPhoneNumbers.create({ phoneNumber, ...webhookParams(webhooks) });
      return { sid: number.sid, smsConfigured: webhooks.smsUrl !== null };
    }),
    adopt: (phoneNumber, webhooks) => call('take over the number', async () => {
      const [number] = await client.incomingPhoneNumbers.list({ phoneNumber, limit: 1 });
      if (!number) throw new CarrierError(`the Twilio account holds no number ${phoneNumber}`, { status: 404 });
      await client.incomingPhoneNumbers(number.sid).update(webhookParams(webhooks));
      return { sid: number.sid, smsConfigured: webhooks.smsUrl !== null };
    }),
    configure: (number, webhooks) => call('configure the number', async () => {
      await client.incomingPhoneNumbers(number.sid).update(webhookParams(webhooks));
    }),
    release: (number) => call('release the number', async () => {
      await client.incomingPhoneNumbers(number.sid).remove();
    }),
    placeCall: (input) => call('place the call', async () => {
      // Every progress event, not only `completed` (Twilio's default): the campaign call walks ringing and in_progress on them.
      const call = await client.calls.create({
        from: input.from, to: input.to, url: input.url, statusCallback: input.statusUrl, statusCallbackMethod: 'POST',
        statusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'],
        ...(input.timeout ? { timeout: input.timeout } : {}),
        // Answering-machine detection, asynchronous: the agent greets at once, and `AnsweredBy` arrives once known
        // (after the machine's greeting, so a message is left after the beep).
        ...(input.amdStatusUrl ? {
          machineDetection: 'DetectMessageEnd', asyncAmd: 'true', asyncAmdStatusCallback: input.amdStatusUrl, asyncAmdStatusCallbackMethod: 'POST',
        } : {}),
      });
      return { sid: call.sid };
    }),
    playOnCall: (callSid, twiml) => call('update the call', async () => {
      await client.calls(callSid).update({ twiml });
    }),
    // Twilio's call list filters by To and From, newest first; the call's own webhook URL is not
    // listed, so the match is the pair of numbers and a creation at or after `since`.
    findPlacedCall: (input) => call('look up the call', async () => {
      const calls = await client.calls.list({ to: input.to, from: input.from, limit: 20 });
      const placed = calls.find((c) => c.dateCreated && c.dateCreated.getTime() >= input.since.getTime() - SINCE_SLACK_MS);
      return placed ? { sid: placed.sid } : null;
    }),
    hangUp: (callSid) => call('hang up the call', async () => {
      await client.calls(callSid).update({ status: 'completed' });
    }),
    deleteRecording: (recordingSid) => call('delete the recording', async () => {
      await client.recordings(recordingSid).remove();
    }),
    sendSms: (input) => call('send the SMS', async () => {
      const message = await client.messages.create({ from: input.from, to: input.to, body: input.body });
      return { sid: message.sid };
    }),
  };
}
