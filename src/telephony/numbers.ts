import type { Db } from '../db/index.ts';
import { agentExists, findAgent } from '../db/agents.ts';
import { creditBalance, ensureStartingCredits, lockCredits } from '../db/credits.ts';
import {
  activeNumbersOfAgent, detachNumbersOfAgent, findPhoneNumber, insertPhoneNumber, lockNumber, markNumberReleased, numberHolders,
  toPhoneNumber, updatePhoneNumber, type PhoneNumberRecord,
} from '../db/phone-numbers.ts';
import { chargeCredits, insufficientCredits } from '../credits/index.ts';
import { AppError, fieldError, notFound } from '../errors.ts';
import type { PhoneNumber, PhoneNumberBuy, PhoneNumberPatch } from '../schemas/phone-numbers.ts';
import { phoneLibMin } from '../domain/phone-lib.ts';
import { CarrierError, MONTHLY_COST_CENTS, type Carrier, type NumberType } from './carrier.ts';
import { agentHasActiveCampaign } from './campaign-guard.ts';
import { purchaseReference, startNumberBilling, stopNumberBilling } from './billing.ts';
import { numberWebhooks } from './webhook-urls.ts';
import { createCarrier } from './index.ts';
import type { FamilyDeps } from '../deps.ts';

/**
 * The phone numbers family's use cases. Each asks the carrier inside the transaction that records
 * the change, after every check: a refusal (ours, 4xx, or the carrier's, 502) leaves the ledger,
 * the carrier and the list as they were.
 */

export type TelephonyDeps = FamilyDeps & { carrier: Carrier };

function carrierError(err: unknown): never {
  if (err instanceof CarrierError) throw new AppError(502, 'carrier_error', `${err.message}; nothing was changed`);
  throw err;
}

async function requireAgent(db: Db, orgId: string, agentId: string, field = 'widget_id'): Promise<void> {
  if (!(await agentExists(db, orgId, agentId))) throw fieldError(field, 'unknown_agent', `${field} names no agent of this organization`);
}

async function refuseWhileCampaign(db: Db, number: PhoneNumberRecord, action: string): Promise<void> {
  if (number.widget_id && await agentHasActiveCampaign(db, number.widget_id)) {
    throw new AppError(409, 'active_campaign', `the number's agent has an active campaign: pause or cancel it before you ${action} the number`);
  }
}

/**
 * Why `phoneNumber` cannot be added to the organization, or null: it already holds it (409 `phone_number_exists`), or
 * another organization does (409 `phone_number_unavailable`: a call to it would reach one of the two agents, perhaps the
 * other organization's), but for the carrier's shared test numbers. Holds the number's lock until the transaction ends,
 * so that two organizations adding it at once cannot both pass.
 */
async function refusal(tx: Db, carrier: Carrier, orgId: string, phoneNumber: string): Promise<AppError | null> {
  await lockNumber(tx, phoneNumber);
  const holders = await numberHolders(tx, orgId, phoneNumber);
  if (holders.here) return new AppError(409, 'phone_number_exists', `this organization already holds ${phoneNumber}`);
  if (holders.elsewhere && !carrier.isSharedTestNumber(phoneNumber)) {
    return new AppError(409, 'phone_number_unavailable', `${phoneNumber} is held by another account of this service`);
  }
  return null;
}

function countryOf(phoneNumber: string): string {
  return phoneLibMin().parsePhoneNumberFromString(phoneNumber)?.country ?? 'US';
}

