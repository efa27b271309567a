import type { Db } from './index.ts';
import { newId } from '../ids.ts';
import type { PhoneNumber } from '../schemas/phone-numbers.ts';

interface NumberRow {
  id: string; phone_number: string; agent_id: string | null; status: PhoneNumber['status']; source: PhoneNumber['source'];
  enabled: boolean; voice_enabled: boolean; sms_enabled: boolean; friendly_name: string | null; number_type: PhoneNumber['number_type'];
  voice_mode: PhoneNumber['voice_mode']; iso_country: string; monthly_cost_cents: number; created_at: Date; updated_at: Date; released_at: Date | null;
  org_id: string; carrier_sid: string | null; carrier: string;
}

const COLUMNS = ['id', 'org_id', 'phone_number', 'agent_id', 'status', 'source', 'enabled', 'voice_enabled', 'sms_enabled', 'friendly_name',
  'voice_mode', 'number_type', 'iso_country', 'monthly_cost_cents', 'created_at', 'updated_at', 'released_at', 'carrier_sid', 'carrier'];

/** A number as stored: its API shape plus what only the service sees. */
export interface PhoneNumberRecord extends PhoneNumber { orgId: string; carrierSid: string | null; carrier: string; createdAt: Date }

function toRecord(r: NumberRow): PhoneNumberRecord {
  return {
    id: r.id, phone_number: r.phone_number, widget_id: r.agent_id, status: r.status, source: r.source, enabled: r.enabled,
    voice_enabled: r.voice_enabled, sms_enabled: r.sms_enabled, friendly_name: r.friendly_name, voice_mode: r.voice_mode, number_type: r.number_type,
    iso_country: r.iso_country, monthly_cost_cents: r.monthly_cost_cents, created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(), released_at: r.released_at ? r.released_at.toISOString() : null,
    orgId: r.org_id, carrierSid: r.carrier_sid, carrier: r.carrier, createdAt: r.created_at,
  };
}

/** The API shape of a record (nothing the service keeps to itself). */
export function toPhoneNumber(r: PhoneNumberRecord): PhoneNumber {
  const { orgId: _o, carrierSid: _s, carrier: _c, createdAt: _d, ...number } = r;
  return number;
}

export async function insertPhoneNumber(db: Db, input: {
  id?: string; orgId: string; agentId: string | null; phoneNumber: string; carrierSid: string; carrier: string; source: 'purchased' | 'imported';
  smsEnabled: boolean; numberType: string; isoCountry: string; monthlyCostCents: number;
}): Promise<PhoneNumberRecord> {
  const [row] = await db<NumberRow[]>`insert into phone_numbers
    (id, org_id, agent_id, phone_number, carrier_sid, carrier, source, sms_enabled, number_type, iso_country, monthly_cost_cents)
    values (${input.id ?? newId()}, ${input.orgId}, ${input.agentId}, ${input.phoneNumber}, ${input.carrierSid}, ${input.carrier}, ${input.source},
      ${input.smsEnabled}, ${input.numberType}, ${input.isoCountry}, ${input.monthlyCostCents})
    returning ${db(COLUMNS)}`;
  return toRecord(row!);
}

