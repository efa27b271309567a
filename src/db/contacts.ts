import type postgres from 'postgres';
import { listPage, patchFields, type Db, type Fragment } from './index.ts';
import { newId } from '../ids.ts';
import { ContactPatchSchema, type Contact, type ContactCreate, type ContactPatch } from '../schemas/contacts.ts';

/**
 * Contacts: people matched across channels on a phone number, an email address or a web
 * fingerprint (the widget's visitor id). Phone and email are each unique in an organization;
 * a visitor id belongs to at most one contact (the latest match wins).
 *
 * Every write that decides which contact owns an identity takes a transaction-scoped advisory
 * lock per identity first (lockIdentities), so two conversations of the same new person, or a
 * conversation and a POST, never race into a unique violation (which would abort the caller's
 * transaction) or into two contacts.
 */

interface ContactRow {
  id: string; phone_e164: string | null; email_lower: string | null; first_name: string | null; last_name: string | null;
  visitor_ids: string[]; facts: Record<string, unknown>; do_not_call: boolean; conversation_count: number;
  first_seen_at: Date | null; last_seen_at: Date | null; created_at: Date; updated_at: Date;
}

const COLUMNS = ['id', 'phone_e164', 'email_lower', 'first_name', 'last_name', 'visitor_ids', 'facts', 'do_not_call',
  'conversation_count', 'first_seen_at', 'last_seen_at', 'created_at', 'updated_at'];

/** How many web fingerprints a contact keeps (the most recent). */
const MAX_VISITOR_IDS = 50;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toContact(row: ContactRow): Contact {
  return {
    id: row.id, phone_e164: row.phone_e164, email_lower: row.email_lower, first_name: row.first_name, last_name: row.last_name,
    visitor_ids: row.visitor_ids, facts: row.facts, do_not_call: row.do_not_call, conversation_count: row.conversation_count,
    first_seen_at: iso(row.first_seen_at), last_seen_at: iso(row.last_seen_at),
    created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
  };
}

/** A phone number as stored (E.164), from what a person or the runtime wrote: `+1 (415) 555-0123`; null when it is not one. */
export function normalizePhone(value: string | null | undefined): string | null {
  if (!value) return null;
  const compact = value.trim().replace(/[\s().-]/g, '').replace(/^00/, '+');
  return /^\+[1-9][0-9]{1,14}$/.test(compact) ? compact : null;
}

/** An email address as stored (trimmed, lower-case); null when it is not one. */
export function normalizeEmail(value: string | null | undefined): string | null {
  if (!value) return null;
  const email = value.trim().toLowerCase();
  return email.length <= 254 && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) ? email : null;
}

/** What identifies a person: any of a phone number, an email address and a web fingerprint. */
export interface ContactIdentity { phone?: string | null | undefined; email?: string | null | undefined; visitorId?: string | null | undefined }

function normalizeIdentity(identity: ContactIdentity): { phone: string | null; email: string | null; visitorId: string | null } {
  const visitorId = identity.visitorId?.trim() || null;
  return { phone: normalizePhone(identity.phone), email: normalizeEmail(identity.email), visitorId: visitorId && visitorId.length <= 200 ? visitorId : null };
}

/** Whether these identities name anyone once normalized (recordContactConversation does nothing for those that do not). */
export function namesSomeone(identity: ContactIdentity): boolean {
  const id = normalizeIdentity(identity);
  return Boolean(id.phone || id.email || id.visitorId);
}

