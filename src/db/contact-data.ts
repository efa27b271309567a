import type { Db } from './index.ts';
import { deleteConversationsById } from './retention.ts';

/**
 * A person's data, wherever it lies (issue 47): what a contact's export reads and its erase
 * deletes, per place. Matching is by the contact itself (its id), its web fingerprints, its phone
 * number and its e-mail address, always inside its organization.
 */

export interface ContactKeys { orgId: string; id: string; phone: string | null; email: string | null; visitorIds: string[] }

const likeOf = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
/** Texts that name the person: its e-mail, phone and id. */
const needles = (c: ContactKeys) => [c.email, c.phone, c.id].filter((v): v is string => Boolean(v)).map(likeOf);

/** Locks the contact row for its erase; false when it is not the organization's. */
export async function lockContact(db: Db, orgId: string, id: string): Promise<boolean> {
  return (await db`select id from contacts where id = ${id} and org_id = ${orgId} for update`).length > 0;
}

/** The ids of the person's conversations: linked to it, or by its fingerprints, e-mail address or phone number. */
export async function conversationIdsOfContact(db: Db, c: ContactKeys): Promise<string[]> {
  const rows = await db<{ id: string }[]>`select id from conversations where org_id = ${c.orgId} and (
      contact_id = ${c.id}
      or visitor_id = any(${c.visitorIds}::text[])
      or (${c.email}::text is not null and email_address = ${c.email})
      or id in (select conversation_id from campaign_calls where org_id = ${c.orgId} and (contact_id = ${c.id} or to_number = ${c.phone}))
      or id in (select conversation_id from carrier_sessions where org_id = ${c.orgId} and caller = ${c.phone}))
    order by started_at, id`;
  return rows.map((r) => r.id);
}

/** The person's conversations in full: messages, captured data, tool calls, annotations (tags, labels, rating, notes). */
export async function exportConversations(db: Db, ids: string[]): Promise<readonly unknown[]> {
  if (!ids.length) return [];
  return db`select c.id, c.agent_id as widget_id, c.surface, c.status, c.started_at, c.ended_at, c.page_url, c.language,
      c.intent, c.outcome, c.captured_data, c.extracted_data, c.tool_calls, c.email_address, c.email_subject,
      json_build_object('tags', c.tags, 'labels', c.labels, 'summary_rating', c.summary_rating,
        'notes', (select coalesce(json_agg(json_build_object('author', n.author, 'text', n.text, 'created_at', n.created_at) order by n.created_at), '[]')
                  from conversation_notes n where n.conversation_id = c.id)) as annotations,
      (select coalesce(json_agg(json_build_object('id', m.id, 'role', m.role, 'text', m.text, 'ts', m.ts) order by m.ts, m.id), '[]')
        from conversation_messages m where m.conversation_id = c.id) as messages
    from conversations c where c.id = any(${ids}::uuid[]) order by c.started_at, c.id`;
}

/** Deletes the conversations with all that hangs on them; reports' rollups keep their counts. */
export async function eraseConversations(db: Db, ids: string[]): Promise<number> {
  return ids.length ? deleteConversationsById(db, ids) : 0;
}

/** The person's campaign calls: enrolled as the contact or dialed at its number. */
export async function exportCampaignCalls(db: Db, c: ContactKeys): Promise<readonly unknown[]> {
  return db`select id, campaign_id, to_number, status, ended_reason, started_at, ended_at, duration_seconds from campaign_calls
    where org_id = ${c.orgId} and (contact_id = ${c.id} or to_number = ${c.phone}) order by created_at`;
}

/** Deletes the calls and takes the person out of every campaign's enrolments (its number and its contact id). */
export async function eraseCampaignCalls(db: Db, c: ContactKeys): Promise<number> {
  const calls = (await db`delete from campaign_calls where org_id = ${c.orgId} and (contact_id = ${c.id} or to_number = ${c.phone})`).count;
  const enrolments = (await db`update campaigns set to_numbers = array_remove(to_numbers, ${c.phone}::text),
      contact_ids = array_remove(contact_ids, ${c.id}::uuid), updated_at = now()
    where org_id = ${c.orgId} and (${c.phone}::text = any(to_numbers) or contact_ids @> array[${c.id}]::uuid[])`).count;
  return calls + enrolments;
}

/** Calls and texts the carrier took from the person's number: the sessions and the carrier's log of them. */
export async function eraseCarrierRecords(db: Db, c: ContactKeys): Promise<number> {
  if (!c.phone) return 0;
  const sessions = (await db`delete from carrier_sessions where org_id = ${c.orgId} and caller = ${c.phone}`).count;
  const operations = (await db`delete from carrier_operations where target = ${c.phone}
    and phone_number in (select phone_number from phone_numbers where org_id = ${c.orgId})`).count;
  return sessions + operations;
}

/** Data-table rows of the organization's agents holding the person's e-mail address or phone number in a cell. */
export async function exportDataTableRows(db: Db, c: ContactKeys): Promise<readonly unknown[]> {
  const texts = [c.email, c.phone].filter((v): v is string => Boolean(v)).map(likeOf);
  if (!texts.length) return [];
  return db`select r.id, r.table_id, t.name as table_name, r.data, r.created_at from data_table_rows r
    join data_tables t on t.id = r.table_id join agents a on a.id = r.agent_id
    where a.org_id = ${c.orgId} and r.data::text ilike any(${texts}::text[]) order by r.created_at`;
}

export async function eraseDataTableRows(db: Db, c: ContactKeys): Promise<number> {
  const texts = [c.email, c.phone].filter((v): v is string => Boolean(v)).map(likeOf);
  if (!texts.length) return 0;
  return (await db`delete from data_table_rows r using agents a where a.id = r.agent_id and a.org_id = ${c.orgId}
    and r.data::text ilike any(${texts}::text[])`).count;
}

/** Webhook events whose payload names the person (with their deliveries and attempts). */
export async function exportWebhookEvents(db: Db, c: ContactKeys): Promise<readonly unknown[]> {
  return db`select id, type, created_at from events where org_id = ${c.orgId} and data::text ilike any(${needles(c)}::text[]) order by created_at`;
}

export async function eraseWebhookEvents(db: Db, c: ContactKeys): Promise<number> {
  return (await db`delete from events where org_id = ${c.orgId} and data::text ilike any(${needles(c)}::text[])`).count;
}

/** Report runs whose figures or mail list name the person (a raw report may list captured data). */
export async function eraseReportRunsNaming(db: Db, c: ContactKeys): Promise<number> {
  const texts = [c.email, c.phone].filter((v): v is string => Boolean(v)).map(likeOf);
  if (!texts.length) return 0;
  return (await db`delete from report_runs where org_id = ${c.orgId} and status <> 'generating'
    and (data::text ilike any(${texts}::text[]) or array_to_string(mailed_to, ' ') ilike any(${texts}::text[]))`).count;
}
