import { randomBytes } from 'node:crypto';
import type { Db } from '../db/index.ts';
import { findRecordedCall, recordCarrierOperation } from '../db/carrier-operations.ts';
import { activeAmong } from '../db/phone-numbers.ts';
import {
  CarrierError, MONTHLY_COST_CENTS, type Carrier, type NumberCandidate, type NumberSearch, type NumberWebhooks, type ProvisionedNumber,
} from './carrier.ts';

/**
 * The default carrier: no account, numbers behave like a carrier's test numbers (contract,
 * "Sandbox carrier"). Every operation it plays is recorded in `carrier_operations`, so its
 * decisions can be checked.
 */

/** The number whose inbound-SMS configuration the sandbox refuses. */
export const SMS_REFUSING_NUMBER = '+15005550009';
/** The numbers whose behaviour the contract fixes: test fixtures every organization may hold at once. */
const SHARED_TEST_NUMBERS = new Set(['+15005550001', '+15005550002', '+15005550003', SMS_REFUSING_NUMBER]);
/** How far a search walks the sandbox's numbering past those already sold: in steps of 40, each giving up to 10 numbers. */
const SEARCH_LIMIT = 40_000;

/** How a call to `to` ends in the sandbox: the contract's table of test destinations. */
export interface SandboxCallOutcome {
  status: 'completed' | 'failed' | 'busy' | 'no_answer';
  ended_reason: 'carrier' | 'error';
  /** Seconds it rings before the outcome (0 when it fails at once). */
  ringSeconds: number;
  /** Seconds an answered call lasts before the callee hangs up (0 when never answered). */
  talkSeconds: number;
}

/**
 * Test destinations whose callee plays a cold call's usual answers, line by line (issue 43): a
 * campaign's tests and simulations cover what the agent does with each. Any other answered number's
 * callee is the built-in scripted caller ("Hello? Who is calling...").
 */
/** The test destination a machine answers (answering-machine detection says `machine_end_beep`). */
export const SANDBOX_MACHINE = '+15005550004';

/** The test destination the sandbox refuses to dial: placing a call to it throws, as a carrier's API error does. */
export const SANDBOX_UNDIALABLE = '+15005550010';

export const SANDBOX_CALLEES: Readonly<Record<string, readonly string[]>> = {
  '+15005550005': ['Who is this?', 'Sorry, I am not interested.'],
  '+15005550006': ['Why are you calling?', 'Please take me off your list and do not call me again.'],
  '+15005550007': ['Who is calling?', 'I am busy right now, can you call me back at 5?'],
  '+15005550008': ["Allô ? Qui est à l'appareil ?", "Ça ne m'intéresse pas, merci."],
};

export function sandboxCallOutcome(to: string, timing: { SANDBOX_RING_SECONDS: number; SANDBOX_CALL_SECONDS: number }): SandboxCallOutcome {
  switch (to) {
    case '+15005550001': return { status: 'failed', ended_reason: 'error', ringSeconds: 0, talkSeconds: 0 };
    case '+15005550002': return { status: 'busy', ended_reason: 'carrier', ringSeconds: 0, talkSeconds: 0 };
    case '+15005550003': return { status: 'no_answer', ended_reason: 'carrier', ringSeconds: timing.SANDBOX_RING_SECONDS, talkSeconds: 0 };
    default: return { status: 'completed', ended_reason: 'carrier', ringSeconds: timing.SANDBOX_RING_SECONDS, talkSeconds: timing.SANDBOX_CALL_SECONDS };
  }
}

const COUNTRIES: Record<string, { prefix: string; defaultArea: string; nationalDigits: number; locality: string }> = {
  US: { prefix: '+1', defaultArea: '415', nationalDigits: 10, locality: 'San Francisco' },
  CA: { prefix: '+1', defaultArea: '604', nationalDigits: 10, locality: 'Vancouver' },
  GB: { prefix: '+44', defaultArea: '20', nationalDigits: 10, locality: 'London' },
  FR: { prefix: '+33', defaultArea: '1', nationalDigits: 9, locality: 'Paris' },
  DE: { prefix: '+49', defaultArea: '30', nationalDigits: 10, locality: 'Berlin' },
  AU: { prefix: '+61', defaultArea: '2', nationalDigits: 9, locality: 'Sydney' },
};
const TOLL_FREE_AREA: Record<string, string> = { US: '800', CA: '888', GB: '800', FR: '800', DE: '800', AU: '1800' };

