import { removeContactEnrolments } from '../db/campaigns.ts';
import { deleteContact, insertContact, updateContact, type ContactRefusal } from '../db/contacts.ts';
import type { FamilyDeps } from '../deps.ts';
import { AppError, fieldError, notFound } from '../errors.ts';
import type { Contact, ContactCreate, ContactPatch } from '../schemas/contacts.ts';

/**
 * The contacts family's use cases: a contact keeps a phone number or an email address (400), and no
 * two contacts of an organization share one (409 `contact_exists`, naming the one that has it). Each
 * write is one transaction; the repository returns its refusals, mapped to problems here.
 */
type Deps = Pick<FamilyDeps, 'sql'>;

const identityRequired = () =>
  fieldError('phone_e164', 'contact_identity_required', 'a contact needs phone_e164 or email_lower, so that it can be linked to conversations');

const isRefusal = (value: object | string): value is ContactRefusal => typeof value === 'string' || 'conflict' in value;

/** The problem for a refused write: 409 names the contact that already has the phone or email. */
function refused(reason: ContactRefusal): AppError {
  if (reason === 'no_identity') return identityRequired();
  const { contactId, field } = reason.conflict;
  return new AppError(409, 'contact_exists', `another contact of this organization already has this ${field === 'phone_e164' ? 'phone number' : 'email address'}`, {
    extra: { contact_id: contactId, field },
  });
}

/** Creates a contact with a phone number or an email address (stored lower-case). */
export async function createContact(deps: Deps, orgId: string, body: ContactCreate): Promise<Contact> {
  if (!body.phone_e164 && !body.email_lower) throw identityRequired();
  const contact = await deps.sql.begin((tx) => insertContact(tx, orgId, body));
  if (isRefusal(contact)) throw refused(contact);
  return contact;
}

/** Changes any subset of a contact's fields (`facts` merged key by key); conflicts as on create. */
export async function patchContact(deps: Deps, orgId: string, id: string, body: ContactPatch): Promise<Contact> {
  // Invalid whatever the contact holds: a request error, before looking the contact up.
  if (body.phone_e164 === null && body.email_lower === null) throw identityRequired();
  const contact = await deps.sql.begin((tx) => updateContact(tx, orgId, id, body));
  if (!contact) throw notFound('contact');
  if (isRefusal(contact)) throw refused(contact);
  return contact;
}

/** Deletes a contact and, in the same transaction, its enrolments in campaigns that have not dialed it (draft enrolments, queued calls). */
export async function removeContact(deps: Deps, orgId: string, id: string): Promise<void> {
  const deleted = await deps.sql.begin(async (tx) => {
    await removeContactEnrolments(tx, orgId, id);
    return deleteContact(tx, orgId, id);
  });
  if (!deleted) throw notFound('contact');
}