export async function findPhoneNumber(db: Db, orgId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<PhoneNumberRecord | null> {
  const lock = opts.forUpdate ? db`for update` : db``;
  const [row] = await db<NumberRow[]>`select ${db(COLUMNS)} from phone_numbers where id = ${id} and org_id = ${orgId} ${lock}`;
  return row ? toRecord(row) : null;
}

/** A number by id alone (the billing activity). */
export async function findPhoneNumberById(db: Db, id: string): Promise<PhoneNumberRecord | null> {
  const [row] = await db<NumberRow[]>`select ${db(COLUMNS)} from phone_numbers where id = ${id}`;
  return row ? toRecord(row) : null;
}

/** The active number the carrier names in a webhook's `To` (the most recently wired one if several organizations imported it). */
export async function findActiveNumberByE164(db: Db, phoneNumber: string): Promise<PhoneNumberRecord | null> {
  const [row] = await db<NumberRow[]>`select ${db(COLUMNS)} from phone_numbers where phone_number = ${phoneNumber} and status = 'active'
    order by updated_at desc, id desc limit 1`;
  return row ? toRecord(row) : null;
}

/** Which of `phoneNumbers` are active in any organization. */
export async function activeAmong(db: Db, phoneNumbers: string[]): Promise<Set<string>> {
  const rows = await db<{ phone_number: string }[]>`select distinct phone_number from phone_numbers
    where phone_number = any(${phoneNumbers}::text[]) and status = 'active'`;
  return new Set(rows.map((r) => r.phone_number));
}

/**
 * Who holds `phoneNumber` active: the organization `orgId` (`here`), another one (`elsewhere`), both or neither. Call it
 * after `lockNumber` in the transaction that would add the number, so that two organizations adding it at once cannot
 * both pass.
 */
export async function numberHolders(db: Db, orgId: string, phoneNumber: string): Promise<{ here: boolean; elsewhere: boolean }> {
  const [row] = await db<{ here: boolean; elsewhere: boolean }[]>`select coalesce(bool_or(org_id = ${orgId}), false) as here,
    coalesce(bool_or(org_id <> ${orgId}), false) as elsewhere
    from phone_numbers where phone_number = ${phoneNumber} and status = 'active'`;
  return { here: row?.here === true, elsewhere: row?.elsewhere === true };
}

/** Serializes the transactions adding `phoneNumber`, in any organization, until they end. */
export async function lockNumber(db: Db, phoneNumber: string): Promise<void> {
  await db`select pg_advisory_xact_lock(hashtextextended(${`phone_number:${phoneNumber}`}, 0))`;
}

export async function activeNumbersOfAgent(db: Db, agentId: string): Promise<PhoneNumberRecord[]> {
  const rows = await db<NumberRow[]>`select ${db(COLUMNS)} from phone_numbers where agent_id = ${agentId} and status = 'active' order by created_at, id`;
  return rows.map(toRecord);
}

export async function listPhoneNumbers(db: Db, orgId: string, q: { widget_id?: string | undefined; include_released?: boolean | undefined; limit: number; offset: number }):
  Promise<{ data: PhoneNumber[]; total: number }> {
  const agent = q.widget_id ? db`and agent_id = ${q.widget_id}` : db``;
  const status = q.include_released ? db`` : db`and status = 'active'`;
  const from = db`from phone_numbers where org_id = ${orgId} ${agent} ${status}`;
  const [rows, [count]] = await Promise.all([
    db<NumberRow[]>`select ${db(COLUMNS)} ${from} order by created_at desc, id desc limit ${q.limit} offset ${q.offset}`,
    db<{ total: number }[]>`select count(*)::int as total ${from}`,
  ]);
  return { data: rows.map((r) => toPhoneNumber(toRecord(r))), total: count?.total ?? 0 };
}

export async function updatePhoneNumber(db: Db, id: string, fields: Partial<{
  agent_id: string | null; enabled: boolean; voice_enabled: boolean; sms_enabled: boolean; friendly_name: string | null;
  voice_mode: PhoneNumber['voice_mode'];
}>): Promise<PhoneNumberRecord> {
  if (Object.keys(fields).length === 0) {
    const [row] = await db<NumberRow[]>`select ${db(COLUMNS)} from phone_numbers where id = ${id}`;
    return toRecord(row!);
  }
  const [row] = await db<NumberRow[]>`update phone_numbers set ${db(fields)}, updated_at = now() where id = ${id} returning ${db(COLUMNS)}`;
  return toRecord(row!);
}

export async function markNumberReleased(db: Db, id: string): Promise<PhoneNumberRecord> {
  const [row] = await db<NumberRow[]>`update phone_numbers set status = 'released', released_at = now(), updated_at = now()
    where id = ${id} returning ${db(COLUMNS)}`;
  return toRecord(row!);
}

/**
 * An agent's delete: its purchased active numbers are marked released (answered, for the carrier
 * and their Schedules), its imported ones parked in the pool.
 */
export async function detachNumbersOfAgent(db: Db, agentId: string): Promise<PhoneNumberRecord[]> {
  await db`update phone_numbers set agent_id = null, updated_at = now() where agent_id = ${agentId} and source = 'imported'`;
  const rows = await db<NumberRow[]>`update phone_numbers set status = 'released', released_at = now(), updated_at = now()
    where agent_id = ${agentId} and source = 'purchased' and status = 'active' returning ${db(COLUMNS)}`;
  return rows.map(toRecord);
}