/** Runs `fn` in the caller's transaction, or in a new one. */
function inTransaction<T>(db: Db, fn: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> {
  return 'savepoint' in db ? fn(db) : (db.begin(fn) as Promise<T>);
}

/** Serializes the writers of these identities in this organization until the transaction ends (sorted: no deadlock). */
async function lockIdentities(tx: Db, orgId: string, identity: { phone?: string | null; email?: string | null; visitorId?: string | null }): Promise<void> {
  const keys = [
    identity.phone && `phone:${identity.phone}`, identity.email && `email:${identity.email}`, identity.visitorId && `visitor:${identity.visitorId}`,
  ].filter((k): k is string => !!k).sort();
  for (const key of keys) await tx`select pg_advisory_xact_lock(hashtextextended(${`contact:${orgId}:${key}`}, 0))`;
}

/**
 * The contact a phone number, an email address or a known visitor id identifies (in that order of
 * precedence: a phone match wins over an email match); null when none does. A contact known only
 * by the visitor id does not match when it has another phone or email than the one given. Values
 * are normalized first (`+1 415-555-0123`, `Ada@Example.com`); one that is not a phone or an email
 * is ignored.
 */
export async function matchContact(db: Db, orgId: string, identity: ContactIdentity): Promise<Contact | null> {
  const row = await matchRow(db, orgId, normalizeIdentity(identity));
  return row ? toContact(row) : null;
}

async function matchRow(db: Db, orgId: string, id: { phone: string | null; email: string | null; visitorId: string | null }): Promise<ContactRow | null> {
  if (!id.phone && !id.email && !id.visitorId) return null;
  const phone = id.phone ? db`phone_e164 = ${id.phone}` : db`false`;
  const email = id.email ? db`email_lower = ${id.email}` : db`false`;
  const visitor = id.visitorId ? db`visitor_ids @> array[${id.visitorId}]::text[]` : db`false`;
  const [row] = await db<ContactRow[]>`select ${db(COLUMNS)} from contacts
    where org_id = ${orgId} and (${phone} or ${email} or ${visitor})
    order by (${phone}) is true desc, (${email}) is true desc, last_seen_at desc nulls last, created_at desc limit 1`;
  if (!row) return null;
  // Found by the fingerprint alone, but with another phone or email than the one given: another
  // person on the same browser. Not a match (their facts are not this person's).
  const byFingerprintOnly = !(id.phone && row.phone_e164 === id.phone) && !(id.email && row.email_lower === id.email);
  const otherPerson = (id.phone && row.phone_e164 && row.phone_e164 !== id.phone) || (id.email && row.email_lower && row.email_lower !== id.email);
  return byFingerprintOnly && otherPerson ? null : row;
}

/**
 * Records that a conversation was held with the person these identities name: finds the contact
 * (matchContact) or creates one (only when a phone or an email is known), fills in a phone or
 * email it lacked (unless another contact has it), moves the visitor id to it, links the
 * conversation (`conversations.contact_id`) and, the first time that conversation is linked to
 * it, counts it and widens first/last seen to `at`. Idempotent for one conversation. Null when no
 * contact could be found or made. Runs in `db`'s transaction when it is one.
 */
export async function recordContactConversation(db: Db, orgId: string, input: ContactIdentity & {
  conversationId: string; at: Date | string;
  /**
   * The contact matchContact answered for these same identities just before (a campaign call's callee, read for its
   * opening line). When it holds the one identity given (a phone, or an email), nothing about identities is left to
   * write: the conversation is linked to it at once, without the lock and the match again (issue 48: 4 statements to 1).
   */
  matched?: Contact | null;
}): Promise<Contact | null> {
  const id = normalizeIdentity(input);
  const at = new Date(input.at);
  if (!id.phone && !id.email && !id.visitorId) return null;
  const known = input.matched;
  // One identity, and the contact found holds it: no contact to create, no identity to fill in or move, so the lock,
  // which orders the writers of identities, would order nothing. Linking now gives what the locked path gives
  // had it run when the match was read (a contact edited since is as if edited just after).
  if (known && !id.visitorId && Boolean(id.phone) !== Boolean(id.email)
    && (id.phone ? known.phone_e164 === id.phone : known.email_lower === id.email)) {
    return toContact(await linkConversation(db, orgId, known.id, input.conversationId, at));
  }
  // One identity and no visitor id (a caller's or texter's number, a mail's sender): no identity to fill in or move, so
  // matching or creating the contact, counting and linking is one statement (issue 48: 4 statements to 1).
  if (!id.visitorId && Boolean(id.phone) !== Boolean(id.email)) {
    return toContact(await upsertAndLink(db, orgId, id.phone ? { phone: id.phone } : { email: id.email! }, input.conversationId, at));
  }
  return inTransaction(db, async (tx) => {
    await lockIdentities(tx, orgId, id);
    const matched = await matchRow(tx, orgId, id);
    if (!matched && !id.phone && !id.email) return null;
    const contactId = matched ? matched.id : newId();
    // Only what it lacks (fillIdentity writes nothing to a contact that has a phone, or an email, already).
    if (matched) await fillIdentity(tx, orgId, contactId, { phone: matched.phone_e164 ? null : id.phone, email: matched.email_lower ? null : id.email });
    else await tx`insert into contacts (id, org_id, phone_e164, email_lower) values (${contactId}, ${orgId}, ${id.phone}, ${id.email})`;
    if (id.visitorId) await adoptVisitorId(tx, orgId, contactId, id.visitorId);
    return toContact(await linkConversation(tx, orgId, contactId, input.conversationId, at));
  });
}

/**
 * What the locked path does for one phone or one email, in one statement: the identity's lock, then the contact that
 * holds it (the unique index's conflict finds it, committed after this statement's snapshot too, as the locked path's
 * second read would) or a new one holding it, counted and linked as linkConversation does. The count is written by the
 * upsert itself (a row is updated once per statement), and only when the link changes, as linkConversation's.
 */
async function upsertAndLink(db: Db, orgId: string, identity: { phone: string } | { email: string }, conversationId: string, at: Date): Promise<ContactRow> {
  const phone = 'phone' in identity ? identity.phone : null;
  const email = 'email' in identity ? identity.email : null;
  const key = phone ? `phone:${phone}` : `email:${email}`;
  const target = phone ? db`(org_id, phone_e164)` : db`(org_id, email_lower)`;
  // `relink`: the conversation exists and is not linked to this contact yet (a new contact is never linked yet).
  const relink = db`exists (select 1 from previous where previous.contact_id is distinct from k.id)`;
  const [row] = await db<ContactRow[]>`with
    locked as (select pg_advisory_xact_lock(hashtextextended(${`contact:${orgId}:${key}`}, 0))),
    previous as (select contact_id from conversations where id = ${conversationId} and org_id = ${orgId} for update),
    contact as (
      insert into contacts as k (id, org_id, phone_e164, email_lower, conversation_count, first_seen_at, last_seen_at)
      select ${newId()}::uuid, ${orgId}::uuid, ${phone}::text, ${email}::text, counts.n,
        case when counts.n = 1 then ${at}::timestamptz end, case when counts.n = 1 then ${at}::timestamptz end
      from locked, (select case when exists (select 1 from previous) then 1 else 0 end as n) counts
      -- Found: counted when the link changes, else written back as it was (so that it is returned).
      on conflict ${target} do update set
        conversation_count = k.conversation_count + case when ${relink} then 1 else 0 end,
        first_seen_at = case when ${relink} then least(coalesce(k.first_seen_at, ${at}), ${at}) else k.first_seen_at end,
        last_seen_at = case when ${relink} then greatest(coalesce(k.last_seen_at, ${at}), ${at}) else k.last_seen_at end,
        updated_at = case when ${relink} then now() else k.updated_at end
      returning ${db(COLUMNS)}),
    relinked as (
      update conversations c set contact_id = (select id from contact) from previous
      where c.id = ${conversationId} and previous.contact_id is distinct from (select id from contact)
      returning previous.contact_id as was),
    -- Relinked to another person: the first one no longer has it.
    uncounted as (
      update contacts set conversation_count = greatest(conversation_count - 1, 0), updated_at = now()
      where id = (select was from relinked) and id <> (select id from contact))
    select * from contact`;
  return row!;
}

/** Gives a matched contact the phone or email it lacked, when no other contact of the organization has it. */
async function fillIdentity(tx: Db, orgId: string, contactId: string, id: { phone: string | null; email: string | null }): Promise<void> {
  if (id.phone) {
    await tx`update contacts set phone_e164 = ${id.phone}, updated_at = now() where id = ${contactId} and phone_e164 is null
      and not exists (select 1 from contacts where org_id = ${orgId} and phone_e164 = ${id.phone})`;
  }
  if (id.email) {
    await tx`update contacts set email_lower = ${id.email}, updated_at = now() where id = ${contactId} and email_lower is null
      and not exists (select 1 from contacts where org_id = ${orgId} and email_lower = ${id.email})`;
  }
}

/** The visitor id now names this contact only; it keeps the MAX_VISITOR_IDS most recent. */
async function adoptVisitorId(tx: Db, orgId: string, contactId: string, visitorId: string): Promise<void> {
  await tx`update contacts set visitor_ids = array_remove(visitor_ids, ${visitorId}), updated_at = now()
    where org_id = ${orgId} and visitor_ids @> array[${visitorId}]::text[] and id <> ${contactId}`;
  await tx`update contacts set visitor_ids = (visitor_ids || ${visitorId}::text)[greatest(1, cardinality(visitor_ids) + 2 - ${MAX_VISITOR_IDS}):],
      updated_at = now()
    where id = ${contactId} and not (visitor_ids @> array[${visitorId}]::text[])`;
}

/**
 * Links the conversation to the contact and counts it (once), uncounting it from a contact it was
 * linked to before; answers the contact's row as it now reads. One statement: the conversation's row
 * is locked by the first step, and the contact rows are updated only when the link changed.
 */
async function linkConversation(tx: Db, orgId: string, contactId: string, conversationId: string, at: Date): Promise<ContactRow> {
  const [row] = await tx<ContactRow[]>`with
    previous as (select contact_id from conversations where id = ${conversationId} and org_id = ${orgId} for update),
    relinked as (
      update conversations c set contact_id = ${contactId} from previous
      where c.id = ${conversationId} and previous.contact_id is distinct from ${contactId}::uuid
      returning previous.contact_id as was),
    counted as (
      update contacts set conversation_count = conversation_count + 1,
        first_seen_at = least(coalesce(first_seen_at, ${at}), ${at}), last_seen_at = greatest(coalesce(last_seen_at, ${at}), ${at}),
        updated_at = now()
      where id = ${contactId} and exists (select 1 from relinked)
      returning ${tx(COLUMNS)}),
    -- Relinked to another person: the first one no longer has it.
    uncounted as (
      update contacts set conversation_count = greatest(conversation_count - 1, 0), updated_at = now()
      where id = (select was from relinked) and id <> ${contactId})
    select ${tx(COLUMNS)} from counted
    union all
    select ${tx(COLUMNS)} from contacts where id = ${contactId} and not exists (select 1 from counted)`;
  return row!;
}

/**
 * Merges data (what a conversation's evaluation extracted) into a contact's facts: new keys are
 * added, existing ones take the new value; null and undefined values are skipped (unknown is not
 * a value). Null when the contact does not exist.
 */
export async function mergeContactFacts(db: Db, contactId: string, facts: Record<string, unknown>): Promise<Contact | null> {
  const known = Object.fromEntries(Object.entries(facts).filter(([, v]) => v !== null && v !== undefined));
  const [row] = Object.keys(known).length
    ? await db<ContactRow[]>`update contacts set facts = facts || ${db.json(known as never)}, updated_at = now()
        where id = ${contactId} returning ${db(COLUMNS)}`
    : await db<ContactRow[]>`select ${db(COLUMNS)} from contacts where id = ${contactId}`;
  return row ? toContact(row) : null;
}

/**
 * What is known of the person these identities name, for the runtime's cross-channel memory: the
 * contact's facts, and its `first_name` and `last_name` when set. Empty when no contact matches.
 */
export async function contactFacts(db: Db, orgId: string, identity: ContactIdentity): Promise<Record<string, unknown>> {
  const contact = await matchContact(db, orgId, identity);
  if (!contact) return {};
  return {
    ...contact.facts,
    ...(contact.first_name ? { first_name: contact.first_name } : {}),
    ...(contact.last_name ? { last_name: contact.last_name } : {}),
  };
}

// ---- the contacts API

/** Why a write was refused: the phone or email belongs to another contact (its id), or the contact would have neither. */
export type ContactRefusal = { conflict: { contactId: string; field: 'phone_e164' | 'email_lower' } } | 'no_identity';

async function conflictingContact(tx: Db, orgId: string, exceptId: string | null, id: { phone?: string | null; email?: string | null }):
  Promise<ContactRefusal | null> {
  for (const [field, column, value] of [['phone_e164', 'phone_e164', id.phone], ['email_lower', 'email_lower', id.email]] as const) {
    if (!value) continue;
    const [other] = await tx<{ id: string }[]>`select id from contacts
      where org_id = ${orgId} and ${tx(column)} = ${value} and id is distinct from ${exceptId}`;
    if (other) return { conflict: { contactId: other.id, field } };
  }
  return null;
}

/** Creates a contact; refused when neither phone nor email is given or another contact has one of them. Run it in a transaction. */
export async function insertContact(tx: Db, orgId: string, input: ContactCreate): Promise<Contact | ContactRefusal> {
  const phone = input.phone_e164 ?? null;
  const email = input.email_lower ? input.email_lower.toLowerCase() : null;
  if (!phone && !email) return 'no_identity';
  await lockIdentities(tx, orgId, { phone, email });
  const refusal = await conflictingContact(tx, orgId, null, { phone, email });
  if (refusal) return refusal;
  const [row] = await tx<ContactRow[]>`
    insert into contacts (id, org_id, phone_e164, email_lower, first_name, last_name, facts, do_not_call)
    values (${newId()}, ${orgId}, ${phone}, ${email}, ${input.first_name ?? null}, ${input.last_name ?? null},
      ${tx.json((input.facts ?? {}) as never)}, ${input.do_not_call ?? false})
    returning ${tx(COLUMNS)}`;
  return toContact(row!);
}

export async function findContact(db: Db, orgId: string, id: string): Promise<Contact | null> {
  const [row] = await db<ContactRow[]>`select ${db(COLUMNS)} from contacts where id = ${id} and org_id = ${orgId}`;
  return row ? toContact(row) : null;
}

/** Who a placed call reaches: the contact it was made for, else the one its number matches (as matchContact would). */
export type CalleeLookup = { contactId: string } | { phone: string };

/**
 * The callee's contact as a column (json, null when none) of a statement that reads something else beside it (issue 48:
 * an answered campaign call's opening reads it with its agent, one statement for two): findContact's row for a contact id,
 * matchContact's for one phone number (the one contact of the organization holding it; none for a value that is not a
 * phone number). Read back with `calleeContactOf`.
 */
export function calleeContactColumn(db: Db, orgId: string, callee: CalleeLookup): Fragment {
  const phone = 'phone' in callee ? normalizePhone(callee.phone) : null;
  if (!('contactId' in callee) && !phone) return db`null::jsonb`;
  const which = 'contactId' in callee ? db`id = ${callee.contactId}` : db`phone_e164 = ${phone}`;
  return db`(select to_jsonb(k) from (select ${db(COLUMNS)} from contacts where org_id = ${orgId} and ${which} limit 1) k)`;
}

type ContactJson = Omit<ContactRow, 'first_seen_at' | 'last_seen_at' | 'created_at' | 'updated_at'>
  & { first_seen_at: string | null; last_seen_at: string | null; created_at: string; updated_at: string };

/** The contact a `calleeContactColumn` read (its times as json strings), as findContact or matchContact give it. */
export function calleeContactOf(json: ContactJson | null): Contact | null {
  if (!json) return null;
  const at = (value: string | null) => (value === null ? null : new Date(value));
  return toContact({ ...json, first_seen_at: at(json.first_seen_at), last_seen_at: at(json.last_seen_at), created_at: new Date(json.created_at), updated_at: new Date(json.updated_at) });
}

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * A page of contacts, newest first. `search` matches part of the first or last name, phone or
 * email in any case (a trigram index serves it); a search that reads like a phone number also
 * matches it written without its spaces, dashes and brackets.
 */
export async function listContacts(db: Db, orgId: string, q: { search?: string | undefined; limit: number; offset: number }):
  Promise<{ data: Contact[]; total: number }> {
  const search = q.search?.trim().toLowerCase();
  let filter = db``;
  if (search) {
    const digits = /^[+\d\s().-]+$/.test(search) ? search.replace(/[^+\d]/g, '') : '';
    const asPhone = digits && digits !== search ? db`or search_text like ${`%${escapeLike(digits)}%`}` : db``;
    filter = db`and (search_text like ${`%${escapeLike(search)}%`} ${asPhone})`;
  }
  return listPage(db, {
    ...q, columns: db(COLUMNS), from: db`from contacts where org_id = ${orgId} ${filter}`, order: db`created_at desc, id desc`,
  }, toContact);
}

/**
 * Applies the fields present in `patch` (null clears; `facts` merges key by key, a null value
 * removing the key). Refused when the phone or email is another contact's, or when the contact
 * would keep neither. Null when absent. Run it in a transaction.
 */
export async function updateContact(tx: Db, orgId: string, id: string, patch: ContactPatch): Promise<Contact | ContactRefusal | null> {
  const [current] = await tx<ContactRow[]>`select ${tx(COLUMNS)} from contacts where id = ${id} and org_id = ${orgId} for update`;
  if (!current) return null;
  const fields = patchFields(ContactPatchSchema, patch, ['email_lower', 'facts']);
  if (patch.email_lower !== undefined) fields.email_lower = patch.email_lower === null ? null : patch.email_lower.toLowerCase();
  const phone = 'phone_e164' in fields ? (fields.phone_e164 as string | null) : current.phone_e164;
  const email = 'email_lower' in fields ? (fields.email_lower as string | null) : current.email_lower;
  if (!phone && !email) return 'no_identity';
  const changed = { phone: phone !== current.phone_e164 ? phone : null, email: email !== current.email_lower ? email : null };
  await lockIdentities(tx, orgId, changed);
  const refusal = await conflictingContact(tx, orgId, id, changed);
  if (refusal) return refusal;

  const facts = patch.facts ?? {};
  const set = Object.fromEntries(Object.entries(facts).filter(([, v]) => v !== null));
  const removed = Object.keys(facts).filter((k) => facts[k] === null);
  const factsChange = patch.facts === undefined ? tx`` : tx`, facts = (facts || ${tx.json(set as never)}) - ${removed}::text[]`;
  if (Object.keys(fields).length === 0 && patch.facts === undefined) return toContact(current);
  // `set ${tx(fields)}` must be written out: the helper reads the `set` before it to know its form.
  const [row] = Object.keys(fields).length
    ? await tx<ContactRow[]>`update contacts set ${tx(fields)}, updated_at = now() ${factsChange} where id = ${id} returning ${tx(COLUMNS)}`
    : await tx<ContactRow[]>`update contacts set updated_at = now() ${factsChange} where id = ${id} returning ${tx(COLUMNS)}`;
  return toContact(row!);
}

/** Deletes a contact; its conversations stay, unlinked (ON DELETE SET NULL). False when absent. */
export async function deleteContact(db: Db, orgId: string, id: string): Promise<boolean> {
  const rows = await db`delete from contacts where id = ${id} and org_id = ${orgId} returning id`;
  return rows.length > 0;
}

/** An organization's contacts, newest first, in batches through a cursor (an export streams them). */
export async function* streamContacts(db: Db, orgId: string, batch = 500): AsyncGenerator<Contact[]> {
  for await (const rows of db<ContactRow[]>`select ${db(COLUMNS)} from contacts where org_id = ${orgId} order by created_at desc, id desc`.cursor(batch)) {
    yield rows.map(toContact);
  }
}

/** Which contacts hold these phones and emails now (a CSV import's dry run tells creates from updates). */
export async function contactsByIdentity(db: Db, orgId: string, phones: string[], emails: string[]): Promise<{ id: string; phone_e164: string | null; email_lower: string | null }[]> {
  if (!phones.length && !emails.length) return [];
  return db<{ id: string; phone_e164: string | null; email_lower: string | null }[]>`select id, phone_e164, email_lower from contacts
    where org_id = ${orgId} and (phone_e164 = any(${phones}::text[]) or email_lower = any(${emails}::text[]))`;
}

/**
 * One imported row: the contact holding its phone (else its email) is updated (names and do_not_call where the
 * row gives them, facts merged key by key), or a new one is made. 'conflict' when the phone and the email belong
 * to two different contacts. Run it in a transaction.
 */
export async function upsertImportedContact(tx: Db, orgId: string, row: {
  phone: string | null; email: string | null; first_name: string | null; last_name: string | null; do_not_call: boolean | null; facts: Record<string, string>;
}): Promise<'created' | 'updated' | 'conflict'> {
  await lockIdentities(tx, orgId, { phone: row.phone, email: row.email });
  const holders = await contactsByIdentity(tx, orgId, row.phone ? [row.phone] : [], row.email ? [row.email] : []);
  if (holders.length > 1) return 'conflict';
  const [holder] = holders;
  if (!holder) {
    await tx`insert into contacts (id, org_id, phone_e164, email_lower, first_name, last_name, facts, do_not_call)
      values (${newId()}, ${orgId}, ${row.phone}, ${row.email}, ${row.first_name}, ${row.last_name}, ${tx.json(row.facts as never)}, ${row.do_not_call ?? false})`;
    return 'created';
  }
  await tx`update contacts set phone_e164 = coalesce(phone_e164, ${row.phone}), email_lower = coalesce(email_lower, ${row.email}),
      first_name = coalesce(${row.first_name}, first_name), last_name = coalesce(${row.last_name}, last_name),
      do_not_call = coalesce(${row.do_not_call}, do_not_call), facts = facts || ${tx.json(row.facts as never)}, updated_at = now()
    where id = ${holder.id}`;
  return 'updated';
}

/**
 * Merges contact `sourceId` into `targetId` and deletes the source: its conversations, web fingerprints and
 * campaign enrolments move to the target; the target keeps its own names, phone and email, taking the source's
 * where it has none; facts are merged with the target's winning; do_not_call holds if either had it; the counts
 * and first and last seen times cover both. Null when either is not the organization's. Run it in a transaction.
 */
export async function mergeContacts(tx: Db, orgId: string, targetId: string, sourceId: string): Promise<Contact | null> {
  const pair = await tx<ContactRow[]>`select ${tx(COLUMNS)} from contacts where org_id = ${orgId} and id in (${targetId}, ${sourceId})
    order by id for update`;
  const target = pair.find((c) => c.id === targetId);
  const source = pair.find((c) => c.id === sourceId);
  if (!target || !source) return null;
  // What points at the source moves first (its delete would unlink conversations), then the source goes, freeing its phone and email.
  await tx`update conversations set contact_id = ${targetId} where org_id = ${orgId} and contact_id = ${sourceId}`;
  await tx`update campaign_calls set contact_id = ${targetId} where contact_id = ${sourceId}`;
  await tx`update campaigns set contact_ids = array(select distinct unnest(array_replace(contact_ids, ${sourceId}::uuid, ${targetId}::uuid)))
    where org_id = ${orgId} and contact_ids @> array[${sourceId}::uuid]`;
  await tx`delete from contacts where id = ${sourceId}`;
  const visitorIds = [...new Set([...target.visitor_ids, ...source.visitor_ids])].slice(-MAX_VISITOR_IDS);
  const [row] = await tx<ContactRow[]>`update contacts set
      phone_e164 = coalesce(phone_e164, ${source.phone_e164}), email_lower = coalesce(email_lower, ${source.email_lower}),
      first_name = coalesce(first_name, ${source.first_name}), last_name = coalesce(last_name, ${source.last_name}),
      visitor_ids = ${visitorIds}::text[], facts = ${tx.json(source.facts as never)}::jsonb || facts,
      do_not_call = do_not_call or ${source.do_not_call},
      conversation_count = (select count(*)::int from conversations where org_id = ${orgId} and contact_id = ${targetId}),
      first_seen_at = (select min(x) from unnest(array[first_seen_at, ${source.first_seen_at}::timestamptz]) x),
      last_seen_at = (select max(x) from unnest(array[last_seen_at, ${source.last_seen_at}::timestamptz]) x),
      updated_at = now()
    where id = ${targetId} returning ${tx(COLUMNS)}`;
  return toContact(row!);
}