/** Ten deterministic candidates honouring country, type, area code and `contains` (digits). */
export function sandboxCandidates(query: NumberSearch, start = 0): NumberCandidate[] {
  const country = COUNTRIES[query.country.toUpperCase()];
  if (!country) return [];
  const area = query.type === 'toll_free' ? TOLL_FREE_AREA[query.country.toUpperCase()]! : (query.area_code ?? country.defaultArea);
  const contains = (query.contains ?? '').replace(/\D/g, '');
  const subscriberDigits = country.nationalDigits - area.length;
  if (subscriberDigits <= 0) return [];
  const out: NumberCandidate[] = [];
  for (let i = start; out.length < 10 && i < start + 40; i++) {
    const filler = String(5_550_100 + i * 37).padStart(subscriberDigits, '0');
    let subscriber = filler.slice(0, Math.max(0, subscriberDigits - contains.length)) + contains;
    if (contains.length > subscriberDigits) {
      // The pattern reaches into the area code: only the one number that agrees with it.
      const overlap = contains.slice(0, contains.length - subscriberDigits);
      if (overlap.length > area.length || !area.endsWith(overlap)) return [];
      subscriber = contains.slice(overlap.length);
    }
    const phone = `${country.prefix}${area}${subscriber}`;
    if (out.some((c) => c.phone_number === phone)) {
      if (contains.length >= subscriberDigits) break;
      continue;
    }
    out.push({
      phone_number: phone, iso_country: query.country.toUpperCase(), number_type: query.type,
      locality: query.type === 'toll_free' ? null : (query.in_postal_code ? `${country.locality} ${query.in_postal_code}` : country.locality),
      monthly_cost_cents: MONTHLY_COST_CENTS[query.type], capabilities: { voice: true, sms: true, mms: query.type !== 'toll_free' },
    });
  }
  return out;
}

const sid = (prefix: string) => `${prefix}${randomBytes(16).toString('hex')}`;

export function createSandboxCarrier(db: Db): Carrier {
  const log = (operation: string, phoneNumber: string | null, target: string | null, details: Record<string, unknown> = {}) =>
    recordCarrierOperation(db, { carrier: 'sandbox', operation, phoneNumber, target, details });
  const provision = async (operation: string, phoneNumber: string, webhooks: NumberWebhooks): Promise<ProvisionedNumber> => {
    const smsConfigured = phoneNumber !== SMS_REFUSING_NUMBER;
    const number = { sid: sid('PN'), smsConfigured };
    await log(operation, phoneNumber, null, { sid: number.sid, ...webhooks, smsUrl: smsConfigured ? webhooks.smsUrl : null });
    return number;
  };
  return {
    name: 'sandbox',
    // Like a real carrier, it does not offer a number it has sold: those active in any organization are skipped.
    async search(query) {
      const out: NumberCandidate[] = [];
      for (let start = 0; out.length < 10 && start < SEARCH_LIMIT; start += 40) {
        const batch = sandboxCandidates(query, start).filter((c) => !out.some((o) => o.phone_number === c.phone_number));
        if (!batch.length) break;
        const taken = await activeAmong(db, batch.map((c) => c.phone_number));
        out.push(...batch.filter((c) => !taken.has(c.phone_number)));
      }
      return out.slice(0, 10);
    },
    isSharedTestNumber: (phoneNumber) => SHARED_TEST_NUMBERS.has(phoneNumber),
    buy: (phoneNumber, webhooks) => provision('buy', phoneNumber, webhooks),
    adopt: (phoneNumber, webhooks) => provision('adopt', phoneNumber, webhooks),
    async configure(number, webhooks) {
      if (webhooks.smsUrl !== null && number.phoneNumber === SMS_REFUSING_NUMBER) {
        throw new CarrierError('the carrier refused the inbound-SMS configuration of this number', { status: 400 });
      }
      await log('configure', number.phoneNumber, null, { sid: number.sid, ...webhooks });
    },
    async release(number) { await log('release', number.phoneNumber, null, { sid: number.sid }); },
    async placeCall(input) {
      if (input.to === SANDBOX_UNDIALABLE) {
        await log('call_refused', input.from, input.to, { url: input.url });
        throw new CarrierError('the carrier cannot place a call to this number', { status: 400 });
      }
      const call = { sid: sid('CA') };
      await log('call', input.from, input.to, {
        sid: call.sid, url: input.url, status_url: input.statusUrl, ...(input.amdStatusUrl ? { amd: true } : {}), ...(input.timeout ? { timeout: input.timeout } : {}),
      });
      return call;
    },
    async playOnCall(callSid, twiml) { await log('play', null, null, { sid: callSid, twiml }); },
    async findPlacedCall(input) {
      const sid = await findRecordedCall(db, 'sandbox', input);
      return sid ? { sid } : null;
    },
    async hangUp(callSid) { await log('hangup', null, null, { sid: callSid }); },
    async deleteRecording(recordingSid) { await log('delete_recording', null, null, { sid: recordingSid }); },
    async sendSms(input) {
      const message = { sid: sid('SM') };
      await log('sms', input.from, input.to, { sid: message.sid, body: input.body });
      return message;
    },
  };
}