/** Buys a number for an agent: the first month is charged (402 otherwise), webhooks wired, billing scheduled. */
export async function buyPhoneNumber(deps: TelephonyDeps, orgId: string, input: PhoneNumberBuy): Promise<PhoneNumber> {
  return deps.sql.begin(async (tx) => {
    const agent = await findAgent(tx, orgId, input.widget_id, { forUpdate: true });
    if (!agent) throw fieldError('widget_id', 'unknown_agent', 'widget_id names no agent of this organization');
    if (!input.force && (await activeNumbersOfAgent(tx, agent.id)).length > 0) {
      throw new AppError(409, 'agent_has_active_number', 'this agent already has an active number; send force: true to buy another');
    }
    const type: NumberType = input.type ?? 'local';
    let phoneNumber = input.phone_number;
    let country = input.country ?? (phoneNumber ? countryOf(phoneNumber) : 'US');
    if (!phoneNumber) {
      const candidates = await deps.carrier.search({ country, type, area_code: input.area_code }).catch(carrierError);
      // In the carrier's order: two purchases at once lock their candidates in the same order, and the later one takes the next.
      for (const c of candidates) {
        if (!(await refusal(tx, deps.carrier, orgId, c.phone_number))) { phoneNumber = c.phone_number; country = c.iso_country; break; }
      }
      if (!phoneNumber) throw fieldError('area_code', 'no_numbers_available', 'the carrier has no number available for this country, type and area code');
    } else {
      const refused = await refusal(tx, deps.carrier, orgId, phoneNumber);
      if (refused) throw refused;
    }
    const cost = MONTHLY_COST_CENTS[type];
    await lockCredits(tx, orgId);
    await ensureStartingCredits(tx, orgId, deps.config.AMS_STARTING_CREDITS);
    const balance = await creditBalance(tx, orgId);
    if (balance <= 0 || balance < cost) throw insufficientCredits(balance, cost);

    const provisioned = await deps.carrier.buy(phoneNumber, numberWebhooks(deps.config, { sms: true })).catch(carrierError);
    try {
      const number = await insertPhoneNumber(tx, {
        orgId, agentId: agent.id, phoneNumber, carrierSid: provisioned.sid, carrier: deps.carrier.name, source: 'purchased',
        smsEnabled: provisioned.smsConfigured, numberType: type, isoCountry: country, monthlyCostCents: cost,
      });
      await chargeCredits(tx, deps.config, orgId, { amountCents: cost, reason: 'phone_number_purchase', reference: purchaseReference(number), mustCover: true });
      await startNumberBilling(deps, number);
      return toPhoneNumber(number);
    } catch (err) {
      // Nothing of ours is kept: neither is the number at the carrier.
      await deps.carrier.release({ sid: provisioned.sid, phoneNumber }).catch((e: unknown) => deps.log.error({ err: e, phone_number: phoneNumber }, 'could not release a number whose purchase failed'));
      throw err;
    }
  });
}

/** Adds a number the organization owns elsewhere (admin-imported: never released here, not billed). */
export async function importPhoneNumber(deps: TelephonyDeps, orgId: string, input: { phone_number: string; widget_id?: string | undefined }): Promise<PhoneNumber> {
  return deps.sql.begin(async (tx) => {
    if (input.widget_id) await requireAgent(tx, orgId, input.widget_id);
    const refused = await refusal(tx, deps.carrier, orgId, input.phone_number);
    if (refused) throw refused;
    const provisioned = await deps.carrier.adopt(input.phone_number, numberWebhooks(deps.config, { sms: true })).catch(carrierError);
    const number = await insertPhoneNumber(tx, {
      orgId, agentId: input.widget_id ?? null, phoneNumber: input.phone_number, carrierSid: provisioned.sid, carrier: deps.carrier.name,
      source: 'imported', smsEnabled: provisioned.smsConfigured, numberType: 'local', isoCountry: countryOf(input.phone_number), monthlyCostCents: 0,
    });
    return toPhoneNumber(number);
  });
}

async function lockedNumber(tx: Db, orgId: string, id: string): Promise<PhoneNumberRecord> {
  const number = await findPhoneNumber(tx, orgId, id, { forUpdate: true });
  if (!number) throw notFound('phone number');
  return number;
}

function refuseReleased(number: PhoneNumberRecord): void {
  if (number.status === 'released') throw new AppError(409, 'invalid_state', 'this number has been released');
}

/** A PATCH may not carry `widget_id`: 400 `use_assign_endpoint`, whatever its value and whether or not the number exists. */
export function refuseWidgetIdPatch(patch: PhoneNumberPatch): void {
  if (patch.widget_id !== undefined) {
    throw new AppError(400, 'use_assign_endpoint', 'widget_id cannot be changed by PATCH: use POST /phone-numbers/:id/assign (or /unassign)');
  }
}

