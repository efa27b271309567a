/**
 * What the service asks of a telephony carrier: numbers (search, buy, point their webhooks,
 * release), calls (place, hang up) and SMS. Two implementations: the sandbox (the default, no
 * account) and Twilio (`CARRIER=twilio`). A refusal is a CarrierError, which the use cases turn
 * into 502 `carrier_error` after undoing nothing (they ask the carrier before they write).
 */

export const NUMBER_TYPES = ['local', 'mobile', 'toll_free'] as const;
export type NumberType = (typeof NUMBER_TYPES)[number];

export interface NumberCandidate {
  phone_number: string;
  iso_country: string;
  number_type: NumberType;
  locality: string | null;
  monthly_cost_cents: number;
  capabilities: { voice: boolean; sms: boolean; mms: boolean };
}

export interface NumberSearch {
  country: string;
  type: NumberType;
  area_code?: string | undefined;
  contains?: string | undefined;
  in_postal_code?: string | undefined;
}

/** Where the carrier sends a number's inbound calls and texts; null turns that channel off at the carrier. */
export interface NumberWebhooks { voiceUrl: string | null; voiceStatusUrl: string | null; smsUrl: string | null }

/** A number the carrier now holds for us. `smsConfigured` is false when the carrier refused the SMS webhook. */
export interface ProvisionedNumber { sid: string; smsConfigured: boolean }

/** How a sandbox call plays out (the carrier's test numbers decide it). */
export interface PlacedCall { sid: string }

export interface Carrier {
  readonly name: 'sandbox' | 'twilio';
  /** Numbers available to buy: never one the carrier has already sold. */
  search(query: NumberSearch): Promise<NumberCandidate[]>;
  /**
   * Whether `phoneNumber` is one of the carrier's shared test numbers, which every account may hold at once (the
   * sandbox's behaviour numbers, as Twilio's test credentials' magic numbers): any other number belongs to one
   * organization at a time, or a call to it could reach another organization's agent.
   */
  isSharedTestNumber(phoneNumber: string): boolean;
  /** Buys `phoneNumber` with its webhooks set (SMS left unconfigured when the carrier refuses it). */
  buy(phoneNumber: string, webhooks: NumberWebhooks): Promise<ProvisionedNumber>;
  /** Takes over the webhooks of a number the organization owns elsewhere (import). */
  adopt(phoneNumber: string, webhooks: NumberWebhooks): Promise<ProvisionedNumber>;
  /** Points the number's webhooks; throws CarrierError when the carrier refuses any of them. */
  configure(number: { sid: string; phoneNumber: string }, webhooks: NumberWebhooks): Promise<void>;
  release(number: { sid: string; phoneNumber: string }): Promise<void>;
  placeCall(input: {
    from: string; to: string; url: string; statusUrl: string;
    /** Answering-machine detection (campaign calls): the carrier posts `AnsweredBy` here once it knows who answered. */
    amdStatusUrl?: string;
    /** Seconds the destination rings before the carrier gives up (`no-answer`); the carrier's default (60) when absent. */
    timeout?: number;
  }): Promise<PlacedCall>;
  /** Replaces what a live call plays with `twiml` (the message left after a machine's beep). */
  playOnCall(callSid: string, twiml: string): Promise<void>;
  /**
   * A call placed earlier with these `from`, `to` and `url`, created at or after `since`, or null:
   * a dial retried after a crash between placing the call and recording its id finds it here
   * instead of placing a second one.
   */
  findPlacedCall(input: { from: string; to: string; url: string; since: Date }): Promise<PlacedCall | null>;
  hangUp(callSid: string): Promise<void>;
  /** Deletes a call recording the carrier holds (`RE…`), once the service keeps its own copy (issue 44). */
  deleteRecording(recordingSid: string): Promise<void>;
  sendSms(input: { from: string; to: string; body: string }): Promise<{ sid: string }>;
}

/** The carrier refused or failed a request; `status` is the carrier's HTTP status when it answered one. */
export class CarrierError extends Error {
  readonly carrierStatus: number | null;
  readonly carrierCode: number | null;
  constructor(message: string, opts: { status?: number | null; code?: number | null } = {}) {
    super(message);
    this.name = 'CarrierError';
    this.carrierStatus = opts.status ?? null;
    this.carrierCode = opts.code ?? null;
  }
}

/** Monthly price of a number by type, in cents (the sandbox's list prices; Twilio's US prices at the time of writing). */
export const MONTHLY_COST_CENTS: Record<NumberType, number> = { local: 115, mobile: 200, toll_free: 215 };
