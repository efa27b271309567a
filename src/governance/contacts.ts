import type { FamilyDeps } from '../deps.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import { notFound } from '../errors.ts';
import { deleteContact, findContact } from '../db/contacts.ts';
import { lockContact } from '../db/contact-data.ts';
import { insertConsent, listConsents } from '../db/governance.ts';
import { emitEvent } from '../events/emit.ts';
import type { Contact } from '../schemas/contacts.ts';
import type { ConsentCreate, ContactErasure } from '../schemas/governance.ts';
import { startWorkflow } from '../temporal/start.ts';
import { eraseContactHistoriesKind } from '../../workflows/erase-contact-histories.ts';
import { contactDataSteps, type ContactRef } from './plugins.ts';

/**
 * A person's data on request (issue 47): the export gathers, and the erase deletes, what every
 * family's `contact-data.ts` says it keeps of the contact, in one transaction for the erase.
 */
type Deps = Pick<FamilyDeps, 'sql' | 'temporal' | 'config' | 'log'> & { secrets: SecretBox };

/** What stays after an erase, on purpose. */
export const ERASE_REMAINS = [
  'usage records (billing counts: surface, duration, message count; no content and no link to the person)',
  'reports\' daily rollups (counts per day; a contact id only as a count of distinct contacts)',
  'the contact.erased event (the contact id and the time, nothing else)',
  'Temporal histories until the erase\'s workflow has deleted them (tool call arguments in them are sealed with SECRETS_KEY); runs already past the namespace retention are gone already',
  'stored Idempotency-Key replays, sealed with SECRETS_KEY, until they expire (24 hours)',
  'database backups and write-ahead logs, until they rotate out (the operator\'s retention)',
];

const refOf = (orgId: string, c: Contact): ContactRef => ({ orgId, id: c.id, phone: c.phone_e164, email: c.email_lower, visitorIds: c.visitor_ids });

async function contactOf(deps: Pick<Deps, 'sql'>, orgId: string, id: string): Promise<Contact> {
  const contact = await findContact(deps.sql, orgId, id);
  if (!contact) throw notFound('contact');
  return contact;
}

/** Everything tied to the contact, as one JSON document. */
export async function exportContactData(deps: Pick<Deps, 'sql' | 'config' | 'secrets'>, orgId: string, id: string) {
  const contact = await contactOf(deps, orgId, id);
  const ref = refOf(orgId, contact);
  const data: Record<string, unknown> = {};
  for (const [name, step] of Object.entries(await contactDataSteps())) {
    if (step.export) data[name] = await step.export(deps.sql, ref, deps);
  }
  return { contact, exported_at: new Date().toISOString(), data: JSON.parse(JSON.stringify(data)) as Record<string, unknown> };
}

/**
 * Deletes the contact and everything tied to it in one transaction, with `contact.erased` (its id
 * only); then a workflow deletes the Temporal histories of its conversations.
 */
export async function eraseContact(deps: Deps, orgId: string, id: string): Promise<ContactErasure> {
  const erasedAt = new Date().toISOString();
  const { deleted, histories } = await deps.sql.begin(async (tx) => {
    if (!await lockContact(tx, orgId, id)) throw notFound('contact');
    const ref = refOf(orgId, (await findContact(tx, orgId, id))!);
    const counts: Record<string, number> = {};
    const runs: string[] = [];
    for (const [name, step] of Object.entries(await contactDataSteps())) {
      const part = await step.erase(tx, ref, deps);
      counts[name] = part.deleted;
      runs.push(...(part.histories ?? []));
    }
    counts.contact = (await deleteContact(tx, orgId, id)) ? 1 : 0;
    await emitEvent(tx, { orgId, agentId: null, type: 'contact.erased', data: { contact: { id, erased_at: erasedAt } } });
    return { deleted: counts, histories: runs };
  });
  let workflowId: string | null = null;
  if (histories.length) {
    workflowId = eraseContactHistoriesKind.id(id);
    await startWorkflow(deps, eraseContactHistoriesKind, workflowId, [{ orgId, contactId: id, workflowIds: histories }], { orgId, summary: 'erase: delete the histories of an erased contact\'s conversations' });
  }
  deps.log.info({ org_id: orgId, contact_id: id, deleted }, 'contact erased');
  return { contact_id: id, erased_at: erasedAt, deleted, histories_workflow_id: workflowId, remains: ERASE_REMAINS };
}

export async function recordConsent(deps: Pick<Deps, 'sql'>, orgId: string, contactId: string, body: ConsentCreate) {
  await contactOf(deps, orgId, contactId);
  return insertConsent(deps.sql, orgId, contactId, body);
}

export async function contactConsents(deps: Pick<Deps, 'sql'>, orgId: string, contactId: string) {
  await contactOf(deps, orgId, contactId);
  const data = await listConsents(deps.sql, orgId, contactId);
  const latest = (kind: string) => data.find((c) => c.kind === kind)?.granted ?? null;
  return { data, current: { recording: latest('recording'), marketing: latest('marketing') } };
}