/** PATCH: flags, name and voice mode. Turning SMS on or off reconfigures the carrier first (502 and nothing changed when it refuses). */
export async function patchPhoneNumber(deps: TelephonyDeps, orgId: string, id: string, patch: PhoneNumberPatch): Promise<PhoneNumber> {
  refuseWidgetIdPatch(patch);
  return deps.sql.begin(async (tx) => {
    const number = await lockedNumber(tx, orgId, id);
    const fields: Parameters<typeof updatePhoneNumber>[2] = {};
    for (const key of ['enabled', 'voice_enabled', 'sms_enabled', 'friendly_name', 'voice_mode'] as const) {
      if (patch[key] !== undefined) (fields as Record<string, unknown>)[key] = patch[key];
    }
    if (Object.keys(fields).length === 0) return toPhoneNumber(number);
    refuseReleased(number);
    if (patch.sms_enabled !== undefined && patch.sms_enabled !== number.sms_enabled) {
      await deps.carrier.configure({ sid: number.carrierSid ?? '', phoneNumber: number.phone_number }, numberWebhooks(deps.config, { sms: patch.sms_enabled }))
        .catch(carrierError);
    }
    return toPhoneNumber(await updatePhoneNumber(tx, id, fields));
  });
}

/** Assigns (or reassigns) the number to an agent and rewires its webhooks. */
export async function assignPhoneNumber(deps: TelephonyDeps, orgId: string, id: string, agentId: string): Promise<PhoneNumber> {
  return deps.sql.begin(async (tx) => {
    await requireAgent(tx, orgId, agentId);
    const number = await lockedNumber(tx, orgId, id);
    refuseReleased(number);
    if (number.widget_id !== agentId) await refuseWhileCampaign(tx, number, 'reassign');
    await deps.carrier.configure({ sid: number.carrierSid ?? '', phoneNumber: number.phone_number }, numberWebhooks(deps.config, { sms: number.sms_enabled }))
      .catch(carrierError);
    return toPhoneNumber(await updatePhoneNumber(tx, id, { agent_id: agentId }));
  });
}

/** Parks the number in the organization's pool (no agent answers it). */
export async function unassignPhoneNumber(deps: TelephonyDeps, orgId: string, id: string): Promise<PhoneNumber> {
  return deps.sql.begin(async (tx) => {
    const number = await lockedNumber(tx, orgId, id);
    refuseReleased(number);
    await refuseWhileCampaign(tx, number, 'unassign');
    return toPhoneNumber(await updatePhoneNumber(tx, id, { agent_id: null }));
  });
}

/** Releases a purchased number to the carrier; its billing Schedule goes. A number already released stays so (204). */
export async function releasePhoneNumber(deps: TelephonyDeps, orgId: string, id: string): Promise<void> {
  const released = await deps.sql.begin(async (tx) => {
    const number = await lockedNumber(tx, orgId, id);
    if (number.status === 'released') return null;
    if (number.source === 'imported') {
      throw new AppError(409, 'admin_imported_number', 'an imported number cannot be released here: release it where it was bought, or unassign it');
    }
    await refuseWhileCampaign(tx, number, 'release');
    await deps.carrier.release({ sid: number.carrierSid ?? '', phoneNumber: number.phone_number }).catch(carrierError);
    return markNumberReleased(tx, id);
  });
  // The billing run also skips a released number, so a Schedule that survives this charges nothing.
  if (released) await stopNumberBilling(deps.temporal, released.id).catch((err: unknown) => deps.log.warn({ err, phone_number_id: id }, 'could not delete the billing Schedule'));
}

/**
 * An agent's delete (src/telephony/agent-hooks.ts): its purchased numbers are released, its imported ones
 * parked. The carrier and the Schedules are told after commit (best effort, logged).
 */
export async function detachAgentNumbers(tx: Db, agentId: string) {
  const released = await detachNumbersOfAgent(tx, agentId);
  if (released.length === 0) return undefined;
  return async (deps: FamilyDeps) => {
    const carrier = createCarrier(deps.config, deps.sql);
    for (const number of released) {
      await carrier.release({ sid: number.carrierSid ?? '', phoneNumber: number.phone_number })
        .catch((err: unknown) => deps.log.error({ err, phone_number_id: number.id }, 'could not release the number of a deleted agent at the carrier'));
      await stopNumberBilling(deps.temporal, number.id)
        .catch((err: unknown) => deps.log.warn({ err, phone_number_id: number.id }, 'could not delete the billing Schedule'));
    }
  };
}
